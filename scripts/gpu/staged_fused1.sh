#!/usr/bin/env bash
# One GPU, after the staged epilogue reached the fused tile programs: the GEMM round of
# scripts/gpu/tile_staged.sh (checks, both epilogues timed, ncu), then scripts/gpu/tile_fused.sh
# (every fused plan and tile program checked in one-GPU teams of 2 and 4, bf16 / fp16; the tile
# programs timed at world 2 and 1).  scripts/gpu/staged_fused1.sh <out-dir> <machine>
set -uo pipefail
DIR=${1:?usage: scripts/gpu/staged_fused1.sh <out-dir> <machine>}
M=${2:?usage: scripts/gpu/staged_fused1.sh <out-dir> <machine>}
export BIN=${BIN:-.carry/symmcoll-cuda}
bash scripts/gpu/tile_staged.sh "$DIR/gemm" "$M"; rc=$?
bash scripts/gpu/tile_fused.sh "$DIR/fused" "$M" || rc=1
exit $rc
