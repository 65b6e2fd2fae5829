#!/usr/bin/env bash
# Do the mm_rs tile programs' hot flag polls cost the GEMM? (SYMM_DEBUG_MMRS_SLEEP=<side ns>,<tail ns>,
# backends/cuda/tile_fused.cu: a nanosleep after each poll that missed, in the side lanes' and the
# last band's acquires.) At world W:
#   1. checks with sleeps (fused bench --no-timing, bf16 and fp16, float64 and NCCL + cuBLASLt
#      references): M 512 / 4096 x 512 x 1024 (20 graph replays), 70B M 16384    -> check.log
#   2. timing, configurations in turn, twice: tiles and tiles_push, 70B and 8B M 16384, graph and
#      eager, 3 passes a call: SLEEPS (default "0,0 100,0 500,0 2000,0 500,100"), and no-side (the
#      program without the side lanes' reduce: SYMM_DEBUG_MMRS_TILES=no-side)
#      -> sleep_<rep>_<cfg>_<m>.log; sleep_<m>.txt
#   scripts/gpu/mmrs_sleep.sh <world> <out-dir> [steps, default 12]
DEFAULT_STEPS=12
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
B="$BIN bench --backend cuda"
step1() {
  local C=$DIR/check.log; : > "$C"
  for sl in 500,0 2000,100; do
    for m in 512 4096; do
      echo "### sleep $sl, world $W, M $m" >> "$C"
      timeout 60 env SYMM_DEBUG_MMRS_SLEEP=$sl $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 --m $m \
        --n 512 --k 1024 --chunk-rows 256 --no-timing --replays 20 >> "$C" 2>&1
      echo "### rc $?" >> "$C"
    done
    echo "### sleep $sl, world $W, 70b M 16384" >> "$C"
    timeout 90 env SYMM_DEBUG_MMRS_SLEEP=$sl $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b --m 16384 \
      --no-timing >> "$C" 2>&1
    echo "### rc $?" >> "$C"
  done
  echo "# 1 check: at ${SECONDS}s"; grep -E "^### rc|check failure|FAIL|rror" "$C" | sort | uniq -c | head -20
}
step2() {
  for rep in 1 2; do
    for cfg in ${SLEEPS:-0,0 100,0 500,0 2000,0 500,100} no-side; do
      e=(SYMM_DEBUG_MMRS_SLEEP=$cfg); [ $cfg = no-side ] && e=(SYMM_DEBUG_MMRS_TILES=no-side)
      base=--no-baselines; [ $rep = 1 ] && [ $cfg = 0,0 ] && base=
      f="$DIR/sleep_${rep}_${cfg/,/_}_$M.log"
      echo "# $cfg rep $rep starts at ${SECONDS}s $(date +%T.%N)" >> "$DIR/smi_marks_$M.txt"
      timeout 150 env "${e[@]}" $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b,8b --m 16384 \
        --mode both --passes 3 --timing-only $base > "$f" 2>&1
      echo "# 2 $cfg rep $rep: rc $? at ${SECONDS}s"
    done
  done
  for f in "$DIR"/sleep_*_"$M".log; do
    echo "$(basename "$f" .log): $(grep -h '^mm_rs  mm_rs.tile' "$f" | awk '{printf "%s N%s g%s %s | ", substr($2,12,5), $5, $7, $8}')"
  done | tee "$DIR/sleep_$M.txt"
}
for s in $(echo "$STEPS" | grep -o .); do step$s; done
