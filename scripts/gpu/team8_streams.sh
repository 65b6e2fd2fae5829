#!/usr/bin/env bash
# The one-GPU team's world-8 stall (h200x1/team/run17: the full collective sweep stopped 3 of 3 times
# on a host plan's flag wait, where the copy-engine plans alone, eager, never did): the same sweep
# (team.sh's world 8: every collective, 4K..256M x4, graph and eager, checked up to 64M) with
# --streams 2 (24 streams in the process, probe streams counted, against 32 at the default 3; the
# GPU's CUDA_DEVICE_MAX_CONNECTIONS is 32) and with the default, in turn, three times. Binary carried.
#   scripts/gpu/team8_streams.sh <out-dir>   -> <out-dir>/s<streams>_r<rep>.csv / .log
source scripts/gpu/one_gpu_env.sh "${1:-}" h200x1  # safety variables, one GPU, DIR
mkdir -p "$DIR"
BIN=.carry/symmcoll-cuda
SECONDS=0
for rep in 1 2 3; do
  for s in 2 3; do
    timeout 110 $BIN bench --backend cuda --world 8 --op all_reduce,reduce_scatter,all_gather --algo all \
      --dtype bf16 --sizes 4K:256M:x4 --mode both --check-up-to 64M --iters 5 --warmup 1 --streams $s \
      --machine h200x1 --csv "$DIR/s${s}_r$rep.csv" > "$DIR/s${s}_r$rep.log" 2>&1
    r=$?
    echo "# streams $s rep $rep: rc $r at ${SECONDS}s; $(grep -c '^cuda' "$DIR/s${s}_r$rep.csv" 2>/dev/null) rows; $(grep -m1 -o 'error: .*' "$DIR/s${s}_r$rep.log" | cut -c1-160)"
  done
done
