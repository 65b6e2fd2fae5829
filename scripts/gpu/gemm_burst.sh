#!/usr/bin/env bash
# Is cuBLASLt's fast mode at 16384 x 3584 x 2048 (h200x1/cublaslt_modes_048a34b) the GPU's clock before
# its power management slows it? One GPU: cuBLASLt and our tile GEMM alone (graph replays, timing
# only) in runs of increasing length, each after 3 s idle, twice, nvidia-smi's clock, power and
# clock-event mask every 20 ms beside them, each run's start and end stamped (as fused_power.sh):
#   scripts/gpu/gemm_burst.sh <out-dir>   -> run_<rep>_<impl>_<iters>_gpu0_<m>.log, stamps_<m>.txt, smipow_<m>.csv
# experiments/fused_power.py <out-dir> tabulates them.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
DIR=${1:?usage: scripts/gpu/gemm_burst.sh <out-dir>}
mkdir -p "$DIR"
BIN=.carry/symmcoll-cuda
M=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | grep -q H100 && echo h100x1 || echo h200x1)
SHAPE=${SHAPE:-16384,3584,2048}
SMI_GPUS=0 source scripts/gpu/power_samples.sh
# CONFIGS="name:gemm-bench options|..." (a name starting with cublaslt runs cuBLASLt, any other ours)
# replaces the two implementations; ITERS the run lengths.
IFS='|' read -r -a RUNS <<< "${CONFIGS:-cublaslt:|tile:}"
for rep in 1 2; do
  for iters in ${ITERS:-20 200 2000 8000}; do
    for run in "${RUNS[@]}"; do
      cfg=${run%%:*} opts=${run#*:} impl=tile
      [ "${cfg#cublaslt}" != "$cfg" ] && impl=cublaslt
      sleep 3
      name=${cfg}_$iters
      stamp start $name
      CUDA_VISIBLE_DEVICES=0 timeout 120 $BIN gemm-bench --shapes "$SHAPE" --impl $impl --mode graph --iters $iters \
        --warmup 5 --timing-only --machine $M $opts > "$DIR/run_${rep}_${name}_gpu0_$M.log" 2>&1
      stamp end $name
      echo "$rep $name: $(grep -E '^bf16' "$DIR/run_${rep}_${name}_gpu0_$M.log" | cut -c1-120)"
    done
  done
done
