#!/usr/bin/env bash
# The mm_rs tile program's compute-only time against the TileGemm program's at world W (the ~40 us
# at 70B M 16384, world 4, of h100x4/mmrs_diag_17b4f7d): is it the symmetric heap its tiles are
# stored into? In turn, twice, timing only, 70B and 8B M 16384, graph and eager, 3 passes per call:
#   base          the baselines (cublaslt, tile_gemm into plain memory) and the program compute-only
#   heap          tile_gemm storing into the symmetric scratch (SYMM_DEBUG_TILE_GEMM_C=heap)
#   plain         the program compute-only storing into plain memory (SYMM_DEBUG_MMRS_TILES=compute-plain)
#   scripts/gpu/mmrs_heap.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
for rep in 1 2; do
  for v in base heap plain; do
    f="$DIR/heap_${rep}_${v}_$M.log"
    echo "# $v rep $rep starts at ${SECONDS}s $(date +%T.%N)" >> "$DIR/smi_marks_$M.txt"
    e=(SYMM_DEBUG_MMRS_TILES=compute-only)
    [ $v = heap ] && e+=(SYMM_DEBUG_TILE_GEMM_C=heap)
    [ $v = plain ] && e=(SYMM_DEBUG_MMRS_TILES=compute-plain)
    timeout 150 env "${e[@]}" $L $BIN bench --backend cuda --op mm_rs --algo tiles --dtype bf16 --shape 70b,8b \
      --m 16384 --mode both --passes 3 --timing-only --csv "$DIR/heap_${rep}_${v}_$M.csv" > "$f" 2>&1
    echo "# $v rep $rep: rc $? at ${SECONDS}s"
    grep -E "^mm_rs " "$f" | awk '{print "   ", $0}' | cut -c1-120
  done
done
