#!/usr/bin/env bash
# The one-GPU team of 4 at the fused shapes, mm_rs only (h100x1/team/run10): the tile programs
# alone, then every mm_rs algorithm, each call under its own bound, as tile_round.sh step 2.
#   scripts/gpu/team4_mmrs.sh <out-dir> <machine-name>
source scripts/gpu/one_gpu_env.sh
mkdir -p "$DIR"
B=".carry/symmcoll-cuda bench --backend cuda"
T="$DIR/team4_mmrs.log"; : > "$T"
for algo in tiles,tiles_push all; do
  echo "### team of 4, mm_rs --algo $algo" >> "$T"
  timeout 200 $B --world 4 --op mm_rs --algo $algo --dtype bf16 --shape 8b,70b --m 4096,16384 --mode both --iters 5 \
    --warmup 1 --machine $M --csv "$DIR/team4_mmrs_${algo//,/_}_$M.csv" >> "$T" 2>&1
  echo "### rc $?" >> "$T"
done
grep -E "^###|FAIL|check failure|error" "$T"
