#!/usr/bin/env bash
# One GPU, 2 ranks in process, mm_rs 8B M 4096 timed (iters 5, warmup 1): with and without the
# baselines' timing first, graph or eager only: which step leaves the next plan call stalled.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_VISIBLE_DEVICES=0
DIR=${1:?usage: team_diag5.sh <out-dir> <machine>}; M=${2:?machine}
L=$DIR/team_diag5_$M.log; : > "$L"
B=".carry/symmcoll-cuda bench --backend cuda --world 2 --dtype bf16 --op mm_rs --algo ce --shape 8b --m 4096 --iters 5 --warmup 1"
SECONDS=0
while read -r name args; do
  echo "### $name: $args" >> "$L"
  timeout 40 $B $args >> "$L" 2>&1
  echo "### rc $? at ${SECONDS}s" >> "$L"
done <<'V'
no_baselines --no-baselines --mode both
baselines_eager --mode eager
baselines_graph --mode graph
V
grep -E "^###|error|^mm_rs" "$L"
