#!/usr/bin/env bash
# Our tile GEMM's ping-pong schedule (issue 24 item 2) beside its coop schedule and cuBLASLt, on one
# GPU (the `run` tool, kind nvidia-h200 or nvidia-h100-x1), from the repository root, the binary
# carried (BIN, default .carry/symmcoll-cuda):
#   bash scripts/gpu/tile_gemm_pp.sh <out-dir> [machine]        (machine: h200x1 (default) or h100x1)
# 1. checks (gemm-bench --no-timing: every element written, sampled entries against float64, ours
#    equal to cuBLASLt's C, C_in added), bf16 and fp16, on edge shapes (M off 64 and 128, N off
#    the tile width, K off 64, K below one k-block) and one fused shape:
#      coop at the chosen width               -> check_coop.log
#      pingpong, every ping-pong tile          -> check_pingpong.log
#      pingpong on few blocks (--sms 7, 1): many tiles per block, odd and even counts, the ring
#      wrapping inside and across tiles (K 8: one k-block per tile)   -> check_pingpong.log
#      auto on the fused K 2048 shapes         -> check_auto.log
#    (exit 1 on a failed check; a failed pingpong check skips the pingpong and auto timings)
# 2. times the issue-24 fused shapes in bf16 (gemm-bench --shapes fused --timing-only, graph and
#    eager, cuBLASLt side by side as always) with --schedule coop, pingpong, auto
#    -> tile_gemm_<schedule>_<machine>.csv / .log (the CSV columns of tile_gemm.sh's; the log's
#    tile column and its first line name the schedule), and ratios.txt: cuBLASLt's median over
#    ours per shape, mode and schedule.
# Multicast stays off (nothing here uses it anyway). Never touches clocks. Takes about 2 to 3 minutes.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
DIR=${1:?usage: scripts/gpu/tile_gemm_pp.sh <out-dir> [machine]}
M=${2:-h200x1}
BIN=${BIN:-.carry/symmcoll-cuda}
mkdir -p "$DIR"
{ nvidia-smi --query-gpu=index,name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv; } > "$DIR/gpu.txt" 2>&1
head -3 "$DIR/gpu.txt"
rc=0
pp_ok=1
SECONDS=0
EDGE="1000,1000,1000;300,520,136;129,8,8;4096,1792,4096"
check() {  # check <log> <what> <gemm-bench args...>
  local log=$1 what=$2
  shift 2
  echo "## $what: gemm-bench --no-timing $*" >> "$DIR/$log"
  timeout 60 $BIN gemm-bench --no-timing --dtype bf16,fp16 "$@" >> "$DIR/$log" 2>&1 || {
    echo "check FAILED ($what): $*"
    return 1
  }
}
# 1. checks
check check_coop.log coop --schedule coop --shapes "$EDGE" || rc=1
for tile in 128x128 64x256 64x224 64x192 64x128; do
  check check_pingpong.log "pingpong $tile" --schedule pingpong --tile-m ${tile%x*} --tile-n ${tile#*x} \
    --shapes "$EDGE" || pp_ok=0
done
check check_pingpong.log "pingpong on 7 blocks" --schedule pingpong --sms 7 \
  --shapes "1000,1000,1000;1000,1000,8;1000,1000,200;300,520,136" || pp_ok=0
check check_pingpong.log "pingpong 64x256 on 7 blocks" --schedule pingpong --tile-m 64 --tile-n 256 --sms 7 \
  --shapes "1000,1000,1000;1000,1000,8;2000,520,520" || pp_ok=0
check check_pingpong.log "pingpong on 1 block" --schedule pingpong --sms 1 --shapes "129,8,8;520,264,200;264,136,64" || pp_ok=0
check check_auto.log auto --schedule auto --shapes "8192,1792,2048;16384,1792,2048" || pp_ok=0
[ $pp_ok = 1 ] || rc=1
cat "$DIR"/check_*.log | grep -E "FAIL|error|^##" | head -40
echo "# checks rc $rc (pingpong ok: $pp_ok) at ${SECONDS}s"
# 2. timing
schedules="coop"
[ $pp_ok = 1 ] && schedules="coop pingpong auto"
for s in $schedules; do
  timeout ${BENCH_TIMEOUT:-75} $BIN gemm-bench --shapes "${SHAPES:-fused}" --dtype bf16 --timing-only --schedule $s \
    --machine "$M" --out "$DIR/tile_gemm_${s}_$M.csv" ${BENCH_ARGS:-} > "$DIR/tile_gemm_${s}_$M.log" 2>&1 || {
    rc=1
    echo "bench $s FAILED"
  }
  echo "# bench $s at ${SECONDS}s"
done
# ratios.txt: one line per shape and mode, cuBLASLt's median over ours per schedule (the log's
# ratio column: 4th from the right), then the tile each schedule ran.
for s in $schedules; do
  grep -E "^(bf16|fp16) " "$DIR/tile_gemm_${s}_$M.log" |
    awk -v s=$s '{t=""; for (i = 6; i <= NF - 6; ++i) t = t (t == "" ? "" : " ") $i; print $2, $3, $4, $5, s, $(NF-3), t}'
done | sort -k1n -k2n -k3n -k4 | awk '
  { key = $1 " " $2 " " $3 " " $4; if (!(key in seen)) { order[++n] = key; seen[key] = 1 }
    r[key, $5] = $6; tl[key, $5] = $7 " " $8 }
  END { printf "%-24s %8s %8s %8s   %s\n", "M N K mode", "coop", "pingpong", "auto", "auto ran";
        for (i = 1; i <= n; ++i) { k = order[i];
          printf "%-24s %8s %8s %8s   %s\n", k, r[k, "coop"], r[k, "pingpong"], r[k, "auto"], tl[k, "auto"] } }' \
  > "$DIR/ratios.txt"
cat "$DIR/ratios.txt"
echo "# done rc $rc at ${SECONDS}s"
exit $rc
