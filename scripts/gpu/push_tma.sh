#!/usr/bin/env bash
# The mm_rs push tile program's tiles by bulk tensor stores (tile_epilogue.cuh store_tile_tma) against
# the binary before it (.carry/prev/symmcoll-cuda: the threads' stores), on a machine of W GPUs:
#   1. checks (new binary): the fused bench's mm_rs tile programs, bf16 and fp16, at world W and 2 over
#      NVLink, shapes with whole and partial tiles, against float64 and NCCL + cuBLASLt, 20 graph replays;
#      the same as in-process teams of 3 and 4 on GPU 0; compute-sanitizer memcheck, racecheck and
#      synccheck at world 2; gemm-bench's checks (the staging moved: every GEMM's epilogue)
#                                                          -> check_*.log, sanitize_*.log, gemm_check.log
#   2. timing: old and new binary in turn, twice, mm_rs tiles and tiles_push, 70B and 8B, M 4096 and
#      16384, graph and eager, 3 passes, the baselines in every call -> time_<rep>_<bin>_w<W>.csv / .log
#   scripts/gpu/push_tma.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
OLD=.carry/prev/symmcoll-cuda
L="$BIN launch -n $W --"
for w in $W 2; do
  G=$(seq -s, 0 $((w - 1)))
  CUDA_VISIBLE_DEVICES=$G timeout 200 $BIN launch -n $w -- $BIN bench --backend cuda --op mm_rs --algo tiles,tiles_push \
    --dtype bf16,fp16 --shape 8b,70b --m 4096 --no-timing --replays 20 > "$DIR/check_w${w}.log" 2>&1
  echo "# check world $w: rc $?"; grep -E "FAIL|rror" "$DIR/check_w${w}.log" | head -5
  for n in 264 1800; do
    CUDA_VISIBLE_DEVICES=$G timeout 200 $BIN launch -n $w -- $BIN bench --backend cuda --op mm_rs --algo tiles,tiles_push \
      --dtype bf16,fp16 --m $((w * 200)),$((w * 328)) --n $n --k $((w * 136)) --no-timing --replays 20 \
      > "$DIR/check_edges_w${w}_n$n.log" 2>&1
    echo "# check edges world $w n $n: rc $?"; grep -E "FAIL|rror" "$DIR/check_edges_w${w}_n$n.log" | head -5
  done
done
for w in 3 4; do
  CUDA_VISIBLE_DEVICES=0 timeout 120 $BIN bench --backend cuda --world $w --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 \
    --m $((256 * w)),$((200 * w)) --n 264 --k $((256 * w)) --no-timing --replays 20 > "$DIR/check_team_w${w}.log" 2>&1
  echo "# check team $w: rc $?"; grep -E "FAIL|rror" "$DIR/check_team_w${w}.log" | head -5
done
SAN=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck synccheck; do
  extra=(); [ $tool = memcheck ] && extra=(--report-api-errors no --leak-check no)
  CUDA_VISIBLE_DEVICES=0,1 SYMM_WAIT_TIMEOUT_S=120 SYMM_STREAM_TIMEOUT_S=300 timeout 200 $BIN launch -n 2 -- \
    $SAN --tool $tool ${extra[@]+"${extra[@]}"} --error-exitcode 3 $BIN bench --backend cuda --op mm_rs \
    --algo tiles,tiles_push --dtype bf16 --m 656 --n 264 --k 512 --no-timing > "$DIR/sanitize_$tool.log" 2>&1
  echo "# sanitize $tool: rc $?"; grep -E "(ERROR|RACECHECK) SUMMARY|rror" "$DIR/sanitize_$tool.log" | head -4
done
CUDA_VISIBLE_DEVICES=0 timeout 200 $BIN gemm-bench --iters 5 --warmup 2 > "$DIR/gemm_check.log" 2>&1
echo "# gemm-bench checks: rc $?"; grep -c FAIL "$DIR/gemm_check.log"
for rep in 1 2; do
  for bin in old new; do
    B=$BIN; [ $bin = old ] && B=$OLD
    timeout 200 $B launch -n $W -- $B bench --backend cuda --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b,8b \
      --m 4096,16384 --mode both --passes 3 --timing-only --csv "$DIR/time_${rep}_${bin}_w$W.csv" \
      > "$DIR/time_${rep}_${bin}_w$W.log" 2>&1
    echo "# time $rep $bin: rc $?"
    grep -E "^mm_rs .*(tile_st|cublaslt|tile_gemm)" "$DIR/time_${rep}_${bin}_w$W.log" | grep 16384 | cut -c1-110
  done
done
