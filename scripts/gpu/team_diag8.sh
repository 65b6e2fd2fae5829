#!/usr/bin/env bash
# One GPU, 2 ranks in process: the mm_rs graph stall, second round (team_diag7: uploading graphs
# before the ranks meet did not end it). Side streams now join a call only when it uses them;
# SYMM_TEST_GRAPH_CHAIN=1 replays each captured graph as one chain in capture order.
# -> team_diag8_<m>.log; then the plans' correctness at worlds 2 and 4 (every host plan and fused
# plan, 100 graph replays) and, if a variant ended the stall, the fused bench at world 2 with it.
#   scripts/gpu/team_diag8.sh <out-dir> <machine-name>
. "$(dirname "$0")/one_gpu_env.sh" "$@"
SECONDS=0
LOG="$DIR/team_diag8_$M.log"
: > "$LOG"
B=".carry/symmcoll-cuda bench --backend cuda --world 2 --dtype bf16 --op mm_rs --shape 8b --m 4096 --iters 5 --warmup 1 --mode graph --no-baselines"
variant() {
  local name=$1 envs=$2; shift 2
  echo "### $name: env [$envs] args [$*]" >> "$LOG"
  env $envs timeout 40 $B "$@" >> "$LOG" 2>&1
  echo "### $name: rc $? at ${SECONDS}s" >> "$LOG"
}
variant lazy_s3 X=0 --algo ce
variant chain_s3 SYMM_TEST_GRAPH_CHAIN=1 --algo ce
variant lazy_s2 X=0 --algo ce --streams 2
variant chain_s2 SYMM_TEST_GRAPH_CHAIN=1 --algo ce --streams 2
variant lazy_chunk512 X=0 --algo ce --chunk-rows 512
variant chain_70b_m16384 SYMM_TEST_GRAPH_CHAIN=1 --algo all --shape 70b --m 16384
grep -E "^###|error|timed out|^mm_rs" "$LOG"
C="$DIR/check_team_$M.log"
: > "$C"
for w in 2 4; do
  echo "### world $w: collectives" >> "$C"
  timeout 120 .carry/symmcoll-cuda bench --backend cuda --world $w --op all_reduce,reduce_scatter,all_gather --algo all \
    --dtype bf16 --sizes 16K,1M --no-timing --replays 100 >> "$C" 2>&1
  echo "### world $w collectives: rc $? at ${SECONDS}s" >> "$C"
  echo "### world $w: fused" >> "$C"
  timeout 120 .carry/symmcoll-cuda bench --backend cuda --world $w --op ag_mm,mm_rs --algo all --dtype bf16 \
    --m 512 --n 256 --k 512 --no-timing --replays 100 >> "$C" 2>&1
  echo "### world $w fused: rc $? at ${SECONDS}s" >> "$C"
done
grep -E "^###|FAIL|error" "$C" | head -20
ENV=""
if grep -q "### lazy_s3: rc 0" "$LOG"; then ENV="X=0"; elif grep -q "### chain_s3: rc 0" "$LOG"; then ENV="SYMM_TEST_GRAPH_CHAIN=1"; fi
if [ -n "$ENV" ]; then
  env $ENV timeout 200 .carry/symmcoll-cuda bench --backend cuda --world 2 --op ag_mm,mm_rs --algo all --dtype bf16 \
    --shape 8b,70b --m 4096,16384 --mode both --iters 5 --warmup 1 \
    --machine "$M" --csv "$DIR/fused_team_${M}_w2.csv" > "$DIR/fused_team_${M}_w2.log" 2>&1
  echo "# fused world 2 [$ENV]: rc $? at ${SECONDS}s"
  grep -E "FAIL|error|check failure" "$DIR/fused_team_${M}_w2.log" | head
fi
