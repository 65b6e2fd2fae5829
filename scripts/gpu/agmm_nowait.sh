#!/usr/bin/env bash
# Where ag_mm.ce_tile_gemm's time over its own GEMM goes, on W GPUs: the plan as it is, then with
# its tiles' acquires off (SYMM_DEBUG_MMRS_TILES=no-wait: the copy engines' pushes still run beside
# the kernel, the tiles no longer wait for them; timing only, its results are not checked), the
# matmul alone (cuBLASLt and the TileGemm program) in each call; 8B / 70B, M 16384, 3 passes, twice,
# interleaved.                                  -> agmm_<mode>_r<rep>_<m>.log
#   scripts/gpu/agmm_nowait.sh <world> <out-dir>
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh
for rep in 1 2; do
  for mode in plan no-wait; do
    log="$DIR/agmm_${mode}_r${rep}_$M.log"
    if [ $mode = no-wait ]; then export SYMM_DEBUG_MMRS_TILES=no-wait; else unset SYMM_DEBUG_MMRS_TILES; fi
    timeout 150 $BIN launch -n $W -- $BIN bench --backend cuda --op ag_mm --algo tiles,ce --shape 8b,70b --m 16384 \
      --mode both --passes 3 --timing-only > "$log" 2>&1
    echo "# $mode rep $rep: rc $? at ${SECONDS}s"
    grep -E "FAIL|rror" "$log" | head -4
    grep -E "cublaslt |tile_gemm|ce_tile_gemm|ce_bulk" "$log" | grep -v nccl | awk '{print $2, $5, $6, $7, $8}'
  done
done
unset SYMM_DEBUG_MMRS_TILES
