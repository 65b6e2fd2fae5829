#!/usr/bin/env bash
# The L2's rows on one GPU: calibrate's device rows (device_l2_bytes) and copy_local at every size
# (1M and 4M fit in the L2 with a team of 4; 16M..256M do not), alone and as teams of 2, 4 and 8,
# twice each. Usage: scripts/gpu/l2_calib.sh <out-dir> <machine-name> [binary]
source "$(dirname "$0")/one_gpu_env.sh"
begin l2_calib "${3:-}"
for rep in 1 2; do
  run "rep $rep world 1" "$B" calibrate --backend cuda --rows copy_local,launch --csv "$DIR/calibrate_l2_w1_${rep}_$M.csv"
  for w in 2 4 8; do
    run "rep $rep world $w" "$B" calibrate --backend cuda --world $w --rows copy_local,launch \
      --csv "$DIR/calibrate_l2_team_w${w}_${rep}_$M.csv"
  done
done
