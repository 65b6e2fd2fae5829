#!/usr/bin/env bash
# The one-GPU team's world-8 stall, bisected (streams8_25b1d12: the full sweep stops in an eager
# sample of a copy-engine plan in half the runs, whatever the stream count): world 8, checked up to
# 64M, 4K..256M x4, three runs each of
#   eager       every collective, eager only (no CUDA graph before the plans' eager samples)
#   rs_both     reduce_scatter alone, graph and eager (where the stops were)
# STEP=copies: instead, five runs each of reduce_scatter alone, graph and eager, timing only, with
# (rs_timed) and without its plans' copies (rs_nocopies: SYMM_DEBUG_PLAN_COPIES=none, every copy
# dropped: what a stall needs of the copy engines).
# STEP=calls: four runs each of reduce_scatter's device programs (ld_reduce, st_ll_reduce) alone, graph
# and eager, timing only, at the default calls a sample (100 up to 1M) and at --calls 10.
# STEP=fix: five rs_timed runs and three dev_timed ones, as above, to try a fix.
# STEP=small: rs_timed at world 4 (five runs) and world 2 (three), to see whether smaller teams stop too.
# STEP=order: rs_timed five times, at world 4 three times, and the whole checked sweep twice: run on
# a binary whose bench timed every eager sample first, then every graph sample (order8_1daa33f; that
# change was not kept: the team README says why). With the committed bench it repeats those runs.
# STEP=queues: rs_timed with no probe stream until a wait is stuck (SYMM_DEBUG_LAZY_PROBE, a switch of
# the binary of queues8_1daa33f, not kept), at --streams 2 (four runs) and 3 (three): 16 and 24 streams
# against the GPU's 32 hardware queues.
# STEP=lockstep: the eager calls' lockstep (bench_common.h SampleTimer: a host meeting after each eager
# call is enqueued) against a stall from streams of several ranks sharing a hardware queue: world 2's
# device programs, timing only, eager, with CUDA_DEVICE_MAX_CONNECTIONS=1 (every stream in one queue),
# without the lockstep (SYMM_DEBUG_TEAM_LOCKSTEP=0) and with it, in turn, twice; then, at the default
# 32 queues, rs_timed (stopped 10 of 10 without it) four times and dev_timed twice. STEP=lockstep2:
# the spinning lockstep (Team::lockstep) in the same proof, its cost (world 2 and 8 device programs,
# eager, without and with it), dev_timed three times and world 4's rs_timed twice. STEP=lockstep3: world
# 8's rs_timed with it at --streams 2 (twice) and 3, and the whole checked sweep once. STEP=lockstep4:
# with the lockstep within host plans' calls too (PlanExec::set_step), world 8 timing only: rs_timed
# three times, all_gather and all_reduce once each; world 4 every collective once; the checked sweep.
# STEP=lockstep5: the same binary, rs_timed four more times, the sweep twice more, and the fused bench
# (ag_mm, mm_rs, every algorithm, 8b and 70b at M 4096, checked) at worlds 4 and 8. STEP=lockstep6: a
# host plan's lockstep after its flag writes only (SYMM_DEBUG_TEAM_LOCKSTEP=writes), world 8: rs_timed
# four times, all_gather once, the checked sweep twice. STEP=lockstep7: the default as committed (after
# flag writes and launches): world 8 rs_timed three times and the sweep once, world 4 every collective
# timing only and the fused bench at M 4096 (checked). STEP=lockstep8: the fused bench with the plans'
# lockstep too (it had only the calls'), worlds 8 and 4, checked.
# STEP=round: teams of 2, 4 and 8 after the verbs' one-step tail (ec6ad13): every collective and
# algorithm checked, graph and eager, and the fused bench (team/run21).
# Binary carried.   [STEP=round|copies|calls|fix|small|order|queues|lockstep|lockstep2|lockstep3|lockstep4|lockstep5|lockstep6|lockstep7|lockstep8|w2] scripts/gpu/team8_bisect.sh <out-dir>  -> <out-dir>/<name>_r<rep>.csv / .log
source scripts/gpu/one_gpu_env.sh "${1:-}" h200x1  # safety variables, one GPU, DIR
mkdir -p "$DIR"
BIN=.carry/symmcoll-cuda
SECONDS=0
run() {  # name rep [bench args]
  local name=$1 rep=$2
  shift 2
  timeout 100 $BIN bench --backend cuda --world ${WORLD:-8} --dtype bf16 --sizes 4K:256M:x4 --check-up-to 64M \
    --iters 5 --warmup 1 --machine h200x1 "$@" --csv "$DIR/${name}_r$rep.csv" > "$DIR/${name}_r$rep.log" 2>&1
  local r=$?
  echo "# $name rep $rep: rc $r at ${SECONDS}s; $(grep -c '^cuda' "$DIR/${name}_r$rep.csv" 2>/dev/null) rows; $(grep -m1 -o 'error: .*' "$DIR/${name}_r$rep.log" | cut -c1-170)"
}
fused() {  # name world: the fused bench, ag_mm and mm_rs, every algorithm, 8b and 70b at M 4096, checked
  local name=$1 w=$2
  timeout 150 $BIN bench --backend cuda --world $w --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b,70b --m 4096 \
    --mode both --iters 5 --warmup 1 --machine h200x1 --csv "$DIR/$name.csv" > "$DIR/$name.log" 2>&1
  echo "# $name (world $w): rc $? at ${SECONDS}s; $(grep -c '^cuda' "$DIR/$name.csv" 2>/dev/null) rows; $(grep -m1 -o 'error: .*' "$DIR/$name.log" | cut -c1-170)"
}
if [ "${STEP:-}" = lockstep ]; then
  for rep in 1 2; do
    SYMM_DEBUG_TEAM_LOCKSTEP=0 CUDA_DEVICE_MAX_CONNECTIONS=1 WORLD=2 run q1_off $rep --op reduce_scatter,all_reduce \
      --algo ld_reduce,st_ll_reduce --mode eager --timing-only
    CUDA_DEVICE_MAX_CONNECTIONS=1 WORLD=2 run q1_on $rep --op reduce_scatter,all_reduce --algo ld_reduce,st_ll_reduce \
      --mode eager --timing-only
  done
  for rep in 1 2 3 4; do run rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only; done
  for rep in 1 2; do run dev_timed $rep --op reduce_scatter --algo ld_reduce,st_ll_reduce --mode both --timing-only; done
  exit 0
fi
if [ "${STEP:-}" = lockstep2 ]; then  # the spinning lockstep (Team::lockstep): its proof again, its cost, worlds 4 and 8
  CUDA_DEVICE_MAX_CONNECTIONS=1 SYMM_DEBUG_TEAM_LOCKSTEP=0 WORLD=2 run q1_off 1 --op reduce_scatter,all_reduce \
    --algo ld_reduce,st_ll_reduce --mode eager --timing-only
  for rep in 1 2; do
    CUDA_DEVICE_MAX_CONNECTIONS=1 WORLD=2 run q1_on $rep --op reduce_scatter,all_reduce --algo ld_reduce,st_ll_reduce \
      --mode eager --timing-only
  done
  for w in 2 8; do
    SYMM_DEBUG_TEAM_LOCKSTEP=0 WORLD=$w run w${w}_dev_off 1 --op reduce_scatter,all_reduce --algo ld_reduce,st_ll_reduce \
      --mode eager --timing-only
    WORLD=$w run w${w}_dev_on 1 --op reduce_scatter,all_reduce --algo ld_reduce,st_ll_reduce --mode eager --timing-only
  done
  for rep in 1 2 3; do run dev_timed $rep --op reduce_scatter --algo ld_reduce,st_ll_reduce --mode both --timing-only; done
  for rep in 1 2; do WORLD=4 run w4_rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only; done
  exit 0
fi
if [ "${STEP:-}" = lockstep3 ]; then  # world 8's host plans with the lockstep: two side streams or one, and the whole checked sweep
  for rep in 1 2; do run rs_timed_s2 $rep --op reduce_scatter --algo all --mode both --timing-only --streams 2; done
  run rs_timed 1 --op reduce_scatter --algo all --mode both --timing-only
  run sweep 1 --op all_reduce,reduce_scatter,all_gather --algo all --mode both
  exit 0
fi
if [ "${STEP:-}" = lockstep4 ]; then  # the lockstep within host plans' calls too (PlanExec::set_step): world 8, timing only
  for rep in 1 2 3; do run rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only; done
  run ag_timed 1 --op all_gather --algo all --mode both --timing-only
  run ar_timed 1 --op all_reduce --algo all --mode both --timing-only
  WORLD=4 run w4_timed 1 --op all_reduce,reduce_scatter,all_gather --algo all --mode both --timing-only
  run sweep 1 --op all_reduce,reduce_scatter,all_gather --algo all --mode both
  exit 0
fi
if [ "${STEP:-}" = lockstep5 ]; then  # the same binary again: more world-8 runs, and the fused bench at worlds 4 and 8 (checked)
  for rep in 2 3 4 5; do run rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only; done
  for rep in 2 3; do run sweep $rep --op all_reduce,reduce_scatter,all_gather --algo all --mode both; done
  for w in 4 8; do fused fused_w$w $w; done
  exit 0
fi
if [ "${STEP:-}" = lockstep6 ]; then  # a host plan's lockstep after its flag writes only: world 8 (=writes: that binary's
  # mode only, refused by later binaries)
  export SYMM_DEBUG_TEAM_LOCKSTEP=writes
  for rep in 1 2 3 4; do run w_rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only; done
  run w_ag_timed 1 --op all_gather --algo all --mode both --timing-only
  for rep in 1 2; do run w_sweep $rep --op all_reduce,reduce_scatter,all_gather --algo all --mode both; done
  exit 0
fi
if [ "${STEP:-}" = lockstep7 ]; then  # the committed default (a plan's lockstep after flag writes and launches): worlds 8 and 4
  for rep in 1 2 3; do run d_rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only; done
  run d_sweep 1 --op all_reduce,reduce_scatter,all_gather --algo all --mode both
  WORLD=4 run d_w4_timed 1 --op all_reduce,reduce_scatter,all_gather --algo all --mode both --timing-only
  fused d_fused_w4 4
  exit 0
fi
if [ "${STEP:-}" = w2 ]; then  # a team of 2 with the lockstep as committed: every collective checked, a timing-only repeat, the fused bench
  WORLD=2 run w2_sweep 1 --op all_reduce,reduce_scatter,all_gather --algo all --mode both
  WORLD=2 run w2_timed 2 --op all_reduce,reduce_scatter,all_gather --algo all --mode both --timing-only
  fused w2_fused 2
  exit 0
fi
if [ "${STEP:-}" = round ]; then  # the CUDA verbs' one-step tail (ec6ad13): teams of 2, 4, 8, every collective checked, the fused bench
  for w in 2 4 8; do
    WORLD=$w run r_w${w}_sweep 1 --op all_reduce,reduce_scatter,all_gather --algo all --mode both
    fused r_w${w}_fused $w
  done
  exit 0
fi
if [ "${STEP:-}" = lockstep8 ]; then  # the fused bench with the plans' lockstep too (bench_fused.cpp): worlds 8 and 4, checked
  for w in 8 4; do fused f_fused_w$w $w; done
  exit 0
fi
if [ "${STEP:-}" = small ]; then  # teams of 4 and 2, timing only: do they stop as 8 does?
  for rep in 1 2 3 4 5; do WORLD=4 run w4_rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only; done
  for rep in 1 2 3; do WORLD=2 run w2_rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only; done
  exit 0
fi
if [ "${STEP:-}" = queues ]; then  # hardware queues: 8 ranks x (streams + a probe stream) against CUDA_DEVICE_MAX_CONNECTIONS=32
  export SYMM_DEBUG_LAZY_PROBE=1  # no probe stream until a wait is stuck
  for rep in 1 2 3 4; do run lazy_s2 $rep --op reduce_scatter --algo all --mode both --timing-only --streams 2; done  # 16 streams
  for rep in 1 2 3; do run lazy_s3 $rep --op reduce_scatter --algo all --mode both --timing-only; done  # 24 streams
  exit 0
fi
if [ "${STEP:-}" = order ]; then  # the bench's eager-first passes: the runs that stopped 10 of 10 (w8) and 4 of 5 (w4), then whole checked sweeps
  for rep in 1 2 3 4 5; do run rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only; done
  for rep in 1 2 3; do WORLD=4 run w4_rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only; done
  for rep in 1 2; do run sweep $rep --op all_reduce,reduce_scatter,all_gather --algo all --mode both; done
  exit 0
fi
if [ "${STEP:-}" = fix ]; then  # after a fix: the runs that stopped 10 of 10 (rs_timed) and 1 of 4 (dev_timed)
  for rep in 1 2 3 4 5; do run rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only; done
  for rep in 1 2 3; do run dev_timed $rep --op reduce_scatter --algo ld_reduce,st_ll_reduce --mode both --timing-only; done
  exit 0
fi
if [ "${STEP:-}" = calls ]; then  # the device programs alone, timing only: default calls a sample, and 10
  for rep in 1 2 3 4; do
    run dev_timed $rep --op reduce_scatter --algo ld_reduce,st_ll_reduce --mode both --timing-only
    run dev_calls10 $rep --op reduce_scatter --algo ld_reduce,st_ll_reduce --mode both --timing-only --calls 10
  done
  exit 0
fi
if [ "${STEP:-}" = copies ]; then
  for rep in 1 2 3 4 5; do
    run rs_timed $rep --op reduce_scatter --algo all --mode both --timing-only
    export SYMM_DEBUG_PLAN_COPIES=none
    run rs_nocopies $rep --op reduce_scatter --algo all --mode both --timing-only
    unset SYMM_DEBUG_PLAN_COPIES
  done
  exit 0
fi
for rep in 1 2 3; do
  run eager $rep --op all_reduce,reduce_scatter,all_gather --algo all --mode eager
  run rs_both $rep --op reduce_scatter --algo all --mode both
done
