#!/usr/bin/env bash
# What the mm_rs tile programs' walk costs over the GEMM alone at world W (timing only, results
# unchecked: the diagnosis modes of SYMM_DEBUG_MMRS_TILES, backends/cuda/tile_fused.cu):
#   1. gemm-bench on GPU 0, the per-rank matmul (M x N x K/W) in each schedule: auto (what the
#      fused bench's tile_gemm row runs), coop 128 x 256 (the tile programs' kernel), ping-pong
#      -> gemm_<schedule>_<m>.log
#   2. the pull program without its reduce and signals (compute-only) and with its tiles stored into
#      plain memory (compute-plain), in the default bands and in one band (--chunk-rows = the rows of
#      an owner), 70B and 8B M 16384, graph and eager, 3 passes, each call with the baselines, twice
#      -> walk_<rep>_<mode>_<bands>_<m>.log / .csv
#   scripts/gpu/mmrs_walk.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
for sched in auto coop pingpong; do
  opt=(); [ $sched = coop ] && opt=(--cluster 1) # the tile programs launch no clusters
  for shape in "16384,3584,$((8192 / W))" "16384,1792,$((4096 / W))"; do
    CUDA_VISIBLE_DEVICES=0 timeout 120 $BIN gemm-bench --shapes "$shape" --schedule $sched --iters 200 --warmup 20 \
      --timing-only ${opt[@]+"${opt[@]}"} >> "$DIR/gemm_${sched}_$M.log" 2>&1
  done
  echo "# gemm $sched: $(grep -E '^bf16' "$DIR/gemm_${sched}_$M.log" | cut -c1-130 | tr '\n' ';')"
done
for rep in 1 2; do
  for mode in compute-only compute-plain; do
    for bands in default one; do
      extra=()
      [ $bands = one ] && extra=(--chunk-rows $((16384 / W)))
      f="$DIR/walk_${rep}_${mode}_${bands}_$M"
      timeout 150 env SYMM_DEBUG_MMRS_TILES=$mode $BIN launch -n $W -- $BIN bench --backend cuda --op mm_rs \
        --algo tiles --dtype bf16 --shape 70b,8b --m 16384 --mode both --passes 3 --timing-only \
        ${extra[@]+"${extra[@]}"} > "$f.log" 2>&1
      echo "# $rep $mode $bands: rc $?"
      grep -E "^mm_rs .*(tile_st_ld_reduce|tile_gemm) " "$f.log" | awk '{print "   ", $2, $5, $7, $8}'
    done
  done
done
