#!/usr/bin/env bash
# Power and SM clock of one GEMM alone, our tile GEMM's configurations against cuBLASLt, on GPU 0
# of a machine of W GPUs (binary carried in .carry/symmcoll-cuda): each configuration alone in a long
# run (70B M 16384: N 3584, K 8192, graph replays, timing only, ~4 s), nvidia-smi sampling the clock
# and power every 100 ms (nvlink_env.sh), the start and end of each run stamped beside it:
#   scripts/gpu/gemm_power.sh <world> <out-dir>      -> gemm_<name>_<m>.log, stamps_<m>.txt, smi_<m>.csv
#   CONFIGS="name:gemm-bench options|..." picks the runs (default: ours and cuBLASLt, twice, in turn;
#   a name starting with cublaslt runs cuBLASLt, any other ours); SHAPE="M,N,K" another shape.
# At the GPU's power limit the time of a sustained GEMM is its work per joule: beside ag_mm's
# copy-engine pushes ours loses 7-10 % and cuBLASLt 1-2 % (experiments/results/h100x2/README.md).
source scripts/gpu/nvlink_env.sh
SHAPE=${SHAPE:-16384,3584,8192}
IFS='|' read -r -a RUNS <<< "${CONFIGS:-tile:|cublaslt:|tile:|cublaslt:}"
for run in "${RUNS[@]}"; do
  name=${run%%:*}
  opts=${run#*:}
  impl=tile
  [ "${name#cublaslt}" != "$name" ] && impl=cublaslt
  echo "start $name $(date +%Y/%m/%d\ %H:%M:%S.%3N)" >> "$DIR/stamps_$M.txt"
  CUDA_VISIBLE_DEVICES=0 timeout 60 $BIN gemm-bench --shapes "$SHAPE" --impl $impl --mode graph \
    --iters 2500 --warmup 50 --timing-only --machine ${GPU}x1 $opts >> "$DIR/gemm_${name}_$M.log" 2>&1
  echo "end $name $(date +%Y/%m/%d\ %H:%M:%S.%3N)" >> "$DIR/stamps_$M.txt"
  echo "$name ($opts): $(grep -E "^bf16" "$DIR/gemm_${name}_$M.log" | tail -1 | awk '{print $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16}')"
  sleep 1
done
