#!/usr/bin/env bash
# One GPU, in-process teams, the GEMMs planned for each rank's share of the SMs: mm_rs at 2 ranks,
# 8B M 4096 (which did not finish before, ../results/h100x1/team/run4), with the GPU's kernels and
# host stacks dumped (cuda-gdb) if it has not ended after 20 s; then the fused bench at 2 ranks and
# the fused correctness check at 2, 4 and 8 ranks. -> team_diag3_<m>.log, fused_team_w2_<m>.csv
. "$(dirname "$0")/one_gpu_env.sh" "$@"
B=".carry/symmcoll-cuda"
L=$DIR/team_diag3_$M.log; : > "$L"
SECONDS=0
echo "### mm_rs world 2 8b M4096 (at ${SECONDS}s)" >> "$L"
$B bench --backend cuda --world 2 --op mm_rs --algo all --dtype bf16 --shape 8b --m 4096 --mode both --iters 5 --warmup 1 >> "$L" 2>&1 &
pid=$!
for i in $(seq 20); do kill -0 $pid 2>/dev/null || break; sleep 1; done
if kill -0 $pid 2>/dev/null; then
  echo "### still running after 20 s: kernels and host stacks" >> "$L"
  timeout 60 cuda-gdb -batch -p $pid -ex "info cuda kernels" -ex "info cuda blocks" -ex "thread apply all bt 10" 2>&1 \
    | grep -vE "^\[New|^$" | cut -c1-220 | head -150 >> "$L"
fi
wait $pid; echo "### rc $? at ${SECONDS}s" >> "$L"
echo "### fused bench world 2 (at ${SECONDS}s)" >> "$L"
timeout 200 $B bench --backend cuda --world 2 --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b,70b --m 4096,16384 \
  --mode both --iters 5 --warmup 1 --machine $M --csv "$DIR/fused_team_w2_$M.csv" >> "$L" 2>&1
echo "### rc $? at ${SECONDS}s" >> "$L"
for w in 2 4 8; do
  echo "### fused check world $w (at ${SECONDS}s)" >> "$L"
  timeout 60 $B bench --backend cuda --world $w --op ag_mm,mm_rs --algo all --dtype bf16,fp16 --n 512 --k 1024 \
    --m 256,1536 --chunk-rows 32 --no-timing --replays 100 >> "$L" 2>&1
  echo "### rc $? at ${SECONDS}s" >> "$L"
done
grep -E "^###|FAIL|error|check failure" "$L"
