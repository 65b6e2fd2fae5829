#!/usr/bin/env bash
# In-process team diagnosis on one GPU (the device tool), from the repository root, binary in .carry/:
#   scripts/gpu/team_diag.sh <out-dir> <machine-name>
# 1. the fused correctness check at 8 ranks, one fused algorithm at a time, each under a 45 s
#    bound; one that does not end gets its host threads' stacks dumped (cuda-gdb attach) before it
#    is killed -> team_diag_<m>.log
# 2. the GPU suite's hang cases and compute-sanitizer (worlds 2, 4) in team mode -> suite_diag_<m>.log,
#    sanitize_diag_<m>.tgz
. "$(dirname "$0")/one_gpu_env.sh" "$@"
BIN=.carry/symmcoll-cuda
L=$DIR/team_diag_$M.log; : > "$L"
SECONDS=0
for oa in ag_mm:ce ag_mm:ce_bulk mm_rs:ce mm_rs:ce_acc mm_rs:st; do
  op=${oa%%:*} algo=${oa#*:}
  echo "### $op $algo world 8 (at ${SECONDS}s)" >> "$L"
  $BIN bench --backend cuda --world 8 --op $op --algo $algo --dtype bf16,fp16 --n 512 --k 1024 --m 256,1536 \
    --chunk-rows 32 --no-timing --replays 100 >> "$L" 2>&1 &
  pid=$!
  for i in $(seq 45); do kill -0 $pid 2>/dev/null || break; sleep 1; done
  if kill -0 $pid 2>/dev/null; then
    echo "### still running after 45 s: host stacks" >> "$L"
    timeout 60 cuda-gdb -batch -p $pid -ex "info threads" -ex "thread apply all bt 12" >> "$L" 2>&1
    kill -9 $pid; wait $pid 2>/dev/null
    echo "### killed" >> "$L"
  else
    wait $pid; echo "### rc $? at ${SECONDS}s" >> "$L"
  fi
done
grep -E "^###|FAIL|error" "$L" | head -30
SB=$(mktemp -d); mkdir -p "$SB/apps" && ln -s "$PWD/$BIN" "$SB/apps/symmcoll-cuda"
timeout ${T_SUITE:-300} env SYMM_TEST_TEAM=1 SYMM_TEST_LOGDIR="$SB/logs" SAN_WORLDS="2 4" \
  bash tests/gpu/run.sh "$SB" hang sanitize > "$DIR/suite_diag_$M.log" 2>&1
echo "# suite rc $? at ${SECONDS}s"
(cd "$SB/logs" && tar czf "$DIR/sanitize_diag_$M.tgz" sanitize_*.log 2>/dev/null)
grep -E "^(=== |--- |GPU suite)" "$DIR/suite_diag_$M.log" | grep -vE "^=== hang: mism|^=== sanitize" | head -40
