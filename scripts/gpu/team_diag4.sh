#!/usr/bin/env bash
# One GPU, 2 ranks in process: which mm_rs settings stall (../results/h100x1/team/run4..run6).
#   scripts/gpu/team_diag4.sh <out-dir> <machine-name> [checked|timed|both]   (default both)
# checked: each variant checked once (no timing) under a 15 s bound (a healthy one ends in a few
#          seconds) -> team_diag4_<m>.log
# timed:   8B M 4096 timed (iters 5, warmup 1), with and without the baselines' timing first,
#          graph or eager only, under 40 s each -> team_diag5_<m>.log
# graph:   graph mode only, fewer streams, finer chunks, another plan -> team_diag6_<m>.log
. "$(dirname "$0")/one_gpu_env.sh" "$@"
WHAT=${3:-both}
SECONDS=0
# variants <log> <timeout> <command prefix>, then "name args..." lines on stdin.
variants() {
  local log=$1 t=$2 b=$3
  : > "$log"
  while read -r name args; do
    echo "### $name: $args" >> "$log"
    timeout "$t" $b $args >> "$log" 2>&1
    echo "### rc $? at ${SECONDS}s" >> "$log"
  done
  grep -E "^###|error|^mm_rs" "$log"
}
B=".carry/symmcoll-cuda bench --backend cuda --world 2 --dtype bf16"
if [ "$WHAT" != timed ]; then
  variants "$DIR/team_diag4_$M.log" 15 "$B --no-timing --replays 0" <<'V'
default --op mm_rs --algo ce --shape 8b --m 4096
chunk1024 --op mm_rs --algo ce --shape 8b --m 4096 --chunk-rows 1024
streams2 --op mm_rs --algo ce --shape 8b --m 4096 --streams 2
m2048 --op mm_rs --algo ce --shape 8b --m 2048
n512 --op mm_rs --algo ce --n 512 --k 4096 --m 4096
k1024 --op mm_rs --algo ce --n 1792 --k 1024 --m 4096
st --op mm_rs --algo st --shape 8b --m 4096
ag_mm --op ag_mm --algo ce --shape 8b --m 4096
V
fi
if [ "$WHAT" = graph ]; then
  variants "$DIR/team_diag6_$M.log" 40 "$B --op mm_rs --shape 8b --m 4096 --iters 5 --warmup 1 --mode graph --no-baselines" <<'V'
streams2 --algo ce --streams 2
chunk512 --algo ce --chunk-rows 512
ce_acc --algo ce_acc
st --algo st
V
fi
if [ "$WHAT" = timed ] || [ "$WHAT" = both ]; then
  variants "$DIR/team_diag5_$M.log" 40 "$B --op mm_rs --algo ce --shape 8b --m 4096 --iters 5 --warmup 1" <<'V'
no_baselines --no-baselines --mode both
baselines_eager --mode eager
baselines_graph --mode graph
V
fi
