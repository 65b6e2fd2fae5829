#!/usr/bin/env bash
# One device call on a machine of W GPUs (one process per GPU, NVLink), after the binaries are
# built here and carried in .carry/:
#   1. fused bench: every algorithm (host plans and tile programs) and baseline (cublaslt,
#      tile_gemm, nccl_cublaslt), 8b/70b x M 4096/16384, graph and eager, checked, PASSES timing
#      passes (default 3; each row the median of its passes')
#                                                   -> fused_<sha>_<m>.csv / .log
#   2. PyTorch's fused ops (torch.ops.symm_mem) at the same shapes, same call   (TORCH=0: skipped)
#                                                   -> torch_fused_<sha>_<m>.csv / .log
#   3. scripts/gpu/plans.sh W: host plans 1M..256M and the small all-reduce, NCCL's rows beside
#                                                   -> bench_plans_<m>.csv, bench_small_<m>.csv ...
#   4. calibrate (world W)                          -> calibrate_<m>.csv / .log
#   5. the GPU suite's hang cases (world W)         -> hang_<m>.log
#   6. the fused plans and tile programs under compute-sanitizer memcheck, racecheck and synccheck (world W,
#      a small shape, one checked call each)        -> sanitize_fused_<tool>_<m>.log
#   7. the fused plans and tile programs as in-process teams of 3 and 4 ranks over the W GPUs
#      (bf16, fp16; checked, 20 graph replays)      -> team_fused_<m>.log
#   8. all_reduce, every algorithm, 4M..256M x4, graph and eager, checked up to 64M, NCCL's rows
#      beside (step 3 covers 4K..1M)                -> bench_ar_<m>.csv / .log
#   nvidia-smi's SM clock, power and temperature, sampled every 100 ms through the call (read
#   only), the start of each step in smi_marks_<m>.txt  -> smi_<m>.csv
#   scripts/gpu/round.sh <world> <out-dir> [steps in the order to run, default 12345]
# <m> = h200x<W> (the bench names its rows the same way from the device).
DEFAULT_STEPS=12345
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
step1() {
  timeout 400 $L $BIN bench --backend cuda --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b,70b --m 4096,16384 \
    --mode both --passes ${PASSES:-3} --csv "$DIR/fused_${SHA}_$M.csv" > "$DIR/fused_${SHA}_$M.log" 2>&1
  echo "# 1 fused bench: rc $? at ${SECONDS}s"
  grep -E "FAIL|rror" "$DIR/fused_${SHA}_$M.log" | head -10
}
step2() {
  TR=$(command -v torchrun || echo /opt/torch/.venv/bin/torchrun)
  timeout 200 $TR --nproc-per-node $W scripts/gpu/torch_fused.py \
    --out "$DIR/torch_fused_${SHA}_$M.csv" --machine $M > "$DIR/torch_fused_${SHA}_$M.log" 2>&1
  echo "# 2 torch fused: rc $? at ${SECONDS}s"
  grep -E "^(ag_mm|mm_rs)|not measured|Error" "$DIR/torch_fused_${SHA}_$M.log" | head -20
}
step3() {
  bash scripts/gpu/plans.sh $W "$DIR"
  echo "# 3 plans: rc $? at ${SECONDS}s"
}
step4() {
  timeout 120 $L $BIN calibrate --backend cuda --csv "$DIR/calibrate_$M.csv" > "$DIR/calibrate_$M.log" 2>&1
  echo "# 4 calibrate: rc $? at ${SECONDS}s"; grep -E "^launch," "$DIR/calibrate_$M.csv" | head -4
}
step5() {
  SB=$(mktemp -d); mkdir -p "$SB/apps" && ln -s "$PWD/$BIN" "$SB/apps/symmcoll-cuda"
  timeout 200 env SYMM_TEST_LOGDIR="$SB/logs" WORLD=$W bash tests/gpu/run.sh "$SB" hang > "$DIR/hang_$M.log" 2>&1
  echo "# 5 hang: rc $? at ${SECONDS}s"; grep -E "^--- |GPU suite" "$DIR/hang_$M.log" | head -14
}
step6() {
  local SAN=/usr/local/cuda/bin/compute-sanitizer
  for tool in memcheck racecheck synccheck; do
    extra=(); [ $tool = memcheck ] && extra=(--report-api-errors no --leak-check no)
    SYMM_WAIT_TIMEOUT_S=120 SYMM_STREAM_TIMEOUT_S=300 timeout 150 $L $SAN --tool $tool ${extra[@]+"${extra[@]}"} --error-exitcode 3 \
      $BIN bench --backend cuda --op ag_mm,mm_rs --algo all --dtype bf16 --m $((256 * W)) --n 256 --k 512 --no-timing --plan-timeout 300 \
      > "$DIR/sanitize_fused_${tool}_$M.log" 2>&1
    echo "# 6 sanitize fused $tool: rc $? at ${SECONDS}s"
    grep -E "(ERROR|RACECHECK) SUMMARY|rror" "$DIR/sanitize_fused_${tool}_$M.log" | head -4
  done
}
step7() {
  local T="$DIR/team_fused_$M.log"; : > "$T"
  for w in 3 4; do
    echo "### world $w on $W GPUs: fused, checked, 20 graph replays" >> "$T"
    timeout 120 $BIN bench --backend cuda --world $w --op ag_mm,mm_rs --algo all --dtype bf16,fp16 --m $((256 * w)) \
      --n 256 --k $((256 * w)) --no-timing --replays 20 >> "$T" 2>&1; echo "### rc $?" >> "$T"
  done
  echo "# 7 team fused: at ${SECONDS}s"; grep -E "^###|FAIL|rror" "$T" | head -8
}
step8() {
  timeout 150 $L $BIN bench --backend cuda --machine $M --op all_reduce --algo all --sizes 4M:256M:x4 --mode both \
    --check-up-to 64M --csv "$DIR/bench_ar_$M.csv" > "$DIR/bench_ar_$M.log" 2>&1
  echo "# 8 all_reduce 4M-256M: rc $? at ${SECONDS}s"; grep -E "FAIL|rror" "$DIR/bench_ar_$M.log" | head -5
}
for ((i = 0; i < ${#STEPS}; ++i)); do
  st=${STEPS:i:1}
  echo "# step $st starts at ${SECONDS}s $(date +%T.%N)" >> "$DIR/smi_marks_$M.txt"
  step$st
done
