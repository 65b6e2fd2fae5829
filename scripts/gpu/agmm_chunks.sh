#!/usr/bin/env bash
# Is ag_mm.ce_tile_gemm's gap to ce_bulk_gemm its chunking? 70B, M 16384 (and 8B), graph and eager,
# 3 passes: the tile program and the bulk plan at the default chunk rows (half a shard) and at one
# chunk per peer (--chunk-rows = a shard), the matmul alone (cuBLASLt, TileGemm) in every call;
# twice, interleaved.                            -> agmm_chunk<rows>_r<rep>_<m>.log
#   scripts/gpu/agmm_chunks.sh <world> <out-dir>
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh
shard=$((16384 / W))
for rep in 1 2; do
  for rows in 0 $shard; do
    log="$DIR/agmm_chunk${rows}_r${rep}_$M.log"
    timeout 150 $BIN launch -n $W -- $BIN bench --backend cuda --op ag_mm --algo tiles,ce_bulk_gemm --shape 8b,70b \
      --m 16384 --mode both --passes 3 --timing-only --chunk-rows $rows > "$log" 2>&1
    echo "# chunk rows $rows rep $rep: rc $? at ${SECONDS}s"
    grep -E "FAIL|rror" "$log" | head -4
    grep -E "cublaslt |tile_gemm|ce_tile_gemm|ce_bulk" "$log" | grep -v nccl | awk '{print $2, $5, $6, $7, $8}'
  done
done
