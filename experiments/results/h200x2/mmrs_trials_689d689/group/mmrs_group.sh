#!/usr/bin/env bash
# The mm_rs tile programs' tile order within a band (SYMM_DEBUG_MMRS_GROUP, backends/cuda/tile_fused.cu):
# the layout's groups of up to 16 tile rows, column-major inside a group, finish a tile row only at
# the band's last column, so no reduce task of the band is ready before the band's last tiles; in
# groups of G = 1 (row-major) a band's tile rows finish one after another. At world W:
#   1. checks with G = 1 and 2 (fused bench --no-timing, 20 graph replays, bf16 and fp16, float64 and
#      NCCL + cuBLASLt references): M 512 / 4096 x 512 x 1024 at the default bands and 256-row bands,
#      a team of 2W, 70B M 16384                                        -> check.log
#   2. timing, tiles and tiles_push, 70B and 8B M 16384 and 4096, graph and eager, 3 passes a call,
#      G in MG_GROUPS (default "0 1 2 4"; 0 = the layout's), interleaved twice -> group_<g>_<pass>_<m>.log
#   scripts/gpu/mmrs_group.sh <world> <out-dir> [steps, default 12]
DEFAULT_STEPS=12
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
B="$BIN bench --backend cuda"
step1() {
  local C=$DIR/check.log; : > "$C"
  for g in 1 2; do
    for opt in "--chunk-rows 0" "--chunk-rows 256"; do
      for m in 512 4096; do
        echo "### G $g, world $W, M $m, $opt" >> "$C"
        timeout 60 env SYMM_DEBUG_MMRS_GROUP=$g $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 --m $m \
          --n 512 --k 1024 $opt --no-timing --replays 20 >> "$C" 2>&1
        echo "### rc $?" >> "$C"
      done
    done
    echo "### G $g, team of $((2 * W))" >> "$C"
    timeout 60 env SYMM_DEBUG_MMRS_GROUP=$g $B --world $((2 * W)) --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 \
      --m 4096 --n 512 --k 1024 --chunk-rows 256 --no-timing --replays 20 >> "$C" 2>&1
    echo "### rc $?" >> "$C"
    echo "### G $g, world $W, 70b M 16384" >> "$C"
    timeout 90 env SYMM_DEBUG_MMRS_GROUP=$g $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b --m 16384 \
      --no-timing >> "$C" 2>&1
    echo "### rc $?" >> "$C"
  done
  echo "# 1 check: at ${SECONDS}s"; grep -E "^### rc|FAIL|rror" "$C" | sort | uniq -c | head -20
}
step2() {
  for pass in 1 2; do
    for g in ${MG_GROUPS:-0 1 2 4}; do
      base="--no-baselines"; [ $pass = 1 ] && [ $g = 0 ] && base=""
      f="$DIR/group_${g}_${pass}_$M.log"
      echo "# G $g pass $pass starts at ${SECONDS}s $(date +%T.%N)" >> "$DIR/smi_marks_$M.txt"
      timeout 150 env SYMM_DEBUG_MMRS_GROUP=$g $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b,8b \
        --m 16384,4096 --mode both --passes 3 --timing-only $base > "$f" 2>&1
      echo "# 2 G $g pass $pass: rc $? at ${SECONDS}s"
      grep -E "^mm_rs .*(tile_st|tile_gemm|cublaslt) " "$f" | awk '{print "   ", $0}' | cut -c1-110
    done
  done
}
for s in $(echo "$STEPS" | grep -o .); do step$s; done
