#!/usr/bin/env bash
# A barrier crossed by more blocks at once on one GPU (fence_gap_us, fence_crowd_us and
# fence_crowd_blocks, backends/sim/sim.h): calibrate's barrier_blocks rows (1, 4 and 16 rounds of
# the collectives' barrier, acquire / release and relaxed, at 1..64 blocks a rank) as teams of 2, 4
# and 8, twice each. Usage: scripts/gpu/barrier_calib_team.sh <out-dir> <machine-name> [binary]
source "$(dirname "$0")/one_gpu_env.sh"
begin barrier_calib "${3:-}"
team_calib barrier barrier_blocks,barrier_blocks_relaxed
# STEP=bench as well: the programs that pull (loads, then a barrier: all_gather.ld, the ld_reduce
# reductions) beside the push (all_gather.st) at 4K and 64K, 1..64 blocks a rank, graph, timing
# only: the same mechanism in the collectives (held-out rows for experiments/fidelity.py, read as
# the team's tune rows).
if [ "${STEP:-}" = bench ]; then
  for w in 2 4 8; do
    for spec in "all_gather ld,st" "reduce_scatter ld_reduce" "all_reduce ld_reduce"; do
      set -- $spec
      run "bench world $w $1" "$B" bench --backend cuda --world $w --op $1 --algo $2 \
        --sizes 4K,64K --blocks 1,2,4,8,16,32,64 --mode graph --timing-only --iters 20 \
        --csv "$DIR/tune_team_${1}_w${w}_$M.csv"
    done
  done
fi
