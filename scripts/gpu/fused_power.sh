#!/usr/bin/env bash
# Power, SM clock and clock-event reasons of the fused operations against their matmul alone, on every
# GPU of a machine of W GPUs (binary carried in .carry/symmcoll-cuda): each run sustained for a few
# seconds (70B, M 16384, graph replays, timing only), nvidia-smi sampling every 20 ms
# (clocks.sm, power.draw, the active clock-event mask: bit 2 (0x4) = software power cap), each run's
# start and end stamped beside it:
#   1. the matmul alone, one process per GPU at once (gemm-bench, the same GPUs): cuBLASLt and our tile
#      GEMM at each op's per-rank shape (ag_mm: M x N x K; mm_rs: M x N x K/W);
#   2. the fused programs at world W (one process per GPU): ag_mm ce_tile_gemm, mm_rs tiles and
#      tiles_push, NCCL + cuBLASLt, one at a time;
# the whole list twice, in turn.
#   scripts/gpu/fused_power.sh <world> <out-dir>   -> run_<rep>_<name>_<m>.log, stamps_<m>.txt, smipow_<m>.csv
# experiments/fused_power.py reads the three into a table of each run's median clock and power over
# its samples, and the share of its samples at the software power cap.
source scripts/gpu/nvlink_env.sh
ITERS=${ITERS:-400}
source scripts/gpu/power_samples.sh
K=8192
fused() {  # name op algo
  local name=$1
  stamp start $name
  timeout 120 $BIN launch -n $W -- $BIN bench --backend cuda --op $2 --algo $3 --dtype bf16 --shape 70b --m 16384 \
    --mode graph --iters $ITERS --calls 5 --no-baselines --timing-only > "$DIR/run_${rep}_${name}_$M.log" 2>&1
  echo "# $name rc $?"
  stamp end $name
  grep -E "^$2 " "$DIR/run_${rep}_${name}_$M.log" | cut -c1-150
}
for rep in 1 2; do
  gemm_alone cublaslt_ag cublaslt 16384,3584,$K
  gemm_alone tile_ag tile 16384,3584,$K
  fused ag_mm_tiles ag_mm tiles
  gemm_alone cublaslt_rs cublaslt 16384,3584,$((K / W))
  gemm_alone tile_rs tile 16384,3584,$((K / W))
  fused mm_rs_tiles mm_rs tiles
  fused mm_rs_tiles_push mm_rs tiles_push
  sleep 1
done
