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
# team_calib <stem> <rows>: calibrate's <rows> as teams of 2, 4 and 8, twice each, into
# <out-dir>/calibrate_<stem>_w<world>_<rep>_<machine>.csv (reduce_calib.sh, barrier_calib_team.sh).
team_calib() {
  for rep in 1 2; do
    for w in 2 4 8; do
      run "rep $rep world $w" "$B" calibrate --backend cuda --world $w --rows "$2" \
        --csv "$DIR/calibrate_$1_w${w}_${rep}_$M.csv"
    done
  done
}
