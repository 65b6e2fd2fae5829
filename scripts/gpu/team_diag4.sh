#!/usr/bin/env bash
# One GPU, 2 ranks in process: which mm_rs settings stall (../results/h100x1/team/run4, run5).
# Each variant checked once (no timing) under a 15 s bound (a healthy one ends in a few seconds).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_VISIBLE_DEVICES=0
DIR=${1:?usage: team_diag4.sh <out-dir> <machine>}; M=${2:?machine}
L=$DIR/team_diag4_$M.log; : > "$L"
B=".carry/symmcoll-cuda bench --backend cuda --world 2 --dtype bf16 --no-timing --replays 0"
SECONDS=0
while read -r name args; do
  echo "### $name: $args" >> "$L"
  timeout 15 $B $args >> "$L" 2>&1
  echo "### rc $? at ${SECONDS}s" >> "$L"
done <<'V'
default --op mm_rs --algo ce --shape 8b --m 4096
chunk1024 --op mm_rs --algo ce --shape 8b --m 4096 --chunk-rows 1024
streams2 --op mm_rs --algo ce --shape 8b --m 4096 --streams 2
m2048 --op mm_rs --algo ce --shape 8b --m 2048
n512 --op mm_rs --algo ce --n 512 --k 4096 --m 4096
k1024 --op mm_rs --algo ce --n 1792 --k 1024 --m 4096
st --op mm_rs --algo st --shape 8b --m 4096
ag_mm --op ag_mm --algo ce --shape 8b --m 4096
V
grep -E "^###|error" "$L"
