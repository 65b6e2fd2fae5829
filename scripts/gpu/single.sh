#!/usr/bin/env bash
# One device run on a single-GPU machine (the `run` tool, kind nvidia-h200 or nvidia-h100-x1), from
# the repository root, binaries carried in .carry/ (build/apps/symmcoll-cuda) (as scripts/gpu/h200.sh):
#   scripts/gpu/single.sh <out-dir> [name]        (name: h200x1 (default) or h100x1)
# The per-GPU calibration: `symmcoll calibrate --backend cuda` on one rank measures launch
# (graph, eager), local copies (SM and copy engine) and the cuBLASLt GEMM sweep (the fit's shapes
# and the fused operations' held-out shapes), graph and eager  -> calibrate_<name>.csv / .log.
# About a minute of GPU time. Multicast stays off (nothing here uses it anyway).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
DIR=${1:?usage: scripts/gpu/single.sh <out-dir> [name]}
mkdir -p "$DIR"
BIN=.carry/symmcoll-cuda  # the CUDA build of the command (apps/CMakeLists.txt)
[ -x $BIN ] || BIN=.carry/symmcoll
M=${2:-h200x1}
{ nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm,power.limit --format=csv; nvidia-smi topo -m; } > "$DIR/topo.txt" 2>&1
cat "$DIR/topo.txt" | head -4
SECONDS=0
timeout ${CALIB_TIMEOUT:-400} env CUDA_VISIBLE_DEVICES=0 $BIN launch -n 1 -- $BIN calibrate --backend cuda \
  --csv "$DIR/calibrate_$M.csv" > "$DIR/calibrate_$M.log" 2>&1
rc=$?
tail -5 "$DIR/calibrate_$M.log"
grep -E "error|FAIL" "$DIR/calibrate_$M.log" | head
echo "# calibrate rc $rc at ${SECONDS}s, $(grep -c . "$DIR/calibrate_$M.csv" 2>/dev/null) lines"
exit $rc
