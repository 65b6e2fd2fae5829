# Sourced by the one-GPU diagnosis scripts (scripts/gpu/team_*.sh): the safety variables (multicast
# off), the libraries, one GPU whatever the machine has, and DIR / M from "<out-dir> <machine-name>".
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_VISIBLE_DEVICES=0
DIR=${1:?usage: <script> <out-dir> <machine-name>}
M=${2:?usage: <script> <out-dir> <machine-name>}
# run <label> <env or command...>: one command, bounded (170 s), its output and return code appended
# to the log $T under "### <label>" (team4_kwaits.sh, team4_barrier.sh).
run() {
  local label=$1; shift
  echo "### $label" >> "$T"
  local t0=$SECONDS
  timeout 170 env "$@" >> "$T" 2>&1
  echo "### rc $? in $((SECONDS - t0)) s" >> "$T"
}
