#!/usr/bin/env bash
# The 2x H200 issue's re-measurement, one device call on a kind that may come as H200 or H100:
# only when GPUs 0 and 1 are H200s (else it prints what came and exits 0, so an H100 pair costs
# seconds, not a round):
#   1. round.sh 2 steps 1 and 3: the fused bench (every algorithm, checked) and plans.sh (host
#      plans 1M..256M and the small all-reduce, NCCL's rows beside)   -> <out>/round/
#   2. the reduce-scatter and all-gather SM programs, every algorithm, 4K..1M x4, graph and
#      eager, checked, NCCL's rows beside                              -> <out>/round/bench_small_rsag_h200x2.csv
#   scripts/gpu/h200_pair.sh <out-dir>   (binary: .carry/symmcoll-cuda)
set -uo pipefail
OUT=${1:?usage: scripts/gpu/h200_pair.sh <out-dir>}
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,memory.total --format=csv > "$OUT/gpus.txt" 2>&1
cat "$OUT/gpus.txt"
if [ "$(nvidia-smi -L | grep -c H200)" -lt 2 ]; then
  echo "# not two H200s: nothing run"
  exit 0
fi
bash scripts/gpu/round.sh 2 "$OUT/round" 13
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
BIN=.carry/symmcoll-cuda
timeout 150 env CUDA_VISIBLE_DEVICES=0,1 $BIN launch -n 2 -- $BIN bench --backend cuda --machine h200x2 \
  --op reduce_scatter,all_gather --algo all --sizes 4K:1M:x4 --mode both --check-up-to 1M \
  --csv "$OUT/round/bench_small_rsag_h200x2.csv" > "$OUT/round/bench_small_rsag_h200x2.log" 2>&1
echo "# rs/ag small: rc $?"; grep -E "FAIL|error" "$OUT/round/bench_small_rsag_h200x2.log" | head
