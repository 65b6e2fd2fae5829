#!/usr/bin/env bash
# The one-GPU team of 4's stop in a sequence of mm_rs plans (h100x1/team/run10): 8B at M 4096 then
# 16384 with every algorithm, without the tile programs, and the tile programs then the ring plan.
#   scripts/gpu/team4_seq.sh <out-dir> <machine-name>
source scripts/gpu/one_gpu_env.sh
mkdir -p "$DIR"
B=".carry/symmcoll-cuda bench --backend cuda"
T="$DIR/team4_seq.log"; : > "$T"
for algo in all gemm_ce_ring_reduce,gemm_ce_acc,gemm_st_chunk_reduce,gemm_ce_tile_acc tiles,tiles_push,gemm_ce_ring_reduce \
    gemm_ce_tile_acc,gemm_ce_ring_reduce; do
  echo "### team of 4, mm_rs --algo $algo, 8b M 4096,16384" >> "$T"
  timeout 120 $B --world 4 --op mm_rs --algo $algo --dtype bf16 --shape 8b --m 4096,16384 --mode both --iters 5 \
    --warmup 1 --machine $M >> "$T" 2>&1
  echo "### rc $?" >> "$T"
done
grep -E "^###|FAIL|check failure|error" "$T"
