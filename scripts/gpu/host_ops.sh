#!/usr/bin/env bash
# What the host spends enqueuing each kind of item of an eager host plan (calibrate's host_* rows,
# apps/harness/cuda/host_ops_probe.h), beside the launch and plan_flag rows, on one GPU: one rank
# three times, then a team of 2 (two host threads enqueuing at once) twice. Binary carried
# (.carry/symmcoll-cuda). STEP=bench: the bench's eager plan calls, the host's time per call
# (SYMM_DEBUG_HOST_ENQUEUE), a team of 2, lockstep off and on; STEP=items: lockstep off, the executor's host
# time by item kind, the plans' waits in kernels and as stream waits; STEP=turns: the ranks enqueue each call in
# turn (one host thread at a time), teams of 2 and 4.   [STEP=bench|items|turns] scripts/gpu/host_ops.sh <out-dir>  -> <out-dir>/host_w<world>_r<rep>.csv / .log
source scripts/gpu/one_gpu_env.sh "${1:-}" h200x1  # safety variables, one GPU, DIR
mkdir -p "$DIR"
BIN=.carry/symmcoll-cuda
SECONDS=0
ROWS='host_*,launch,plan_flag,plan_flag_batch'
if [ "${STEP:-}" = turns ]; then  # the same, the ranks enqueueing each call in turn (one host thread at a time, SYMM_DEBUG_HOST_TURNS), teams of 2 and 4
  for w in 2 4; do
    for kw in 0 1; do
      timeout 150 env SYMM_DEBUG_HOST_ENQUEUE=1 SYMM_DEBUG_HOST_TURNS=1 SYMM_DEBUG_TEAM_LOCKSTEP=0 SYMM_PLAN_KERNEL_WAITS=$kw \
        $BIN bench --backend cuda --world $w --dtype bf16 --op all_gather,reduce_scatter --algo all --sizes 4K,1M,8M --mode eager \
        --timing-only --iters 20 --warmup 2 --machine h200x1 --csv "$DIR/turns_w${w}_kw${kw}.csv" > "$DIR/turns_w${w}_kw${kw}.log" 2>&1
      echo "# turns, world $w, kernel waits $kw: rc $? at ${SECONDS}s"
    done
  done
  exit 0
fi
if [ "${STEP:-}" = items ]; then  # the same, lockstep off, with the executor's host time by item kind; plan waits in kernels (the team default) and as stream waits (as on NVLink)
  for kw in 1 0; do
    for rep in 1 2; do
      timeout 150 env SYMM_DEBUG_HOST_ENQUEUE=1 SYMM_DEBUG_TEAM_LOCKSTEP=0 SYMM_PLAN_KERNEL_WAITS=$kw $BIN bench --backend cuda \
        --world 2 --dtype bf16 --op all_reduce,all_gather,reduce_scatter --algo all --sizes 4K,1M,8M --mode eager --timing-only \
        --iters 20 --warmup 2 --machine h200x1 --csv "$DIR/items_kw${kw}_r$rep.csv" > "$DIR/items_kw${kw}_r$rep.log" 2>&1
      echo "# items, kernel waits $kw, rep $rep: rc $? at ${SECONDS}s"
    done
  done
  exit 0
fi
if [ "${STEP:-}" = bench ]; then  # the host's time per eager plan call in the bench (SYMM_DEBUG_HOST_ENQUEUE), a team of 2, lockstep off and on
  for ls in 0 1; do
    for rep in 1 2; do
      timeout 150 env SYMM_DEBUG_HOST_ENQUEUE=1 SYMM_DEBUG_TEAM_LOCKSTEP=$ls $BIN bench --backend cuda --world 2 --dtype bf16 \
        --op all_gather,reduce_scatter --algo all --sizes 4K,1M,8M --mode eager --timing-only --iters 20 --warmup 2 \
        --machine h200x1 --csv "$DIR/enq_ls${ls}_r$rep.csv" > "$DIR/enq_ls${ls}_r$rep.log" 2>&1
      echo "# bench, lockstep $ls, rep $rep: rc $? at ${SECONDS}s"
    done
  done
  exit 0
fi
for rep in 1 2 3; do
  timeout 120 $BIN calibrate --backend cuda --rows "$ROWS" --csv "$DIR/host_w1_r$rep.csv" > "$DIR/host_w1_r$rep.log" 2>&1
  echo "# one rank, rep $rep: rc $? at ${SECONDS}s"
done
for rep in 1 2; do
  timeout 120 $BIN calibrate --backend cuda --world 2 --rows "$ROWS" --csv "$DIR/host_w2_r$rep.csv" > "$DIR/host_w2_r$rep.log" 2>&1
  echo "# team of 2, rep $rep: rc $? at ${SECONDS}s"
done
grep -h '^host_' "$DIR"/host_w*_r*.csv | sort
