#!/usr/bin/env bash
# The block count of the plans' reduce kernels (LocalReduceRing / SumPeerSlots, default at most 32)
# on a machine of W GPUs (the `run` tool), from the repository root (.carry/symmcoll-cuda carried):
# mm_rs ce / ce_acc at 70B and 8B, M 16384 (--blocks 0 = default, 64, 128), and the reduce-scatter
# ce / ce_overlap at 16M, 64M, 256M (--blocks 32, 64, 128), graph and eager, twice, interleaved
#                                               -> mmrs_b<blocks>_r<rep>_<m>.log, rs_b<blocks>_r<rep>_<m>.csv / .log
#   scripts/gpu/reduce_blocks.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
for rep in 1 2; do
  for b in 0 64 128; do
    timeout 90 $BIN launch -n $W -- $BIN bench --backend cuda --op mm_rs --algo ce,ce_acc --shape 70b,8b --m 16384 \
      --mode both --timing-only --blocks $b > "$DIR/mmrs_b${b}_r${rep}_$M.log" 2>&1
    echo "# mm_rs blocks $b rep $rep: rc $? at ${SECONDS}s"
    grep -E "^mm_rs +(mm_rs|cublaslt)" "$DIR/mmrs_b${b}_r${rep}_$M.log"
  done
  for b in 32 64 128; do
    timeout 90 $BIN launch -n $W -- $BIN bench --backend cuda --op reduce_scatter --algo ce,ce_overlap --sizes 16M,64M,256M \
      --mode both --check-up-to 64M --blocks $b --csv "$DIR/rs_b${b}_r${rep}_$M.csv" > "$DIR/rs_b${b}_r${rep}_$M.log" 2>&1
    echo "# rs blocks $b rep $rep: rc $? at ${SECONDS}s"
    grep -E "FAIL|rror" "$DIR/rs_b${b}_r${rep}_$M.log" | head -3
    grep -E "^reduce_scatter +reduce" "$DIR/rs_b${b}_r${rep}_$M.log"
  done
done
echo "# done at ${SECONDS}s"
