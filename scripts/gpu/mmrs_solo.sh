#!/usr/bin/env bash
# The mm_rs pull tile program without the consumer warpgroups' meeting per tile (a change to
# tile_fused.cu measured and not kept: experiments/results/h100x4/mmrs_solo_9f7522a) against the
# binary before it (.carry/old/symmcoll-cuda), world W; any two binaries' tile programs alike:
#   1. the new binary under compute-sanitizer racecheck, synccheck and memcheck: tiles and
#      tiles_push, 16 k-blocks per tile (solo), with bands (--chunk-rows 128) and the default
#                                                        -> sanitize_solo_<tool>_<m>.log
#   2. the new binary checked: tiles, tiles_push, bf16 / fp16, 8b / 70b, M 4096 / 16384 (float64
#      and NCCL + cuBLASLt; 20 graph replays)            -> check_<m>.log
#   3. timing, old and new in turn, twice: the program and compute-only (SYMM_DEBUG_MMRS_TILES),
#      70b / 8b M 16384, graph and eager, 3 passes       -> time_<rep>_<bin>_<mode>_<m>.csv / .log
#   scripts/gpu/mmrs_solo.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
OLD=.carry/old/symmcoll-cuda
SAN=/usr/local/cuda/bin/compute-sanitizer
for tool in racecheck synccheck memcheck; do
  extra=(); [ $tool = memcheck ] && extra=(--report-api-errors no --leak-check no)
  for cr in 128 0; do
    SYMM_WAIT_TIMEOUT_S=120 SYMM_STREAM_TIMEOUT_S=300 timeout 150 $BIN launch -n $W -- \
      $SAN --tool $tool ${extra[@]+"${extra[@]}"} --error-exitcode 3 $BIN bench --backend cuda --op mm_rs \
      --algo tiles,tiles_push --dtype bf16 --m 1024 --n 256 --k $((1024 * W)) --chunk-rows $cr --no-timing \
      >> "$DIR/sanitize_solo_${tool}_$M.log" 2>&1
    echo "# 1 sanitize $tool chunk-rows $cr: rc $? at ${SECONDS}s"
  done
  grep -E "(ERROR|RACECHECK|SYNCCHECK) SUMMARY|rror" "$DIR/sanitize_solo_${tool}_$M.log" | head -4
done
timeout 200 $BIN launch -n $W -- $BIN bench --backend cuda --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 \
  --shape 8b,70b --m 4096,16384 --no-timing --replays 20 > "$DIR/check_$M.log" 2>&1
echo "# 2 check: rc $? at ${SECONDS}s"; grep -E "FAIL|rror|check failure" "$DIR/check_$M.log" | head -5
for rep in 1 2; do
  for b in old new; do
    bin=$BIN; [ $b = old ] && bin=$OLD
    for mode in program compute-only; do
      v=$mode; [ $mode = program ] && v=""
      f="$DIR/time_${rep}_${b}_${mode}_$M"
      timeout 150 env SYMM_DEBUG_MMRS_TILES=$v $bin launch -n $W -- $bin bench --backend cuda --op mm_rs --algo tiles \
        --dtype bf16 --shape 70b,8b --m 16384 --mode both --passes 3 --timing-only --csv "$f.csv" > "$f.log" 2>&1
      echo "# 3 $b $mode rep $rep: rc $? at ${SECONDS}s"
      grep -E "^mm_rs .*(tile|cublaslt)" "$f.log" | awk '{print "   ", $0}' | cut -c1-110
    done
  done
done
