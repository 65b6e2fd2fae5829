#!/usr/bin/env bash
# The mm_rs tile programs, a change (.carry/symmcoll-cuda) against the binary before it
# (.carry/old/symmcoll-cuda), one device call on a machine of W >= 2 GPUs, from the repository
# root. First used for the flags acquired by many threads at once (9fb9faa), then for the tiles'
# asynchronous stores (a47d1a3).
#   1. fused bench: mm_rs $ALGOS (default tiles / tiles_push / tiles_ce) and the baselines
#      (cublaslt, tile_gemm, nccl_cublaslt), 8b/70b x M 4096/16384, graph and eager, checked;
#      binaries interleaved old, new, old, new              -> mmrs_{old,new}{1,2}_<m>.csv / .log
#   2. new binary, checks: the programs in fp16 at world W, and as in-process teams of 2
#      and 3 ranks on GPU 0 (bf16, fp16, 20 graph replays)  -> check_<m>.log
#   3. new binary under compute-sanitizer racecheck and synccheck, world W, a small shape
#                                                           -> sanitize_<tool>_<m>.log
#   4. calibrate (world W), new binary: every row, our tile GEMM's (tile_gemm) among them
#                                                           -> calibrate_<m>.csv / .log
#   5. where the time goes: tiles / tiles_push at 70b, M 16384, graph, unchecked, each binary with
#      SYMM_DEBUG_MMRS_TILES unset / no-reduce / compute-only (tile_fused.cu's ProgramParams::debug)
#                                                           -> diag_<bin>_<mode>_<m>.csv / .log
#   scripts/gpu/mmrs_acquire.sh <world> <out-dir> [steps, default 1234]
DEFAULT_STEPS=1234
source scripts/gpu/nvlink_env.sh
OLD=.carry/old/symmcoll-cuda
{ nvidia-smi --query-gpu=index,name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv; \
  $BIN --version; $OLD --version; } > "$DIR/gpu.txt" 2>&1
ALGOS=${ALGOS:-tiles,tiles_push,tiles_ce}
step1() {
  for run in old1 new1 old2 new2; do
    local B=$BIN; [[ $run == old* ]] && B=$OLD
    timeout 150 $B launch -n $W -- $B bench --backend cuda --op mm_rs --algo $ALGOS --dtype bf16 --shape 8b,70b \
      --m 4096,16384 --mode both --csv "$DIR/mmrs_${run}_$M.csv" > "$DIR/mmrs_${run}_$M.log" 2>&1
    echo "# 1 $run: rc $? at ${SECONDS}s"; grep -E "FAIL|rror" "$DIR/mmrs_${run}_$M.log" | head -5
  done
}
step2() {
  local C="$DIR/check_$M.log"; : > "$C"
  echo "### world $W, one process per GPU, fp16" >> "$C"
  timeout 120 $BIN launch -n $W -- $BIN bench --backend cuda --op mm_rs --algo $ALGOS --dtype fp16 --shape 8b \
    --m 4096 --mode both >> "$C" 2>&1; echo "### rc $?" >> "$C"
  for w in 2 3; do
    echo "### world $w as a team on GPU 0, checked, 20 graph replays" >> "$C"
    CUDA_VISIBLE_DEVICES=0 timeout 120 $BIN bench --backend cuda --world $w --op mm_rs --algo $ALGOS \
      --dtype bf16,fp16 --m $((256 * w)) --n 512 --k $((512 * w)) --no-timing --replays 20 >> "$C" 2>&1
    echo "### rc $?" >> "$C"
  done
  echo "# 2 checks at ${SECONDS}s"; grep -E "^###|FAIL|rror" "$C" | head -10
}
step3() {
  local SAN=/usr/local/cuda/bin/compute-sanitizer
  for tool in racecheck synccheck; do
    SYMM_WAIT_TIMEOUT_S=120 SYMM_STREAM_TIMEOUT_S=300 timeout 150 $BIN launch -n $W -- $SAN --tool $tool \
      --error-exitcode 3 $BIN bench --backend cuda --op mm_rs --algo $ALGOS --dtype bf16 --m $((256 * W)) --n 256 \
      --k $((512 * W)) --no-timing > "$DIR/sanitize_${tool}_$M.log" 2>&1
    echo "# 3 sanitize $tool: rc $? at ${SECONDS}s"
    grep -E "(ERROR|RACECHECK) SUMMARY|rror" "$DIR/sanitize_${tool}_$M.log" | head -4
  done
}
step4() {
  timeout 150 $BIN launch -n $W -- $BIN calibrate --backend cuda --csv "$DIR/calibrate_$M.csv" \
    > "$DIR/calibrate_$M.log" 2>&1
  echo "# 4 calibrate: rc $? at ${SECONDS}s"; grep -E "^tile_gemm,.*,16384,8192,8192" "$DIR/calibrate_$M.csv" | head -4
}
step5() {
  for run in old new; do
    local B=$BIN; [[ $run == old ]] && B=$OLD
    for mode in program no-reduce compute-only; do
      local dbg=$mode; [[ $mode == program ]] && dbg=
      SYMM_DEBUG_MMRS_TILES=$dbg timeout 120 $B launch -n $W -- $B bench --backend cuda --op mm_rs \
        --algo tiles,tiles_push --dtype bf16 --shape 70b --m 16384 --mode graph --timing-only \
        --csv "$DIR/diag_${run}_${mode}_$M.csv" > "$DIR/diag_${run}_${mode}_$M.log" 2>&1
      echo "# 5 $run $mode: rc $? at ${SECONDS}s"
    done
  done
}
for ((i = 0; i < ${#STEPS}; ++i)); do step${STEPS:i:1}; done
