#!/usr/bin/env bash
# The mm_rs tile programs' bands (mm_rs.tile_st_ld_reduce / tile_st_peer_reduce reduce band s - 1
# while band s computes) on a machine of W GPUs, the binary carried in .carry/:
#   scripts/gpu/tile_bands.sh <world> <out-dir> [steps, default 123]
# 1. the GPU suite's correctness part (worlds W and 2W: one process per GPU, then a team)
#                                                   -> suite_correctness.log
# 2. the tile programs checked: bf16 and fp16, default bands, bands of one tile row (128 rows; with
#    the default and with 16 reduce blocks) and one band (--chunk-rows = M: the program as it was
#    before bands), 20 graph replays; one process per GPU (world W) and a team of 2W on the W GPUs
#                                                   -> check.log
# 3. timing, world W (one process per GPU): tiles and tiles_push at the fused shapes, graph and
#    eager, configurations CFGS (default "one default b8 b16"): one = one band (every block
#    computes, then reduces: the program before bands; with the baselines cublaslt, tile_gemm,
#    nccl_cublaslt), default = the plan's choice, bN = default bands and N reduce blocks, iR = bands
#    of R rows and no reduce blocks (the compute band by band, the whole reduce after it);
#    interleaved twice (--chunk-rows / --blocks: no CSV, the logs' tables). TB_ALGOS (default
#    tiles,tiles_push) and TB_SHAPES (default "--shape 8b,70b --m 4096,16384") narrow it.
#                                                   -> bands_<cfg>_<pass>_<m>.log, bands_<m>.txt
# 4. the tile programs at the plan's defaults with their baselines, 3 passes, CSV (for the tables)
#                                                   -> fused_tiles_<sha>_<m>.csv / .log
# Multicast stays off; nothing touches clocks; every command under its own `timeout`.
DEFAULT_STEPS=123
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
B="$BIN bench --backend cuda"
step1() {
  SB=$(mktemp -d); mkdir -p "$SB/apps" && ln -s "$PWD/$BIN" "$SB/apps/symmcoll-cuda"
  timeout 200 env SYMM_TEST_LOGDIR="$SB/logs" SYMM_TEST_WORLDS="$W $((2 * W))" SYMM_TEST_SIZES=16K,1M \
    bash tests/gpu/run.sh "$SB" correctness > "$DIR/suite_correctness.log" 2>&1
  echo "# 1 suite correctness: rc $? at ${SECONDS}s"; grep -E "^--- |GPU suite|FAIL" "$DIR/suite_correctness.log" | head -14
}
step2() {
  local C=$DIR/check.log; : > "$C"
  for opt in "--chunk-rows 0" "--chunk-rows 128" "--chunk-rows 128 --blocks 16" "--chunk-rows 1000000"; do
    for m in 512 4096; do
      echo "### world $W, M $m, $opt" >> "$C"
      timeout 60 $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 --m $m --n 512 --k 1024 $opt \
        --no-timing --replays 20 >> "$C" 2>&1
      echo "### rc $?" >> "$C"
    done
    echo "### team of $((2 * W)), $opt" >> "$C"
    timeout 60 $B --world $((2 * W)) --op mm_rs --algo tiles,tiles_push --dtype bf16,fp16 --m 2048 --n 512 --k 1024 \
      $opt --no-timing --replays 20 >> "$C" 2>&1
    echo "### rc $?" >> "$C"
  done
  echo "### world $W, 70b M 16384 (default bands)" >> "$C"
  timeout 60 $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 70b --m 16384 --no-timing >> "$C" 2>&1
  echo "### rc $?" >> "$C"
  echo "# 2 check: at ${SECONDS}s"; grep -E "^### rc|FAIL|rror" "$C" | sort | uniq -c | head -20
}
step3() {
  for pass in 1 2; do
    for cfg in ${CFGS:-one default b8 b16}; do
      case $cfg in
        one) opt="--chunk-rows 1000000" ;;  # one band: every block computes, then reduces (before bands)
        default) opt="" ;;
        b*) opt="--blocks ${cfg#b}" ;;  # default bands, that many reduce blocks
        i*) opt="--chunk-rows ${cfg#i}" ;;  # bands of that many rows, no reduce blocks
      esac
      base="--no-baselines"; [ $pass = 1 ] && [ $cfg = one ] && base=""
      f="$DIR/bands_${cfg}_${pass}_$M.log"
      timeout 150 $L $B --op mm_rs --algo ${TB_ALGOS:-tiles,tiles_push} --dtype bf16 ${TB_SHAPES:---shape 8b,70b --m 4096,16384} \
        --mode both --timing-only $base $opt > "$f" 2>&1
      echo "# 3 timing $cfg pass $pass: rc $? at ${SECONDS}s"
    done
  done
  python3 scripts/gpu/tile_bands_table.py "$DIR" "$M" | tee "$DIR/bands_$M.txt"
}
step4() {
  timeout 200 $L $B --op mm_rs --algo tiles,tiles_push --dtype bf16 --shape 8b,70b --m 4096,16384 --mode both \
    --passes 3 --csv "$DIR/fused_tiles_${SHA}_$M.csv" > "$DIR/fused_tiles_${SHA}_$M.log" 2>&1
  echo "# 4 tiles at the plan's defaults, CSV: rc $? at ${SECONDS}s"
}
for s in $(echo "$STEPS" | grep -o .); do step$s; done
