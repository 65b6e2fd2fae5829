#!/usr/bin/env bash
# One-GPU device call (kind nvidia-h200 or nvidia-h100-x1; whichever GPU comes names the rows):
#   1. scripts/gpu/single.sh: the per-GPU calibration, with local_reduce_chain (a block's reduces
#      of one local vector one after another, each from a line of its own: local_load_us)
#                                                        -> <out>/calib/calibrate_<m>.csv / .log
#   2. on an H200 only: scripts/gpu/tile_cluster2.sh, the tile GEMM beside cuBLASLt at the fused
#      shapes with the staged epilogue (H200's tile model was last measured before it)
#                                                        -> <out>/tile/
#   scripts/gpu/local_reduce.sh <out-dir>   (binary: .carry/symmcoll-cuda)
set -uo pipefail
DIR=${1:?usage: scripts/gpu/local_reduce.sh <out-dir>}
mkdir -p "$DIR"
if nvidia-smi -L | head -1 | grep -q H200; then M=h200x1; else M=h100x1; fi
echo "# GPU: $(nvidia-smi -L | head -1) -> $M"
bash scripts/gpu/single.sh "$DIR/calib" "$M"
rc=$?
grep "^local_reduce_chain\|^load_chain\|^acquire_chain" "$DIR/calib/calibrate_$M.csv"
if [ "$M" = h200x1 ]; then
  bash scripts/gpu/tile_cluster2.sh "$DIR/tile" "$M" || rc=1
fi
exit $rc
