#!/usr/bin/env bash
# The 2x H200 issue's last targets, on a machine of W GPUs (the `run` tool), from the repository
# root, after the binaries are built here and carried: .carry/symmcoll-cuda (the change) and
# .carry/old/symmcoll-cuda (main before it; optional):
#   1. calibrate (world W): every row, with the floors the targets meet: `exchange` (a one-kernel
#      all-reduce's least work per call: every rank signals every peer and waits) and
#      `ce_link_oneway` / `ce_link_twoway` (what copy engines carry one way, and both ways at once,
#      at 64M..256M)                                            -> calibrate_<m>.csv / .log
#   2. mm_rs 70B M 16384, the copy-engine plans and the matmul alone, graph and eager, old and new
#      binary interleaved twice (old, new, old, new)            -> mmrs_{old,new}{1,2}_<m>.csv / .log
#   3. the fused bench, every algorithm and baseline (as round.sh's step 1), new binary
#                                                               -> fused_<sha>_<m>.csv / .log
#   4. gemm-bench on GPU 0 alone: --schedule auto at the fused shapes (checks, then timing)
#                                                               -> tile_gemm_auto_<m1>.csv / .log
#   5. in-process teams: every ag_mm / mm_rs plan as 3 ranks over 2 GPUs, and 2 ranks on GPU 0,
#      checked, 20 graph replays, old and new binary          -> team_{old,new}_w{3,2}.log
#   6. the copy-engine all-gathers at 64M and 256M over --chunk-bytes 32M/64M/128M x --sm-percent
#      10/20/30, graph and eager, NCCL's rows beside          -> ag256_<chunk>_<pct>_<m>.csv, ag256_<m>.log
#   7. the flagged-packet all-reduce at 4K / 8K (4 blocks), NCCL's rows beside, 100 samples
#                                                               -> ar4k_<m>.csv / .log
#   8. the copy-engine all-gathers (and the SM push) 1M..256M, checked to 64M, NCCL's rows beside,
#      old and new binary; then 256M in 128M chunks            -> ag_plans_{old,new}[_128M]_<m>.csv / .log
# nvidia-smi's SM clock and power every 100 ms (read only)     -> smi_<m>.csv
#   scripts/gpu/floors.sh <world> <out-dir> [steps, default 12345; 6, 7, 8 only when named]
DEFAULT_STEPS=12345
source scripts/gpu/nvlink_env.sh
OLD=.carry/old/symmcoll-cuda
{ nvidia-smi --query-gpu=index,name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv; \
  $BIN --version; [ -x $OLD ] && $OLD --version; } > "$DIR/gpu.txt" 2>&1
# The binaries a comparison runs ("old new" when the old one was carried, else "new"), and a run
# name's binary (old*, new*).
binaries() { [ -x $OLD ] && echo "old new" || echo new; }
bin_of() { case $1 in old*) echo $OLD ;; *) echo $BIN ;; esac; }
mark() { echo "$(date +%H:%M:%S.%N) $*" >> "$DIR/smi_marks_$M.txt"; }
step1() {
  mark calibrate
  timeout 150 $BIN launch -n $W -- $BIN calibrate --backend cuda --csv "$DIR/calibrate_$M.csv" \
    > "$DIR/calibrate_$M.log" 2>&1
  echo "# 1 calibrate: rc $? at ${SECONDS}s"
  grep -E "^(launch|exchange|pingpong_relaxed|ce_link|ce_copy,)" "$DIR/calibrate_$M.csv" | head -30
}
step2() {
  local runs="new1 new2"
  [ -x $OLD ] && runs="old1 new1 old2 new2"
  for r in $runs; do
    local B=$(bin_of $r)
    mark "mmrs $r"
    timeout 120 $B launch -n $W -- $B bench --backend cuda --op mm_rs --algo ce,ce_acc --dtype bf16 --shape 70b \
      --m 16384 --mode both --csv "$DIR/mmrs_${r}_$M.csv" > "$DIR/mmrs_${r}_$M.log" 2>&1
    echo "# 2 mm_rs $r: rc $? at ${SECONDS}s"
    grep -E "^mm_rs" "$DIR/mmrs_${r}_$M.log" | grep -v nccl_
  done
}
step3() {
  mark fused
  timeout 300 $BIN launch -n $W -- $BIN bench --backend cuda --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b,70b \
    --m 4096,16384 --mode both --csv "$DIR/fused_${SHA}_$M.csv" > "$DIR/fused_${SHA}_$M.log" 2>&1
  echo "# 3 fused bench: rc $? at ${SECONDS}s"
  grep -E "FAIL|rror" "$DIR/fused_${SHA}_$M.log" | head -10
  grep -E "^(ag_mm|mm_rs) +(cublaslt|tile_gemm) " "$DIR/fused_${SHA}_$M.log" | grep 16384 | head -8
}
step4() {
  mark gemm
  local M1=${GPU}x1
  CUDA_VISIBLE_DEVICES=0 timeout 60 $BIN gemm-bench --no-timing --dtype bf16,fp16 --schedule auto \
    --shapes "16384,3584,4096;16384,3584,8192;8192,3584,4096;4096,3584,4096;16384,1792,4096;1000,1000,1000;300,520,136" > "$DIR/tile_gemm_check_auto_$M1.log" 2>&1
  echo "# 4 gemm check auto: rc $? at ${SECONDS}s"
  grep -E "FAIL|rror" "$DIR/tile_gemm_check_auto_$M1.log" | head -5
  CUDA_VISIBLE_DEVICES=0 timeout 90 $BIN gemm-bench --shapes fused --dtype bf16 --timing-only --schedule auto \
    --machine $M1 --out "$DIR/tile_gemm_auto_$M1.csv" > "$DIR/tile_gemm_auto_$M1.log" 2>&1
  echo "# 4 gemm timing auto: rc $? at ${SECONDS}s"
  grep -E "^bf16" "$DIR/tile_gemm_auto_$M1.log" | awk '{print $2, $3, $4, $5, $6, $7, $(NF-3)}'
}
step5() {
  for r in $(binaries); do
    local B=$(bin_of $r)
    for w in 3 2; do
      local T="$DIR/team_${r}_w$w.log" vis=0,1
      [ $w = 2 ] && vis=0
      mark "team $r w$w"
      echo "### world $w on GPUs $vis: ag_mm and mm_rs, every algorithm, checked, 20 graph replays" > "$T"
      CUDA_VISIBLE_DEVICES=$vis SYMM_WAIT_TIMEOUT_S=5 timeout 120 $B bench --backend cuda --world $w --op ag_mm,mm_rs \
        --algo all --dtype bf16,fp16 --m $((256 * w)) --n 256 --k $((256 * w)) --no-timing --replays 20 >> "$T" 2>&1
      echo "### rc $?" >> "$T"
      echo "# 5 team $r world $w: $(tail -1 "$T") at ${SECONDS}s"
      grep -E "check failure|rror|timed out|stuck" "$T" | head -4
    done
  done
}
step6() {
  local T="$DIR/ag256_$M.log"; : > "$T"
  for cb in 32M 64M 128M; do
    for sp in 10 20 30; do
      mark "ag256 $cb $sp"
      echo "### --chunk-bytes $cb --sm-percent $sp" >> "$T"
      timeout 90 $BIN launch -n $W -- $BIN bench --backend cuda --op all_gather --algo ce,ce_sm --sizes 64M,256M \
        --chunk-bytes $cb --sm-percent $sp --mode both --timing-only --csv "$DIR/ag256_${cb}_${sp}_$M.csv" >> "$T" 2>&1
      echo "### rc $?" >> "$T"
    done
  done
  echo "# 6 all-gather 256M sweep at ${SECONDS}s"
  grep -E "^(###|all_gather .*268435456)" "$T" | head -80
}
step7() {
  mark ar4k
  timeout 90 $BIN launch -n $W -- $BIN bench --backend cuda --op all_reduce --algo one_shot_ll --sizes 4K,8K \
    --blocks 4 --mode both --iters 100 --csv "$DIR/ar4k_$M.csv" > "$DIR/ar4k_$M.log" 2>&1
  echo "# 7 all-reduce 4K: rc $? at ${SECONDS}s"
  grep -E "^all_reduce" "$DIR/ar4k_$M.log"
}
step8() {
  for r in $(binaries); do
    local B=$(bin_of $r)
    mark "ag plans $r"
    timeout 150 $B launch -n $W -- $B bench --backend cuda --op all_gather --algo ce,ce_sm,push --sizes 1M:256M:x4 \
      --mode both --check-up-to 64M --csv "$DIR/ag_plans_${r}_$M.csv" > "$DIR/ag_plans_${r}_$M.log" 2>&1
    echo "# 8 all-gather plans $r: rc $? at ${SECONDS}s"
    grep -E "FAIL|rror" "$DIR/ag_plans_${r}_$M.log" | head -5
    grep -E "^all_gather +(all_gather.ce|nccl_ce).*(16777216|268435456)" "$DIR/ag_plans_${r}_$M.log"
  done
  mark "ag 128M chunks"
  timeout 90 $BIN launch -n $W -- $BIN bench --backend cuda --op all_gather --algo ce,ce_sm --sizes 256M \
    --chunk-bytes 128M --mode both --timing-only --csv "$DIR/ag_plans_new_128M_$M.csv" > "$DIR/ag_plans_new_128M_$M.log" 2>&1
  echo "# 8 all-gather 256M in 128M chunks: rc $? at ${SECONDS}s"
  grep -E "^all_gather +all_gather" "$DIR/ag_plans_new_128M_$M.log"
}
for ((i = 0; i < ${#STEPS}; ++i)); do "step${STEPS:$i:1}"; done
mark end
echo "# floors.sh done at ${SECONDS}s"
