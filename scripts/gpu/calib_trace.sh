#!/usr/bin/env bash
# The calibration microbenchmarks traced verb by verb (calibrate --trace: the ping-pongs and chains at
# 16 rounds, backends/cuda/verb_trace.h), with the rows of the same run: over NVLink at world 2 when
# two GPUs came (and at world 4, nvlink_w4/, when four did), and a team of 2 ranks on GPU 0 (eager).
# Two H200s: the 2x H200 issue's re-measurement (h200_pair.sh) first.
#   scripts/gpu/calib_trace.sh <out-dir>   (binary: .carry/symmcoll-cuda)
# -> <out>/nvlink/{calibrate_<m>.csv,.log,traces/}  <out>/team/{calibrate_team_<m1>.csv,.log,traces/}
OUT=${1:?usage: scripts/gpu/calib_trace.sh <out-dir>}
NG=$(nvidia-smi -L | grep -c GPU)
W=$(( NG >= 2 ? 2 : 1 ))
set -- $W "$OUT"
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh  # safety variables, GPUs, BIN, SHA, DIR, M, GPU
nvidia-smi -L | tee "$DIR/gpus.txt"
$BIN --version | tee "$DIR/version.txt"
if [ "$(nvidia-smi -L | grep -c H200)" -ge 2 ]; then
  timeout 400 bash scripts/gpu/h200_pair.sh "$DIR/h200_pair"
  echo "# h200_pair: rc $? at ${SECONDS}s"
fi
if [ "$W" -ge 2 ]; then
  mkdir -p "$DIR/nvlink"
  timeout 240 env CUDA_VISIBLE_DEVICES=0,1 $BIN launch -n 2 -- $BIN calibrate --backend cuda \
    --csv "$DIR/nvlink/calibrate_$M.csv" --trace "$DIR/nvlink/traces" > "$DIR/nvlink/calibrate_$M.log" 2>&1
  echo "# calibrate world 2 traced: rc $? at ${SECONDS}s, $(grep -c '# trace:' "$DIR/nvlink/calibrate_$M.log") traces"
  grep -E "error|FAIL" "$DIR/nvlink/calibrate_$M.log" | head
fi
if [ "$NG" -ge 4 ]; then
  M4=${GPU}x4
  mkdir -p "$DIR/nvlink_w4"
  timeout 240 env CUDA_VISIBLE_DEVICES=0,1,2,3 $BIN launch -n 4 -- $BIN calibrate --backend cuda \
    --csv "$DIR/nvlink_w4/calibrate_$M4.csv" --trace "$DIR/nvlink_w4/traces" > "$DIR/nvlink_w4/calibrate_$M4.log" 2>&1
  echo "# calibrate world 4 traced: rc $? at ${SECONDS}s, $(grep -c '# trace:' "$DIR/nvlink_w4/calibrate_$M4.log") traces"
  grep -E "error|FAIL" "$DIR/nvlink_w4/calibrate_$M4.log" | head
fi
mkdir -p "$DIR/team"
timeout 200 env CUDA_VISIBLE_DEVICES=0 $BIN calibrate --backend cuda --world 2 \
  --csv "$DIR/team/calibrate_team_${GPU}x1.csv" --trace "$DIR/team/traces" > "$DIR/team/calibrate_team_${GPU}x1.log" 2>&1
echo "# calibrate team of 2 traced: rc $? at ${SECONDS}s, $(grep -c '# trace:' "$DIR/team/calibrate_team_${GPU}x1.log") traces"
grep -E "error|FAIL" "$DIR/team/calibrate_team_${GPU}x1.log" | head
for f in "$DIR"/*/traces/*.json; do
  [ -f "$f" ] && python3 experiments/verb_compare.py "$f" --machine - > "${f%.json}.steps.md" 2>&1
  [ -f "$f" ] && xz -T4 -9 "$f"
done
rm -f "$DIR"/*/traces/*.stamps.*.csv
du -sh "$DIR"
