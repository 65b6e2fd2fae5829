#!/usr/bin/env bash
# How the mm_rs tile programs' side lanes (warps 1..3 of each computing block: every band's reduce
# but the last's, beside the tiles) cost the GEMM at world W: SYMM_DEBUG_MMRS_SIDE (backends/cuda/
# tile_fused.cu) bulk (the program: sources by bulk copies into shared memory), no-load (the
# acquires alone: wrong results), ld (the sources by loads, two in flight per thread); and no-side
# (SYMM_DEBUG_MMRS_TILES=no-side: no side lanes). 1. checks of ld (fused bench --no-timing, bf16 and
# fp16, float64 and NCCL + cuBLASLt references) -> check.log; 2. timing in turn, twice: tiles and
# tiles_push, 70B and 8B M 16384, graph and eager, 3 passes a call -> side_<rep>_<cfg>_<m>.log, side_<m>.txt
#   scripts/gpu/mmrs_side.sh <world> <out-dir> [steps, default 12]
DEFAULT_STEPS=12
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
B="$BIN bench --backend cuda"
step1() {
  local C=$DIR/check.log; : > "$C"
  for m in 512 4096; do
    echo "### ld, world $W, M $m" >> "$C"
    timeout 60 env SYMM_DEBUG_MMRS_SIDE=ld $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 --m $m \
      --n 512 --k 1024 --chunk-rows 256 --no-timing --replays 20 >> "$C" 2>&1
    echo "### rc $?" >> "$C"
  done
  echo "### ld, world $W, 70b M 16384" >> "$C"
  timeout 90 env SYMM_DEBUG_MMRS_SIDE=ld $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b --m 16384 \
    --no-timing >> "$C" 2>&1
  echo "### rc $?" >> "$C"
  echo "# 1 check: at ${SECONDS}s"; grep -E "^### rc|check failure|FAIL|rror" "$C" | sort | uniq -c | head -20
}
step2() {
  for rep in 1 2; do
    for cfg in ${SIDES:-bulk no-load ld no-side}; do
      e=(SYMM_DEBUG_MMRS_SIDE=$cfg); [ $cfg = no-side ] && e=(SYMM_DEBUG_MMRS_TILES=no-side)
      base=--no-baselines; [ $rep = 1 ] && [ $cfg = bulk ] && base=
      f="$DIR/side_${rep}_${cfg}_$M.log"
      echo "# $cfg rep $rep starts at ${SECONDS}s $(date +%T.%N)" >> "$DIR/smi_marks_$M.txt"
      timeout 150 env "${e[@]}" $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b,8b --m 16384 \
        --mode both --passes 3 --timing-only $base > "$f" 2>&1
      echo "# 2 $cfg rep $rep: rc $? at ${SECONDS}s"
    done
  done
  for f in "$DIR"/side_*_"$M".log; do
    echo "$(basename "$f" .log): $(grep -h '^mm_rs  mm_rs.tile' "$f" | awk '{printf "%s N%s g%s %s | ", substr($2,12,5), $5, $7, $8}')"
  done | tee "$DIR/side_$M.txt"
}
for s in $(echo "$STEPS" | grep -o .); do step$s; done
