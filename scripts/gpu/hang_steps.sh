#!/usr/bin/env bash
# Diagnosis: the steps (SYMM_DEBUG_BENCH_STEPS) of both ranks when rank 1 never calls the fused mm_rs
# tile program (SYMM_TEST_RANK_SKIP=1), eager and graph, 2-s plan bound; writes $OUT/steps_<mode>.log.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
B=${BIN:-$PWD/.carry/symmcoll-cuda}
for mode in eager graph; do
  CUDA_VISIBLE_DEVICES=0,1 SYMM_WAIT_TIMEOUT_S=2 SYMM_STREAM_TIMEOUT_S=8 SYMM_TEST_RANK_SKIP=1 SYMM_DEBUG_BENCH_STEPS=1 \
    timeout 40 $B launch -n 2 -- $B bench --backend cuda --no-baselines --timing-only --iters 3 --warmup 1 --dtype bf16 \
    --m 2048 --n 512 --k 1024 --op mm_rs --algo tiles --mode $mode --plan-timeout 2 > "$OUT/steps_$mode.log" 2>&1
  echo "# $mode rc $?" >> "$OUT/steps_$mode.log"
done
