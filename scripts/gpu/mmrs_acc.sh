#!/usr/bin/env bash
# The mm_rs tile program without a reduce pass (mm_rs.tile_st_peer_acc, "tiles_acc": the owner adds
# the peers' tiles in its own tiles' epilogue) beside the tile programs that reduce (tiles, tiles_push)
# and our tile GEMM alone, at world W, sustained: 70B M 16384, graph replays, timing only, every run
# a few seconds on every GPU, nvidia-smi every 20 ms (scripts/gpu/power_samples.sh), each run's window
# stamped; then tiles_acc's diagnosis modes (SYMM_DEBUG_MMRS_TILES): no-reduce (no acquires: the
# signals and the NVLink stores kept) and compute-only (no acquires, inputs or signals). The list
# twice, in turn. experiments/fused_power.py reads the folder.
#   scripts/gpu/mmrs_acc.sh <world> <out-dir>   -> run_<rep>_<name>_<m>.log, stamps_<m>.txt, smipow_<m>.csv
source scripts/gpu/nvlink_env.sh
ITERS=${ITERS:-400}
source scripts/gpu/power_samples.sh
K=8192
program() { mmrs_sustained "$@"; }  # name algo [mode] (power_samples.sh)
for rep in 1 2; do
  gemm_alone tile_rs tile 16384,3584,$((K / W))
  program tiles tiles
  program tiles_push tiles_push
  program tiles_acc tiles_acc
  program acc_no_reduce tiles_acc no-reduce
  program acc_compute_only tiles_acc compute-only
  sleep 1
done
