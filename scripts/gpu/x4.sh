#!/usr/bin/env bash
# One call on a kind that may come as 4x H200 or 4x H100 (nvidia-h200-x4):
#   H200s (two or more): scripts/gpu/h200_pair.sh on GPUs 0 and 1 (the 2x H200 issue's rounds), then,
#     with four, calibrate at world 4 (round.sh 4 step 4: acquire_peer_flags among its rows);
#   H100s (four): round.sh 4 steps 1 and 4 (the fused bench at world 4, every algorithm checked;
#     calibrate at world 4), unless H200_ONLY is set. TILE=1: also the tile GEMM alone on GPU 0 of
#     the H200s (scripts/gpu/tile_cluster2.sh).
#   scripts/gpu/x4.sh <out-dir>   (binary: .carry/symmcoll-cuda)
set -uo pipefail
OUT=${1:?usage: scripts/gpu/x4.sh <out-dir>}
mkdir -p "$OUT"
nvidia-smi -L | tee "$OUT/gpus.txt"
n=$(nvidia-smi -L | wc -l)
h200=$(nvidia-smi -L | grep -c H200)
rc=0
if [ "$h200" -ge 2 ]; then
  bash scripts/gpu/h200_pair.sh "$OUT/pair" || rc=1
  [ "$n" -ge 4 ] && { bash scripts/gpu/round.sh 4 "$OUT/w4" 4 || rc=1; }
  # the tile GEMM alone on GPU 0 (staged epilogue, clusters; each schedule forced)
  [ -n "${TILE:-}" ] && { CUDA_VISIBLE_DEVICES=0 bash scripts/gpu/tile_cluster2.sh "$OUT/tile" h200x1 || rc=1; }
elif [ -n "${H200_ONLY:-}" ]; then
  echo "# H200_ONLY: no H200s here, nothing run"
elif [ "$n" -ge 4 ]; then
  bash scripts/gpu/round.sh 4 "$OUT/w4" 14 || rc=1
else
  echo "# neither two H200s nor four GPUs: nothing run"
fi
exit $rc
