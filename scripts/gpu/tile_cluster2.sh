#!/usr/bin/env bash
# After the coop tile GEMM took clusters of two by default: the full one-GPU GEMM round
# (scripts/gpu/tile_gemm.sh: checks, fused shapes bf16 + fp16 beside cuBLASLt, ncu --set full at
# 16384 x 3584 x 8192), then each schedule forced on the fused shapes (coop in clusters of two,
# coop alone, ping-pong), cuBLASLt beside each, so auto's choice can be judged.
#   scripts/gpu/tile_cluster2.sh <out-dir> <machine>   (binary: .carry/symmcoll-cuda)
set -uo pipefail
DIR=${1:?usage: scripts/gpu/tile_cluster2.sh <out-dir> <machine>}
M=${2:?usage: scripts/gpu/tile_cluster2.sh <out-dir> <machine>}
export BIN=${BIN:-.carry/symmcoll-cuda} CUDA_VISIBLE_DEVICES=0
bash scripts/gpu/tile_gemm.sh "$DIR" "$M"
rc=$?
for v in "coop --cluster 2" "coop --cluster 1" "pingpong"; do
  tag=$(echo "$v" | tr -d ' -')
  timeout 150 $BIN gemm-bench --shapes fused --dtype bf16 --schedule $v --iters 60 --warmup 10 --timing-only \
    --machine "$M" --out "$DIR/sched_${tag}_$M.csv" > "$DIR/sched_${tag}_$M.log" 2>&1 || rc=1
  echo "# $v"
  grep -v "^#" "$DIR/sched_${tag}_$M.log" | awk '{print $2, $3, $4, $5, $(NF-5), $(NF-4), $(NF-3)}'
done
exit $rc
