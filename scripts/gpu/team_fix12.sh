#!/usr/bin/env bash
# One GPU, N ranks in process: the team graph (one CUDA graph of every rank's calls, plan flags as
# graph edges: backends/cuda/team_graph.h) against the mm_rs graph stall of run9..run11, then the
# plans' and programs' correctness and the fused team bench. -> team_fix12_<m>_<part>.log (+ CSV)
#   scripts/gpu/team_fix12.sh <out-dir> <machine-name> [check|bench|all] [binary]
# check: the stall case (M 4096, 8192, 1024), mm_rs/ag_mm --algo all at worlds 2 and 4 (graph),
#        collectives' correctness at worlds 2, 3, 4, 8 and fused at 2 and 4 (100 graph replays);
# bench: the fused team bench at world 2 (both modes) -> fused_team_<m>_w2.csv.
. "$(dirname "$0")/one_gpu_env.sh" "$1" "$2"
PART=${3:-all}
BIN=${4:-.carry/symmcoll-cuda}
SECONDS=0
LOG="$DIR/team_fix12_${M}_$PART.log"
: > "$LOG"
step() {  # name, limit (s), args...
  local name=$1 limit=$2; shift 2
  echo "### $name: [$*] (limit ${limit}s)" >> "$LOG"
  timeout "$limit" "$BIN" "$@" >> "$LOG" 2>&1
  local rc=$?
  echo "### $name: rc $rc at ${SECONDS}s" >> "$LOG"
}
B="bench --backend cuda --dtype bf16"
if [ "$PART" = check ] || [ "$PART" = all ]; then
  (
    export SYMM_STREAM_TIMEOUT_S=12 SYMM_DEBUG_ALL_STUCK=1
    S="$B --world 2 --op mm_rs --algo ce --shape 8b --mode graph --no-baselines --iters 5 --warmup 1"
    step stall_m4096 40 $S --m 4096
    step stall_m8192 40 $S --m 8192
    step stall_m1024 40 $S --m 1024
    for w in 2 4; do
      step mm_rs_all_w$w 60 $B --world $w --op mm_rs --algo all --shape 8b --m 4096 --mode graph --iters 5 --warmup 1
      step ag_mm_all_w$w 60 $B --world $w --op ag_mm --algo all --shape 8b --m 4096 --mode graph --iters 5 --warmup 1
    done
  )
  for w in 2 3 4 8; do
    step coll_check_w$w 60 $B --world $w --op all_reduce,reduce_scatter,all_gather --algo all --sizes 16K,1M \
      --no-timing --replays 100
  done
  for w in 2 4; do
    step fused_check_w$w 60 $B --world $w --op ag_mm,mm_rs --algo all --m 512 --n 256 --k 512 --no-timing --replays 100
  done
fi
if [ "$PART" = bench ] || [ "$PART" = all ]; then
  step fused_team_w2 280 $B --world 2 --op ag_mm,mm_rs --algo all --shape 8b,70b --m 4096,16384 --mode both \
    --iters 5 --warmup 1 --machine "$M" --csv "$DIR/fused_team_${M}_w2.csv"
fi
grep -E "^###|stuck|error|FAIL|check failure" "$LOG"
