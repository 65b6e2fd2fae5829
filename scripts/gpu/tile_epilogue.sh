#!/usr/bin/env bash
# Our tile GEMM's epilogue through shared memory and TMA stores (store_tile_tma) against the
# epilogue from registers (SYMM_TILE_EPILOGUE=registers), coop schedule, on one GPU (the `run`
# tool, nvidia-h100-x1 or nvidia-h200), from the repository root, the binary carried
# (BIN, default .carry/symmcoll-cuda):
#   bash scripts/gpu/tile_epilogue.sh <out-dir> [machine]      (machine: h100x1 (default) or h200x1)
# 1. checks (gemm-bench --no-timing: every element written, sampled entries against float64, ours
#    equal to cuBLASLt's C, C_in added), bf16 and fp16, coop at widths 256, 192, 128 (TMA) and 224
#    (registers: not a whole number of 64-column boxes), on edge shapes (the TMA store clips the
#    matrix edges), on 7 and 1 blocks (many tiles per block: the two buffers alternate across
#    tiles, odd box counts at 192) and a fused shape                    -> check.log
# 2. the fused shapes in bf16 (gemm-bench --shapes fused --timing-only --schedule coop, graph and
#    eager, cuBLASLt beside), epilogue from registers and through TMA interleaved twice
#                                           -> tile_{reg,tma}{1,2}_<machine>.csv / .log
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
DIR=${1:?usage: scripts/gpu/tile_epilogue.sh <out-dir> [machine]}
M=${2:-h100x1}
BIN=${BIN:-.carry/symmcoll-cuda}
mkdir -p "$DIR"
{ nvidia-smi --query-gpu=index,name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv; $BIN --version; } \
  > "$DIR/gpu.txt" 2>&1
head -3 "$DIR/gpu.txt"
rc=0
SECONDS=0
EDGE="1000,1000,1000;300,520,136;129,8,8;4096,1792,4096;16384,3584,4096"
check() {  # check <what> <gemm-bench args...>
  local what=$1
  shift
  echo "## $what: gemm-bench --no-timing $*" >> "$DIR/check.log"
  timeout 90 $BIN gemm-bench --no-timing --dtype bf16,fp16 --schedule coop "$@" >> "$DIR/check.log" 2>&1 || {
    echo "check FAILED ($what): $*"
    rc=1
  }
}
for w in 256 192 128 224; do check "width $w" --tile-n $w --shapes "$EDGE"; done
check "256 on 7 blocks" --tile-n 256 --sms 7 --shapes "1000,1000,1000;2000,520,520;1000,1000,8"
check "192 on 7 blocks" --tile-n 192 --sms 7 --shapes "1000,1000,1000;2000,520,520;1000,1000,8"
check "192 on 1 block" --tile-n 192 --sms 1 --shapes "129,8,8;520,392,200;264,136,64"
SYMM_TILE_EPILOGUE=registers check "registers, 256" --tile-n 256 --shapes "1000,1000,1000;300,520,136"
grep -E "FAIL|rror|^##|TMA" "$DIR/check.log" | head -30
echo "# checks rc $rc at ${SECONDS}s"
[ $rc = 0 ] || exit 1
for rep in 1 2; do
  for e in reg tma; do
    env_e=(); [ $e = reg ] && env_e=(SYMM_TILE_EPILOGUE=registers)
    env ${env_e[@]+"${env_e[@]}"} timeout 200 $BIN gemm-bench --shapes fused --dtype bf16 --timing-only \
      --schedule coop --machine "$M" --out "$DIR/tile_${e}${rep}_$M.csv" > "$DIR/tile_${e}${rep}_$M.log" 2>&1
    echo "# $e$rep: rc $? at ${SECONDS}s"
  done
done
