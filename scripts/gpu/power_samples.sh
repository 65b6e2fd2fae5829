# Sourced by the sustained-run scripts (fused_power.sh, gemm_burst.sh) after DIR and M are set:
# nvidia-smi's SM clock, power and active clock-event mask (bit 0x4: the software power cap) every
# 20 ms into $DIR/smipow_$M.csv until the script exits, the GPUs' power limits into
# $DIR/limits_$M.csv, and stamp <start|end> <run name>, each run's window in $DIR/stamps_$M.txt:
# what experiments/fused_power.py reads. SMI_GPUS: nvidia-smi's -i (default: every GPU).
SMI_SEL=()
[ -n "${SMI_GPUS:-}" ] && SMI_SEL=(-i "$SMI_GPUS")
FIELDS=timestamp,index,clocks.sm,power.draw,clocks_event_reasons.active,temperature.gpu
nvidia-smi --query-gpu=$FIELDS --format=csv,nounits -i 0 > /dev/null 2>&1 ||
  FIELDS=timestamp,index,clocks.sm,power.draw,clocks_throttle_reasons.active,temperature.gpu  # older drivers
nvidia-smi --query-gpu=$FIELDS --format=csv,nounits "${SMI_SEL[@]}" -lms 20 > "$DIR/smipow_$M.csv" 2>/dev/null &
SMIPOW=$!
trap 'kill ${SMI:-} $SMIPOW 2>/dev/null' EXIT
nvidia-smi --query-gpu=index,power.limit,clocks.max.sm --format=csv "${SMI_SEL[@]}" > "$DIR/limits_$M.csv" 2>&1
stamp() { echo "$1 $2 $(date +%Y/%m/%d\ %H:%M:%S.%3N)" >> "$DIR/stamps_$M.txt"; }
# gemm_alone <name> <impl> <M,N,K>: the matmul alone on every GPU at once (gemm-bench, one process per
# GPU, ITERS x 5 graph replays after 50 warm-up calls, timing only), its window stamped; each GPU's log
# run_<rep>_<name>_gpu<g>_$M.log. Needs W, BIN, GPU, ITERS and rep.
gemm_alone() {
  local name=$1 impl=$2 shape=$3 g pids=()
  stamp start $name
  for g in $(seq 0 $((W - 1))); do
    CUDA_VISIBLE_DEVICES=$g timeout 90 $BIN gemm-bench --shapes "$shape" --impl $impl --mode graph \
      --iters $((ITERS * 5)) --warmup 50 --timing-only --machine ${GPU}x1 > "$DIR/run_${rep}_${name}_gpu${g}_$M.log" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  stamp end $name
  echo "$name: $(grep -E "^bf16" "$DIR/run_${rep}_${name}_gpu0_$M.log" | tail -1 | cut -c1-120)"
}
# mmrs_sustained <name> <algo> [SYMM_DEBUG_MMRS_TILES mode] [bench args...]: the mm_rs program at 70B
# M 16384 on W ranks, ITERS x 5 graph replays, timing only, its window stamped; its log
# run_<rep>_<name>_$M.log. SYMM_DEBUG_FUSED_SMS, when set, caps the tile programs' blocks. Needs W,
# BIN, ITERS and rep.
mmrs_sustained() {
  local name=$1 algo=$2 mode=${3:-}
  shift 2
  [ $# -gt 0 ] && shift
  stamp start $name
  timeout 120 env SYMM_DEBUG_MMRS_TILES=$mode $BIN launch -n $W -- $BIN bench --backend cuda --op mm_rs --algo $algo \
    --dtype bf16 --shape 70b --m 16384 --mode graph --iters $ITERS --calls 5 --no-baselines --timing-only "$@" \
    > "$DIR/run_${rep}_${name}_$M.log" 2>&1
  echo "# $name rc $?"
  stamp end $name
  grep -E "^mm_rs " "$DIR/run_${rep}_${name}_$M.log" | cut -c1-150
}
