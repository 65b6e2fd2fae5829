#!/usr/bin/env bash
# The mm_rs ring plan's eager calls against its graph replays at world 2 (the `run` tool, binary
# carried): mm_rs ce, ce_acc at 70B and 8B M 16384 with --streams 2 and 3, interleaved, three times;
# timing only, logs (the knob refuses --csv)                     -> s<streams>_r<rep>.log
#   scripts/gpu/eager_w2.sh <out-dir>
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh 2 "$1"
for rep in 1 2 3; do for s in 2 3; do
  timeout 100 $BIN launch -n 2 -- $BIN bench --backend cuda --op mm_rs --algo ce,ce_acc --shape 70b,8b --m 16384 \
    --mode both --timing-only --streams $s > "$DIR/s${s}_r$rep.log" 2>&1
  echo "# streams $s rep $rep: rc $? at ${SECONDS}s"; grep -E "^mm_rs +(mm_rs|cublaslt)" "$DIR/s${s}_r$rep.log" | awk '$6==8192'
done; done
