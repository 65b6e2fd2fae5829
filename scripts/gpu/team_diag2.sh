#!/usr/bin/env bash
# One GPU, in-process teams: calibrate at 4 ranks (the probe's release), and the fused bench's
# mm_rs at 2 ranks, 8B M 4096, with and without the GEMM priming, each under a 45 s bound, host
# stacks dumped (cuda-gdb) where one does not end. -> team_diag2_<m>.log, calibrate_team_w4_<m>.csv
. "$(dirname "$0")/one_gpu_env.sh" "$@"
B=".carry/symmcoll-cuda"
L=$DIR/team_diag2_$M.log; : > "$L"
SECONDS=0
echo "### calibrate world 4" >> "$L"
timeout 60 $B calibrate --backend cuda --world 4 --csv "$DIR/calibrate_team_w4_$M.csv" 2>&1 | grep -E "probe|error" >> "$L"
echo "### rc ${PIPESTATUS[0]} at ${SECONDS}s" >> "$L"
for v in prime noprime prime; do
  echo "### mm_rs world 2 8b M4096, $v (at ${SECONDS}s)" >> "$L"
  ( [ $v = noprime ] && export SYMM_TEST_NO_GEMM_PRIME=1
    exec $B bench --backend cuda --world 2 --op mm_rs --algo all --dtype bf16 --shape 8b --m 4096 --mode both \
      --iters 5 --warmup 1 ) >> "$L" 2>&1 &
  pid=$!
  for i in $(seq 45); do kill -0 $pid 2>/dev/null || break; sleep 1; done
  if kill -0 $pid 2>/dev/null; then
    echo "### still running after 45 s: host stacks" >> "$L"
    timeout 60 cuda-gdb -batch -p $pid -ex "thread apply all bt 14" 2>&1 | grep -E "^Thread|^#[0-9]" | cut -c1-220 >> "$L"
    kill -9 $pid; wait $pid 2>/dev/null; echo "### killed" >> "$L"
  else
    wait $pid; echo "### rc $? at ${SECONDS}s" >> "$L"
  fi
done
grep -E "^###|error|probe \(" "$L"
