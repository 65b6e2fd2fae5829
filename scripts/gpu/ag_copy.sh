#!/usr/bin/env bash
# all_gather.st_copy (push into the peers' scratch, one flag trip, copy out locally) beside
# all_gather.st / st_ll / ld and NCCL, one device call on a machine of W >= 2 GPUs, from the
# repository root (binary: .carry/symmcoll-cuda):
#   1. bench: all_gather, those algorithms, 4K..16M x4, graph and eager, checked up to 16M, NCCL's
#      rows in the same calls, at world W and (W = 4) world 2 on GPUs 0-1; twice
#                                            -> ag_<m>_<rep>.csv / .log
#   2. the GPU suite's correctness part (every algorithm, the new one included)
#                                            -> gpu_suite_correctness.txt, gpu_suite/
#   scripts/gpu/ag_copy.sh <world> <out-dir> [steps, default 12]
DEFAULT_STEPS=12
source scripts/gpu/nvlink_env.sh
$BIN --version > "$DIR/version.txt"
step1() {
  local worlds=$W; [ "$W" -ge 4 ] && worlds="$W 2"
  for rep in 1 2; do
    for w in $worlds; do
      local m=${GPU}x$w
      timeout 120 env CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((w - 1))) $BIN launch -n $w -- $BIN bench --backend cuda \
        --machine $m --op all_gather --algo st,st_copy,st_ll,ld --sizes 4K:16M:x4 --mode both --check-up-to 16M \
        --csv "$DIR/ag_${m}_$rep.csv" > "$DIR/ag_${m}_$rep.log" 2>&1
      echo "# 1 world $w rep $rep: rc $? at ${SECONDS}s"; grep -E "FAIL|rror" "$DIR/ag_${m}_$rep.log" | head -5
    done
  done
}
step2() {
  mkdir -p /tmp/agb/apps && ln -sf "$PWD/$BIN" /tmp/agb/apps/symmcoll-cuda
  SYMM_TEST_LOGDIR="$DIR/gpu_suite" timeout 200 tests/gpu/run.sh /tmp/agb correctness > "$DIR/gpu_suite_correctness.txt" 2>&1
  echo "# 2 GPU suite correctness: rc $? at ${SECONDS}s"; tail -2 "$DIR/gpu_suite_correctness.txt"
}
for ((i = 0; i < ${#STEPS}; ++i)); do step${STEPS:i:1}; done
