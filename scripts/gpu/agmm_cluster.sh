#!/usr/bin/env bash
# Is ag_mm.ce_tile_gemm's time over its own GEMM (beside the copy engines' pushes) its walk, or any
# of our GEMMs there, and do clusters of two (TMA multicast of B, as cuBLASLt's kernel) change it?
# 8B / 70B, M 16384, graph and eager, 3 passes, twice, interleaved; every call has the matmul alone
# (cuBLASLt, the TileGemm program) and ce_bulk_gemm beside:
#   plan      the tile program as it is
#   no-wait   SYMM_DEBUG_MMRS_TILES=no-wait: its tiles' acquires off
#   coop-c1   SYMM_DEBUG_AGMM_GEMM=coop-c1: gemm-bench's coop kernel over the gathered A, no waits
#   coop-c2   SYMM_DEBUG_AGMM_GEMM=coop-c2: the same in clusters of two
#   program   SYMM_DEBUG_AGMM_GEMM=program: the TileGemm program (tile_fused.cu's kernel) over it
#   cublaslt  SYMM_DEBUG_AGMM_GEMM=cublaslt: cuBLASLt over it (the floor: the matmul alone beside
#             the pushes)
#   own-from-work  SYMM_DEBUG_MMRS_TILES=own-from-work: the tile program with my own rows loaded from
#             my (unwritten) slot of the gathered A, not from the shard the copy engines read
# (MODES="..." picks some; GEMM_ALONE=0 skips the last step)
#                                               -> agmm_<mode>_r<rep>_<m>.log
# then that coop kernel alone on GPU 0 at the two shapes, clusters of 1 and 2 -> gemm_c<n>_<m>.csv / .log
#   scripts/gpu/agmm_cluster.sh <world> <out-dir>
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh
for rep in 1 2; do
  for mode in ${MODES:-plan no-wait coop-c1 coop-c2 program}; do
    log="$DIR/agmm_${mode}_r${rep}_$M.log"
    unset SYMM_DEBUG_MMRS_TILES SYMM_DEBUG_AGMM_GEMM
    [ $mode = no-wait ] || [ $mode = own-from-work ] && export SYMM_DEBUG_MMRS_TILES=$mode
    [ ${mode#coop} != $mode ] || [ $mode = program ] || [ $mode = cublaslt ] && export SYMM_DEBUG_AGMM_GEMM=$mode
    timeout 150 $BIN launch -n $W -- $BIN bench --backend cuda --op ag_mm --algo tiles,ce_bulk_gemm --shape 8b,70b \
      --m 16384 --mode both --passes 3 --timing-only > "$log" 2>&1
    echo "# $mode rep $rep: rc $? at ${SECONDS}s"
    grep -E "FAIL|rror" "$log" | head -4
    grep -E "cublaslt |tile_gemm|ce_tile_gemm|ce_bulk" "$log" | grep -v nccl | awk '{print $2, $5, $6, $7, $8}'
  done
done
unset SYMM_DEBUG_MMRS_TILES SYMM_DEBUG_AGMM_GEMM
[ "${GEMM_ALONE:-1}" = 0 ] && exit 0
for c in 1 2; do
  CUDA_VISIBLE_DEVICES=0 timeout 120 $BIN gemm-bench --shapes "16384,3584,8192;16384,1792,4096" --dtype bf16 --schedule coop --cluster $c \
    --iters 60 --warmup 10 --timing-only --machine ${GPU}x1 --out "$DIR/gemm_c${c}_$M.csv" > "$DIR/gemm_c${c}_$M.log" 2>&1
  echo "# gemm-bench coop cluster $c: rc $?"
  grep -E "16384 +(3584|1792)" "$DIR/gemm_c${c}_$M.log" | head -4
done
