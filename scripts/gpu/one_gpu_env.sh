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
# begin <log-stem> [binary]: the out-dir made, the log $T = <out-dir>/<log-stem>_<machine>.log, the
# binary $B (default build/apps/symmcoll-cuda) and the GPU's name, memory and clock in gpu_<machine>.csv
# (l2_calib.sh, reduce_calib.sh).
begin() {
  B=${2:-build/apps/symmcoll-cuda}
  mkdir -p "$DIR"
  T=$DIR/$1_$M.log
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv > "$DIR/gpu_$M.csv" 2>&1
}
