#!/usr/bin/env bash
# Why a copy-engine host plan at <= 1M costs 3-4x more per call in a CUDA graph than eager at world 2
# (reduce_scatter ce 64K on 2x H100: 118.6 us graph, 29.1 eager; at 2M+ the two agree), on a
# machine of W GPUs:
#   1. graph mode, calls per graph 1, 5, 20, 100 (the bench's default at <= 1M is 100, at <= 16M 20):
#      reduce_scatter ce / ce_overlap and all_gather ce at 64K and 4M, timed   -> calls_<n>.csv / .log
#   2. the same with CUDA_DEVICE_MAX_CONNECTIONS=32 at 100 calls                -> conn32.csv / .log
#   3. traced: 3 calls back to back, graph and eager, 64K                      -> traces/ (tarred)
#   scripts/gpu/ce_graph.sh <world> <out-dir>
DEFAULT_STEPS=123
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
B="$BIN bench --backend cuda --dtype bf16 --timing-only"
step1() {
  for n in 1 5 20 100; do
    for op in reduce_scatter all_gather; do
      local algos=ce,ce_overlap; [ $op = all_gather ] && algos=ce,ce_sm
      timeout 100 $L $B --op $op --algo $algos --sizes 64K,4M --mode graph --calls $n \
        --csv "$DIR/calls_${n}_$op.csv" > "$DIR/calls_${n}_$op.log" 2>&1
      echo "# 1 calls $n $op: rc $? at ${SECONDS}s"
      grep -E "^(reduce_scatter|all_gather) " "$DIR/calls_${n}_$op.log" | head -8
    done
  done
}
step2() {
  CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 100 $L $B --op reduce_scatter --algo ce --sizes 64K,4M --mode both \
    --calls 100 --csv "$DIR/conn32.csv" > "$DIR/conn32.log" 2>&1
  echo "# 2 conn32: rc $? at ${SECONDS}s"; grep -E "^reduce_scatter " "$DIR/conn32.log" | head
}
step3() {
  local T=/tmp/ce_graph_traces
  rm -rf $T; mkdir -p $T
  timeout 100 $L $B --op reduce_scatter --algo ce --sizes 64K --mode both --calls 100 --trace $T --trace-calls 3 \
    --csv "$DIR/trace.csv" > "$DIR/trace.log" 2>&1
  echo "# 3 trace: rc $? at ${SECONDS}s"; grep -E "^reduce_scatter |trace" "$DIR/trace.log" | head
  tar -C /tmp -czf "$DIR/traces.tgz" ce_graph_traces
}
for ((i = 0; i < ${#STEPS}; ++i)); do "step${STEPS:$i:1}"; done
echo "# ce_graph.sh done at ${SECONDS}s"
