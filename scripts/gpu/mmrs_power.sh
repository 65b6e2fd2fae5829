#!/usr/bin/env bash
# Is the mm_rs tile programs' cost over their compute-only walk the GPUs' power limit? At world W,
# each run sustained for a few seconds on every GPU (70B M 16384, graph replays, timing only),
# nvidia-smi every 20 ms (scripts/gpu/power_samples.sh: clock, power, the power-cap event bit), each
# run's window stamped: our tile GEMM alone at the per-rank shape (M x N x K/W, gemm-bench, every GPU
# at once), then the pull program (tiles) as the program, without the side lanes' reduce (no-side),
# without any reduce (no-reduce) and without reduce and signals (compute-only), the diagnosis modes of
# SYMM_DEBUG_MMRS_TILES; the whole list twice, in turn. experiments/fused_power.py reads the run.
#   scripts/gpu/mmrs_power.sh <world> <out-dir>   -> run_<rep>_<name>_<m>.log, stamps_<m>.txt, smipow_<m>.csv
source scripts/gpu/nvlink_env.sh
ITERS=${ITERS:-400}
source scripts/gpu/power_samples.sh
K=8192
program() { mmrs_sustained "$1" tiles "$2"; }  # name mode (power_samples.sh)
for rep in 1 2; do
  gemm_alone tile_rs tile 16384,3584,$((K / W))
  program tiles ""
  program no_side no-side
  program no_reduce no-reduce
  program compute_only compute-only
  sleep 1
done
