# Sourced by the scripts that run on a machine of W GPUs (round.sh, floors.sh) with "<world>
# <out-dir> [steps]": the safety variables (multicast off), the libraries, GPUs 0..W-1, the carried
# binary BIN and its commit SHA, the machine name M (h100xW / h200xW, as the bench names its rows
# from the device), DIR created, STEPS (default $DEFAULT_STEPS), and nvidia-smi's SM clock, power
# and temperature sampled every 100 ms into $DIR/smi_$M.csv (read only) until the script exits.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
W=${1:?usage: <script> <world> <out-dir> [steps]}
DIR=${2:?usage: <script> <world> <out-dir> [steps]}
STEPS=${3:-${DEFAULT_STEPS:-12345}}
mkdir -p "$DIR"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
BIN=.carry/symmcoll-cuda
SHA=$($BIN --version 2>/dev/null | awk '{print substr($2, 1, 7)}')
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H100 && echo h100 || echo h200)
M=${GPU}x$W
SECONDS=0
nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu --format=csv,nounits -lms 100 \
  > "$DIR/smi_$M.csv" 2>/dev/null &
SMI=$!
trap 'kill $SMI 2>/dev/null' EXIT
# bench_calls CMD LOG CSV <<'EOF' (one line of arguments per call): runs "CMD <args> --csv <file>" for
# each line, every call's output into LOG after a "# knobs:" line, and joins the calls' CSVs into CSV
# (one header); a failed call sets rc=1 and is named in LOG. Prints LOG's errors.
bench_calls() {
  local cmd=$1 log=$2 csv=$3 i=0 j first=1 args tmp
  tmp=$(mktemp -d)
  : > "$log"
  while read -r args; do
    i=$((i + 1))
    echo "# knobs: $args" >> "$log"
    $cmd $args --csv "$tmp/$i.csv" >> "$log" 2>&1 || { rc=1; echo "# call $i failed" >> "$log"; }
  done
  for j in $(seq 1 $i); do
    [ -f "$tmp/$j.csv" ] || continue
    if [ $first = 1 ]; then cat "$tmp/$j.csv"; first=0; else tail -n +2 "$tmp/$j.csv"; fi
  done > "$csv"
  rm -rf "$tmp"
  grep -E "error|FAIL" "$log" | head
}
