#!/usr/bin/env bash
# Power and SM clock of one GEMM alone, ours against cuBLASLt, on GPU 0 of a machine of W GPUs
# (binary carried in .carry/symmcoll-cuda): each implementation alone in a long run (70B M 16384:
# N 3584, K 8192, graph replays, timing only, ~4 s), nvidia-smi sampling the clock and power every
# 100 ms (nvlink_env.sh) and the start and end of each run stamped beside it:
#   scripts/gpu/gemm_power.sh <world> <out-dir>      -> gemm_<impl>_<m>.log, stamps_<m>.txt, smi_<m>.csv
# Is our GEMM at the power limit where cuBLASLt is not (beside ag_mm's copy-engine pushes ours
# loses 7-10 % and cuBLASLt 1-2 %: experiments/results/h100x2/agmm_floor_6e1fc4c)?
source scripts/gpu/nvlink_env.sh
for impl in tile cublaslt tile cublaslt; do
  echo "start $impl $(date +%Y/%m/%d\ %H:%M:%S.%3N)" >> "$DIR/stamps_$M.txt"
  CUDA_VISIBLE_DEVICES=0 timeout 60 $BIN gemm-bench --shapes "16384,3584,8192" --impl $impl --mode graph \
    --iters 2500 --warmup 50 --timing-only --machine ${GPU}x1 >> "$DIR/gemm_${impl}_$M.log" 2>&1
  echo "end $impl $(date +%Y/%m/%d\ %H:%M:%S.%3N)" >> "$DIR/stamps_$M.txt"
  sleep 1
done
cat "$DIR/stamps_$M.txt"
grep -E "16384" "$DIR"/gemm_*_$M.log | head
