#!/usr/bin/env bash
# Where the fused plans' eager calls lose to their graph replays, on a machine of >= 4 GPUs (the `run`
# tool), binary carried (.carry/symmcoll-cuda); timing only, logs (the knobs refuse --csv):
#   1. world 2 (GPUs 0, 1): mm_rs ce (ring) and ce_acc at 70B M 16384, --streams 2 / 3 / 4, and with
#      SYMM_DEBUG_PLAN_COPIES=none (every plan copy dropped: wrong results, a bound)  -> w2_*.log
#   2. world 4: ag_mm ce, ce_bulk at 8B M 16384, the same knobs                       -> w4_*.log
#   scripts/gpu/eager_diag.sh <out-dir>
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh 4 "$1"
run() {  # <world> <log> <op> <algos> <shape> [bench options]
  local w=$1 log=$2 op=$3 algos=$4 shape=$5; shift 5
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((w - 1))) timeout 100 $BIN launch -n $w -- $BIN bench --backend cuda --op $op \
    --algo $algos --shape $shape --m 16384 --mode both --timing-only "$@" > "$DIR/$log" 2>&1
  echo "# $log: rc $? at ${SECONDS}s"; grep -E "^$op +$op" "$DIR/$log"
}
for s in 2 3 4; do run 2 w2_streams$s.log mm_rs ce,ce_acc 70b --streams $s; done
SYMM_DEBUG_PLAN_COPIES=none run 2 w2_nocopies.log mm_rs ce,ce_acc 70b
run 2 w2_blocks32.log mm_rs ce 70b --blocks 32
for s in 2 3 4; do run 4 w4_streams$s.log ag_mm ce,ce_bulk 8b --streams $s; done
SYMM_DEBUG_PLAN_COPIES=none run 4 w4_nocopies.log ag_mm ce,ce_bulk 8b
