#!/usr/bin/env bash
# The mm_rs tile programs' releases by a signal warp (the default) against a consumer thread
# (SYMM_DEBUG_MMRS_SIGWARP=0, the code before it), at world W:
#   1. checks of the signal warp (fused bench --no-timing, bf16 and fp16, float64 and NCCL + cuBLASLt
#      references, 20 graph replays): M 512 / 4096 x 512 x 1024 in the default and 256-row bands, a team
#      of 2W, 70B M 16384; the GPU suite's hang case for the tile programs is not rerun here -> check.log
#   2. timing, short runs in turn, twice: tiles and tiles_push, 70B and 8B M 16384 and 4096, graph and
#      eager, 3 passes a call                                  -> ab_<rep>_<sigwarp>_<m>.log, ab_<m>.txt
#   3. sustained (70B M 16384, 2000 graph replays a run, nvidia-smi every 20 ms): tiles and tiles_push,
#      new and old, twice                                      -> run_<rep>_<name>_<m>.log, stamps, smipow
#   scripts/gpu/mmrs_sigwarp.sh <world> <out-dir> [steps, default 123]
DEFAULT_STEPS=123
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
B="$BIN bench --backend cuda"
step1() {
  local C=$DIR/check.log; : > "$C"
  for opt in "--chunk-rows 0" "--chunk-rows 256"; do
    for m in 512 4096; do
      echo "### world $W, M $m, $opt" >> "$C"
      timeout 60 $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 --m $m --n 512 --k 1024 $opt \
        --no-timing --replays 20 >> "$C" 2>&1
      echo "### rc $?" >> "$C"
    done
  done
  echo "### team of $((2 * W))" >> "$C"
  timeout 60 $B --world $((2 * W)) --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 --m 4096 --n 512 --k 1024 \
    --chunk-rows 256 --no-timing --replays 20 >> "$C" 2>&1
  echo "### rc $?" >> "$C"
  echo "### world $W, 70b and 8b M 16384" >> "$C"
  timeout 90 $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b,8b --m 16384 --no-timing >> "$C" 2>&1
  echo "### rc $?" >> "$C"
  echo "# 1 check: at ${SECONDS}s"; grep -E "^### rc|check failure|FAIL|rror" "$C" | sort | uniq -c | head -20
}
step2() {
  for rep in 1 2; do
    for sw in 1 0; do
      base=--no-baselines; [ $rep = 1 ] && [ $sw = 1 ] && base=
      f="$DIR/ab_${rep}_${sw}_$M.log"
      timeout 150 env SYMM_DEBUG_MMRS_SIGWARP=$sw $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b,8b \
        --m 16384,4096 --mode both --passes 3 --timing-only $base > "$f" 2>&1
      echo "# 2 sigwarp $sw rep $rep: rc $? at ${SECONDS}s"
    done
  done
  for f in "$DIR"/ab_*_"$M".log; do
    echo "$(basename "$f" .log): $(grep -h '^mm_rs  mm_rs.tile' "$f" | awk '{printf "%s N%s M%s g%s %s | ", substr($2,12,5), $5, $4, $7, $8}')"
  done | tee "$DIR/ab_$M.txt"
}
step3() {
  ITERS=${ITERS:-400}
  source scripts/gpu/power_samples.sh
  for rep in 1 2; do
    for algo in tiles tiles_push; do
      for sw in 1 0; do
        name=${algo}_sw$sw
        stamp start $name
        timeout 120 env SYMM_DEBUG_MMRS_SIGWARP=$sw $L $B --op mm_rs --algo $algo --dtype bf16 --shape 70b --m 16384 \
          --mode graph --iters $ITERS --calls 5 --no-baselines --timing-only > "$DIR/run_${rep}_${name}_$M.log" 2>&1
        stamp end $name
        echo "# 3 $name rep $rep: $(grep -E '^mm_rs ' "$DIR/run_${rep}_${name}_$M.log" | awk '{print $8}')"
      done
    done
  done
}
for s in $(echo "$STEPS" | grep -o .); do step$s; done
