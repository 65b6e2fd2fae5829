#!/usr/bin/env bash
# Stream flag operations batched (cuStreamBatchMemOp, the default) against one driver call each
# (SYMM_PLAN_BATCH_MEMOPS=0), same binary, interleaved twice, on a machine of W GPUs (worlds W and 2):
#   1. reduce_scatter ce / ce_overlap and all_gather ce / ce_sm, 4K..256M x16, graph and eager, timed
#                                                   -> ab_w<w>_<op>_batch<0|1>_<rep>.csv / .log
#   2. the GPU suite's correctness part (world W) and hang part (world 2), batched
#                                                   -> suite_correctness.log, suite_hang.log
#   scripts/gpu/batch_memops.sh <world> <out-dir> [steps, default 12]
DEFAULT_STEPS=12
source scripts/gpu/nvlink_env.sh
step1() {
  for w in $W 2; do
    local devs=$(seq -s, 0 $((w - 1)))
    for rep in 1 2; do
      for b in 0 1; do
        for op in reduce_scatter all_gather; do
          local algos=ce,ce_overlap; [ $op = all_gather ] && algos=ce,ce_sm
          env CUDA_VISIBLE_DEVICES=$devs SYMM_PLAN_BATCH_MEMOPS=$b timeout 100 $BIN launch -n $w -- $BIN bench \
            --backend cuda --op $op --algo $algos --sizes 4K:256M:x16 --mode both --timing-only \
            --csv "$DIR/ab_w${w}_${op}_batch${b}_$rep.csv" > "$DIR/ab_w${w}_${op}_batch${b}_$rep.log" 2>&1
          echo "# 1 world $w rep $rep batch $b $op: rc $? at ${SECONDS}s"
        done
      done
    done
  done
}
step2() {
  local SB=$(mktemp -d); mkdir -p "$SB/apps" && ln -s "$PWD/$BIN" "$SB/apps/symmcoll-cuda"
  SYMM_TEST_WORLDS=$W SYMM_TEST_SIZES=16K,1M SYMM_TEST_LOGDIR="$DIR/suite" timeout 150 bash tests/gpu/run.sh "$SB" correctness \
    > "$DIR/suite_correctness.log" 2>&1
  echo "# 2 correctness: rc $? at ${SECONDS}s"; grep -E "^--- |GPU suite" "$DIR/suite_correctness.log" | head -12
  SYMM_TEST_LOGDIR="$DIR/suite" timeout 200 bash tests/gpu/run.sh "$SB" hang > "$DIR/suite_hang.log" 2>&1
  echo "# 2 hang: rc $? at ${SECONDS}s"; grep -E "^--- |GPU suite" "$DIR/suite_hang.log" | head -16
}
for ((i = 0; i < ${#STEPS}; ++i)); do "step${STEPS:$i:1}"; done
echo "# batch_memops.sh done at ${SECONDS}s"
