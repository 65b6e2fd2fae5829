#!/usr/bin/env bash
# Which mm_rs plan stops a one-GPU team of 4 at 8B M 16384 (h100x1/team/run10): each plan alone,
# checked and timed, each call under its own bound.
#   scripts/gpu/team4_plans.sh <out-dir> <machine-name>
source scripts/gpu/one_gpu_env.sh
mkdir -p "$DIR"
B=".carry/symmcoll-cuda bench --backend cuda"
T="$DIR/team4_plans.log"; : > "$T"
for algo in gemm_ce_ring_reduce gemm_ce_acc gemm_st_chunk_reduce gemm_ce_tile_acc tiles; do
  echo "### team of 4, mm_rs $algo, 8b M 16384" >> "$T"
  timeout 90 $B --world 4 --op mm_rs --algo $algo --dtype bf16 --shape 8b --m 16384 --mode both --iters 5 --warmup 1 \
    --machine $M >> "$T" 2>&1
  echo "### rc $?" >> "$T"
done
grep -E "^###|FAIL|check failure|error" "$T"
