#!/usr/bin/env bash
# The world-8 stall on one GPU: where each rank's host thread is while its peers wait. Runs of
# reduce_scatter alone, world 8, graph and eager, timing only (they stop most often), with every wait
# bounded at 20 s (SYMM_WAIT_TIMEOUT_S, --plan-timeout) and the bench's steps on stderr
# (SYMM_DEBUG_BENCH_STEPS=1: rank, thread id, step). When the log has had no new line for 5 s, every
# thread's kernel wait channel, kernel stack and state go to stacks_r<rep>.txt (the thread ids map them to
# ranks), with nvidia-smi's view of the GPU. Binary carried.
#   scripts/gpu/team8_stacks.sh <out-dir> [runs, default 5]     -> <out-dir>/r<rep>.log, stacks_r<rep>.txt
source scripts/gpu/one_gpu_env.sh "${1:-}" h200x1
mkdir -p "$DIR"
BIN=$PWD/.carry/symmcoll-cuda
SECONDS=0
for rep in $(seq 1 "${2:-5}"); do
  L="$DIR/r$rep.log"
  SYMM_DEBUG_BENCH_STEPS=1 SYMM_WAIT_TIMEOUT_S=20 timeout 120 $BIN bench --backend cuda --world 8 --dtype bf16 \
    --sizes 4K:256M:x4 --iters 5 --warmup 1 --machine h200x1 --op reduce_scatter --algo all --mode both --timing-only \
    --plan-timeout 20 > "$L" 2>&1 &
  B=$!
  last=0 still=0 dumped=0
  while kill -0 $B 2>/dev/null; do
    sleep 1
    n=$(wc -l < "$L")
    if [ "$n" = "$last" ]; then still=$((still + 1)); else still=0 last=$n; fi
    if [ $still -ge 5 ] && [ $dumped = 0 ]; then
      dumped=1
      P=$(pgrep -P $B | head -1)  # the bench, under timeout
      {
        echo "# pid $P at ${SECONDS}s, log lines $n"
        for t in /proc/$P/task/*; do
          echo "== tid ${t##*/} $(cat $t/comm) state $(awk '/^State/ {print $2}' $t/status) wchan $(cat $t/wchan 2>/dev/null)"
          cat $t/stack 2>/dev/null | head -12
        done
        nvidia-smi --query-gpu=utilization.gpu,power.draw,clocks.sm --format=csv
      } > "$DIR/stacks_r$rep.txt" 2>&1
    fi
  done
  wait $B
  echo "# r$rep: rc $? at ${SECONDS}s; dumped $dumped; $(grep -m1 -o 'error: .*' "$L" | cut -c1-160)"
done
