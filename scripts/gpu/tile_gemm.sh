#!/usr/bin/env bash
# Our tile GEMM beside cuBLASLt on one GPU (the `run` tool, kind nvidia-h200 or nvidia-h100-x1),
# from the repository root, the binary carried (BIN, default .carry/tile_gemm/symmcoll-cuda):
#   scripts/gpu/tile_gemm.sh <out-dir> [machine]        (machine: h200x1 (default) or h100x1)
# 1. checks every compiled tile width on edge shapes (M, N, K off the tile) and a fused shape,
#    bf16 and fp16 (exit 1 on a wrong element);
# 2. times the issue-24 fused shapes (gemm-bench --shapes fused) in bf16, graph and eager, and two
#    of them in fp16  -> tile_gemm_<machine>.csv / .log;
# 2b. TUNE=1: every tile width, and groups 4, 8, 32, on the fused shapes (ours alone, graph)
#     -> tune_<machine>.log;
# 3. where ncu exists, one short profile of our kernel at 70B, M 16384 (ncu_70b_m16384.txt).
# Multicast stays off (nothing here uses it anyway). Never touches clocks (ncu --clock-control none).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
DIR=${1:?usage: scripts/gpu/tile_gemm.sh <out-dir> [machine]}
M=${2:-h200x1}
BIN=${BIN:-.carry/tile_gemm/symmcoll-cuda}
mkdir -p "$DIR"
{ nvidia-smi --query-gpu=index,name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv; which ncu; } > "$DIR/gpu.txt" 2>&1
head -3 "$DIR/gpu.txt"
rc=0
SECONDS=0
# 1. checks
for tn in ${TILES:-256 224 192 128}; do
  timeout 120 $BIN gemm-bench --no-timing --tile-n $tn --dtype bf16,fp16 \
    --shapes "1000,1000,1000;300,520,136;129,8,8;4096,1792,4096" >> "$DIR/check.log" 2>&1 || { rc=1; echo "check tile-n $tn FAILED"; }
done
grep -E "FAIL|error" "$DIR/check.log" | head
echo "# checks rc $rc at ${SECONDS}s"
# 2. timing
timeout ${BENCH_TIMEOUT:-200} $BIN gemm-bench --shapes "${SHAPES:-fused}" --dtype bf16 --machine "$M" \
  --out "$DIR/tile_gemm_$M.csv" ${BENCH_ARGS:-} > "$DIR/tile_gemm_$M.log" 2>&1 || rc=1
timeout 100 $BIN gemm-bench --shapes "${FP16_SHAPES:-8192,1792,4096;16384,3584,8192}" --dtype fp16 --machine "$M" \
  --out "$DIR/tile_gemm_fp16_$M.csv" ${BENCH_ARGS:-} > "$DIR/tile_gemm_fp16_$M.log" 2>&1 || rc=1
cat "$DIR/tile_gemm_$M.log" "$DIR/tile_gemm_fp16_$M.log" | grep -v "^#"
echo "# bench rc $rc at ${SECONDS}s"
# 2b. (TUNE=1) each tile width on the bf16 fused shapes, graph only, ours alone -> tune_<machine>.log
if [ -n "${TUNE:-}" ]; then
  for tn in 256 224 192 128; do
    timeout 60 $BIN gemm-bench --shapes fused --dtype bf16 --impl tile --mode graph --iters 30 --warmup 5 --timing-only \
      --tile-n $tn --machine "$M" >> "$DIR/tune_$M.log" 2>&1
  done
  for gr in 4 8 32; do
    timeout 60 $BIN gemm-bench --shapes fused --dtype bf16 --impl tile --mode graph --iters 30 --warmup 5 --timing-only \
      --group $gr --machine "$M" | sed "s/^bf16/bf16-g$gr/" >> "$DIR/tune_$M.log" 2>&1
  done
  grep -v "^#" "$DIR/tune_$M.log" | grep -v dtype | awk '{print $1, $2, $3, $4, $6, $7, $8}' | sort -k2n -k3n -k4n | head -100
  echo "# tune at ${SECONDS}s"
fi
# 3. profile
if [ -z "${NO_NCU:-}" ] && command -v ncu > /dev/null; then
  timeout 150 ncu --clock-control none -k regex:tile_gemm_kernel -c 1 --set full \
    $BIN gemm-bench --shapes 16384,3584,8192 --impl tile --mode eager --iters 1 --warmup 1 --timing-only \
    > "$DIR/ncu_70b_m16384.txt" 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Hit|Registers Per|Achieved Occupancy|Issue Slots Busy|Warp Cycles Per Issued|Stall" "$DIR/ncu_70b_m16384.txt" | head -30
  echo "# ncu at ${SECONDS}s"
fi
exit $rc
