#!/usr/bin/env bash
# The mm_rs tile programs' last band cut into bands of R rows (SYMM_DEBUG_MMRS_TAIL=<R>,
# MmRsTileLayout::grid's tail_rows): less of the reduce left after the last tile. At world W:
#   1. checks with R = 128 and 256 (fused bench --no-timing, bf16 and fp16, float64 and NCCL +
#      cuBLASLt references): M 4096 x 512 x 1024 in 512-row bands (20 graph replays), a team of 2W,
#      70B M 16384                                                   -> check.log
#   2. timing in turn, twice: tiles and tiles_push, 70B and 8B M 16384 and 70B M 4096, graph and
#      eager, 3 passes a call, R in TAILS (default "0 128 256 512"; 0: not cut)
#      -> tail_<rep>_<R>_<m>.log, tail_<m>.txt
#   scripts/gpu/mmrs_tail.sh <world> <out-dir> [steps, default 12]
DEFAULT_STEPS=12
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
B="$BIN bench --backend cuda"
step1() {
  local C=$DIR/check.log; : > "$C"
  for r in 128 256; do
    echo "### tail $r, world $W, M 4096" >> "$C"
    timeout 60 env SYMM_DEBUG_MMRS_TAIL=$r $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 --m 4096 \
      --n 512 --k 1024 --chunk-rows 512 --no-timing --replays 20 >> "$C" 2>&1
    echo "### rc $?" >> "$C"
    echo "### tail $r, team of $((2 * W))" >> "$C"
    timeout 60 env SYMM_DEBUG_MMRS_TAIL=$r $B --world $((2 * W)) --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 \
      --m 4096 --n 512 --k 1024 --chunk-rows 512 --no-timing --replays 20 >> "$C" 2>&1
    echo "### rc $?" >> "$C"
    echo "### tail $r, world $W, 70b M 16384" >> "$C"
    timeout 90 env SYMM_DEBUG_MMRS_TAIL=$r $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b \
      --m 16384 --no-timing >> "$C" 2>&1
    echo "### rc $?" >> "$C"
  done
  echo "# 1 check: at ${SECONDS}s"; grep -E "^### rc|check failure|FAIL|rror" "$C" | sort | uniq -c | head -20
}
step2() {
  for rep in 1 2; do
    for r in ${TAILS:-0 128 256 512}; do
      base=--no-baselines; [ $rep = 1 ] && [ $r = 0 ] && base=
      f="$DIR/tail_${rep}_${r}_$M.log"
      echo "# tail $r rep $rep starts at ${SECONDS}s $(date +%T.%N)" >> "$DIR/smi_marks_$M.txt"
      timeout 150 env SYMM_DEBUG_MMRS_TAIL=$r $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b,8b \
        --m 16384,4096 --mode both --passes 3 --timing-only $base > "$f" 2>&1
      echo "# 2 tail $r rep $rep: rc $? at ${SECONDS}s"
    done
  done
  for f in "$DIR"/tail_*_"$M".log; do
    echo "$(basename "$f" .log): $(grep -h '^mm_rs  mm_rs.tile' "$f" | awk '{printf "%s N%s M%s g%s %s | ", substr($2,12,5), $5, $4, $7, $8}')"
  done | tee "$DIR/tail_$M.txt"
}
for s in $(echo "$STEPS" | grep -o .); do step$s; done
