#!/usr/bin/env bash
# Measured timelines of the host plans (bench --trace: one eager call per plan, traced on the GPU
# with CUDA events, written as the simulator's Chrome traces) on a machine of W GPUs (the `run`
# tool), from the repository root, with the binary built here and carried (.carry/symmcoll-cuda):
#   1. mm_rs 70B M 16384 and ag_mm 70B M 16384, the copy-engine plans and the matmul alone, timed
#      (graph and eager) and traced                        -> fused_trace_<op>_<m>.csv / .log, traces/
#   2. the copy-engine all-gather and reduce-scatter plans at 1M, 16M and 256M, timed and traced
#                                                          -> coll_trace_<op>_<m>.csv / .log, traces/
#   scripts/gpu/trace.sh <world> <out-dir> [steps, default 12]
DEFAULT_STEPS=12
source scripts/gpu/nvlink_env.sh
T="$DIR/traces"
step1() {
  for op in mm_rs ag_mm; do
    local algos=ce,ce_acc; [ $op = ag_mm ] && algos=ce,ce_bulk
    timeout 150 $BIN launch -n $W -- $BIN bench --backend cuda --op $op --algo $algos --dtype bf16 --shape 70b \
      --m 16384 --mode both --timing-only --trace "$T" --csv "$DIR/fused_trace_${op}_$M.csv" > "$DIR/fused_trace_${op}_$M.log" 2>&1
    echo "# 1 $op: rc $? at ${SECONDS}s"
    grep -E "^$op|trace|rror" "$DIR/fused_trace_${op}_$M.log" | head -12
  done
}
step2() {
  for op in all_gather reduce_scatter; do
    local algos=ce,ce_sm; [ $op = reduce_scatter ] && algos=ce,ce_overlap
    timeout 100 $BIN launch -n $W -- $BIN bench --backend cuda --op $op --algo $algos --sizes 1M,16M,256M --mode both \
      --timing-only --trace "$T" --csv "$DIR/coll_trace_${op}_$M.csv" > "$DIR/coll_trace_${op}_$M.log" 2>&1
    echo "# 2 $op: rc $? at ${SECONDS}s"
    grep -E "^$op|trace|rror" "$DIR/coll_trace_${op}_$M.log" | head -12
  done
}
for ((i = 0; i < ${#STEPS}; ++i)); do "step${STEPS:$i:1}"; done
echo "# trace.sh done at ${SECONDS}s"
