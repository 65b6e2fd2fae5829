#!/usr/bin/env bash
# One GPU, 2 ranks in process: the mm_rs graph stall (../results/h100x1/team/run7: `ce` with one
# chunk per owner, replayed in a CUDA graph, never ends). Graph mode only, 8B M 4096, each variant
# under a 40 s bound (the plan watchdog ends a stall at 20 s here) -> team_diag7_<m>.log; the
# captured graphs of the first variant as Graphviz -> dot_<m>.tar.gz; then, if the fix holds, the
# whole fused bench at world 2 -> fused_team_<m>_w2.csv / .log.
#   scripts/gpu/team_diag7.sh <out-dir> <machine-name>
. "$(dirname "$0")/one_gpu_env.sh" "$@"
export SYMM_STREAM_TIMEOUT_S=20
SECONDS=0
LOG="$DIR/team_diag7_$M.log"
: > "$LOG"
B=".carry/symmcoll-cuda bench --backend cuda --world 2 --dtype bf16 --op mm_rs --shape 8b --m 4096 --iters 5 --warmup 1 --mode graph --no-baselines"
# variant <name> <env assignments or -> <args...>
variant() {
  local name=$1 envs=$2; shift 2
  echo "### $name: env [$envs] args [$*]" >> "$LOG"
  if [ "$envs" = - ]; then timeout 40 $B "$@" >> "$LOG" 2>&1; else env $envs timeout 40 $B "$@" >> "$LOG" 2>&1; fi
  echo "### $name: rc $? at ${SECONDS}s" >> "$LOG"
}
mkdir -p /tmp/dot
variant upload_s3_dot SYMM_DEBUG_GRAPH_DOT=/tmp/dot --algo ce
variant noupload_s3 SYMM_TEST_NO_GRAPH_UPLOAD=1 --algo ce
variant upload_s2 - --algo ce --streams 2
variant upload_conn8 CUDA_DEVICE_MAX_CONNECTIONS=8 --algo ce
variant noupload_chunk512 SYMM_TEST_NO_GRAPH_UPLOAD=1 --algo ce --chunk-rows 512
variant upload_ce_acc - --algo ce_acc
mkdir -p /tmp/dot4 && variant upload_chunk512_dot SYMM_DEBUG_GRAPH_DOT=/tmp/dot4 --algo ce --chunk-rows 512
(cd /tmp && tar czf "$DIR/dot_$M.tar.gz" dot dot4)
grep -E "^###|error|timed out|^mm_rs" "$LOG"
if grep -q "### upload_s3_dot: rc 0" "$LOG"; then
  timeout 240 .carry/symmcoll-cuda bench --backend cuda --world 2 --op ag_mm,mm_rs --algo all --dtype bf16 \
    --shape 8b,70b --m 4096,16384 --mode both --iters 5 --warmup 1 \
    --machine "$M" --csv "$DIR/fused_team_${M}_w2.csv" > "$DIR/fused_team_${M}_w2.log" 2>&1
  echo "# fused world 2: rc $? at ${SECONDS}s"
  grep -E "FAIL|error|check failure" "$DIR/fused_team_${M}_w2.log" | head
fi
