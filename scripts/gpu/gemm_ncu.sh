#!/usr/bin/env bash
# What cuBLASLt runs at the fused shapes, beside our tile GEMM, on one GPU (kind nvidia-h100-x1 or
# nvidia-h200): one ncu profile per kernel (its name gives cuBLASLt's tile, cluster and schedule),
# speed of light, launch and warp-state sections, tensor-pipe activity. Clocks untouched
# (ncu --clock-control none). scripts/gpu/gemm_ncu.sh <out-dir>   (binary: .carry/symmcoll-cuda)
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_VISIBLE_DEVICES=0
DIR=${1:?usage: scripts/gpu/gemm_ncu.sh <out-dir>}
BIN=${BIN:-.carry/symmcoll-cuda}
mkdir -p "$DIR"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$DIR/gpu.txt" 2>&1
for shape in ${SHAPES:-16384,1792,2048 16384,3584,4096 16384,3584,8192}; do
  for impl in cublaslt tile; do
    f="$DIR/ncu_${impl}_${shape//,/x}.txt"
    timeout 120 ncu --clock-control none -k regex:"gemm|xmma|cutlass|sm90" -c 1 --launch-skip 2 \
      --section SpeedOfLight --section LaunchStats --section WarpStateStats --section Occupancy \
      --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      $BIN gemm-bench --shapes "$shape" --impl $impl --mode eager --iters 2 --warmup 2 --timing-only > "$f" 2>&1
    echo "== $impl $shape"
    grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\)|L2 Cache Throughput|DRAM Throughput|hmma|Cluster Size|Grid Size|Block Size|Registers Per|Dynamic Shared|lts__t_bytes|dram__bytes" "$f" | head -20
  done
done
