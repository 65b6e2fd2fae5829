#!/usr/bin/env bash
# The in-process team's fixes on one GPU (the device tool), from the repository root, binary in .carry/:
#   scripts/gpu/team_fix.sh <out-dir> <machine-name>
# fused correctness at 8 ranks (every fused plan; the GEMMs primed before any flag wait), calibrate
# at 4 ranks (the plan wait probe released after every rank reported), the fused bench at 2 and 4
# ranks with room to finish. -> team_fix_<m>.log, calibrate_team_w4_<m>.csv, fused_team_<m>.csv
. "$(dirname "$0")/one_gpu_env.sh" "$@"
B=".carry/symmcoll-cuda"
L=$DIR/team_fix_$M.log; : > "$L"
SECONDS=0
step() { local t=$1; shift; echo "### $* (timeout $t s, at ${SECONDS}s)" >> "$L"; timeout $t "$@" >> "$L" 2>&1; echo "### rc $? at ${SECONDS}s" >> "$L"; }
step 100 $B bench --backend cuda --world 8 --op ag_mm,mm_rs --algo all --dtype bf16,fp16 --n 512 --k 1024 \
  --m 256,1536 --chunk-rows 32 --no-timing --replays 100
step 60 $B calibrate --backend cuda --world 4 --csv "$DIR/calibrate_team_w4_$M.csv"
for w in 2 4; do
  step 150 $B bench --backend cuda --world $w --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b,70b \
    --m 4096,16384 --mode both --iters 5 --warmup 1 --machine $M --csv "$DIR/fused_team_${M}_w$w.csv"
done
{ cat "$DIR/fused_team_${M}_w2.csv"; grep -vE "^(#|backend,)" "$DIR/fused_team_${M}_w4.csv"; } > "$DIR/fused_team_$M.csv" 2>/dev/null
rm -f "$DIR"/fused_team_${M}_w?.csv
grep -E "^###|FAIL|error|check failure|probe \(" "$L"
