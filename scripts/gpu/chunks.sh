#!/usr/bin/env bash
# The fused plans' chunk size (`--chunk-rows`: rows per GEMM, copy and progress flag) on a machine
# of W GPUs (the `run` tool), from the repository root, binary carried (.carry/symmcoll-cuda):
#   mm_rs ce, ce_acc, tiles_ce and ag_mm ce, tiles at 8B / 70B, M 4096 / 16384, graph and eager,
#   every chunk size in CHUNKS (default 1024 2048 4096 8192, then the plans' defaults as 0), the
#   whole sweep twice (rep 1, rep 2) so run-to-run noise shows; every row checked, the matmul alone
#   (cublaslt) in each call.                          -> chunks_<op>_<rows>_r<rep>_<m>.log
# The bench refuses --csv with a knob (its rows would not say it): read the logs' tables.
#   scripts/gpu/chunks.sh <world> <out-dir>
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh
CHUNKS=${CHUNKS:-1024 2048 4096 8192 0}
for rep in 1 2; do
  for cr in $CHUNKS; do
    for op in mm_rs ag_mm; do
      a=ce,ce_acc,tiles_ce; [ $op = ag_mm ] && a=ce,tiles
      log="$DIR/chunks_${op}_${cr}_r${rep}_$M.log"
      timeout 120 $BIN launch -n $W -- $BIN bench --backend cuda --op $op --algo $a --shape 8b,70b \
        --m 4096,16384 --mode both --chunk-rows $cr > "$log" 2>&1
      echo "# $op chunk rows $cr rep $rep: rc $? at ${SECONDS}s"
      grep -E "FAIL|rror" "$log" | head -4
    done
  done
done
