#!/usr/bin/env bash
# A block's reduce rate on one GPU (block_reduce_GBps, backends/sim/verbs.cpp): calibrate's
# reduce_peers rows (rank 0's blocks reduce every rank's input into its own output, 1..64 blocks,
# 1M..256M out: within the L2 and beyond it) beside copy_peer (the copy rate block_GBps), as teams of 2, 4 and 8, twice
# each. Usage: scripts/gpu/reduce_calib.sh <out-dir> <machine-name> [binary]
source "$(dirname "$0")/one_gpu_env.sh"
begin reduce_calib "${3:-}"
team_calib reduce reduce_peers,copy_peer
# STEP=bench as well: the reductions that load every rank's input (all_reduce / reduce_scatter
# ld_reduce) at 1..32 blocks a rank, 1M / 16M / 256M, graph, timing only: the per-block rate as the
# whole team runs at once (held-out rows for experiments/fidelity.py: team/run20).
if [ "${STEP:-}" = bench ]; then
  for w in 2 4 8; do
    for op in all_reduce reduce_scatter; do
      run "bench world $w $op" "$B" bench --backend cuda --world $w --op $op --algo ld_reduce \
        --sizes 1M,16M,256M --blocks 1,2,4,8,16,32 --mode graph --timing-only --iters 20 \
        --csv "$DIR/tune_team_${op}_w${w}_$M.csv"
    done
  done
fi
