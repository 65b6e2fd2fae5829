#!/usr/bin/env bash
# How fast a one-GPU team's collectives move bytes beyond the L2 as their blocks a rank vary: the
# team's all_gather.ld / st at 64M and 256M measured 1.92-1.95 TB/s of copied bytes at their default
# 33-64 blocks a rank (team/run21), above calibrate's copy_local at 132 blocks a rank (1.65-1.77, the
# hbm_GBps the team files carry). Teams of 2, 4 and 8, 8..132 blocks a rank, graph, timing only, beside
# copy_local (calibrate --rows copy_local) in the same call.
# Usage: scripts/gpu/team_hbm_blocks.sh <out-dir> <machine-name> [binary]
source "$(dirname "$0")/one_gpu_env.sh"
begin hbm_blocks "${3:-}"
team_calib hbm copy_local
for w in 2 4 8; do
  run "bench world $w" "$B" bench --backend cuda --world $w --op all_gather --algo ld,st \
    --sizes 64M,256M --blocks 8,16,32,64,132 --mode graph --timing-only --iters 10 \
    --csv "$DIR/blocks_team_all_gather_w${w}_$M.csv"
done
