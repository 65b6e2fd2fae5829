#!/usr/bin/env bash
# Where the mm_rs tile programs' time goes at world W (experiments/results/h100x4/mmrs_diag_*): the
# programs as they are, without their reduce (no-reduce: no acquires, no reduce; the tiles' stores
# and signals stay) and compute-only (no reduce, no signals), SYMM_DEBUG_MMRS_TILES (timing only,
# results unchecked), at 70B and 8B M 16384, graph and eager, 3 passes per call, the three in turn,
# twice; the baselines (cublaslt, tile_gemm) in every call. nvidia-smi's clock and power beside it.
#   scripts/gpu/mmrs_diag.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
for rep in 1 2; do
  for dbg in program no-reduce compute-only; do
    f="$DIR/diag_${rep}_${dbg}_$M.log"
    echo "# $dbg rep $rep starts at ${SECONDS}s $(date +%T.%N)" >> "$DIR/smi_marks_$M.txt"
    v=$dbg; [ $dbg = program ] && v=""
    timeout 150 env SYMM_DEBUG_MMRS_TILES=$v $L $BIN bench --backend cuda --op mm_rs \
      --algo tiles,tiles_push --dtype bf16 --shape 70b,8b --m 16384 --mode both --passes 3 \
      --timing-only --csv "$DIR/diag_${rep}_${dbg}_$M.csv" > "$f" 2>&1
    echo "# $dbg rep $rep: rc $? at ${SECONDS}s"
    grep -E "^mm_rs " "$f" | awk '{print "   ", $0}' | cut -c1-150
  done
done
