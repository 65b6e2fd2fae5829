#!/usr/bin/env bash
# One device call on a machine of W GPUs (one process per GPU, NVLink), after the binaries are
# built here and carried in .carry/:
#   1. fused bench: every algorithm (host plans and tile programs) and baseline (cublaslt,
#      tile_gemm, nccl_cublaslt), 8b/70b x M 4096/16384, graph and eager, checked
#                                                   -> fused_<sha>_<m>.csv / .log
#   2. PyTorch's fused ops (torch.ops.symm_mem) at the same shapes, same call   (TORCH=0: skipped)
#                                                   -> torch_fused_<sha>_<m>.csv / .log
#   3. scripts/gpu/plans.sh W: host plans 1M..256M and the small all-reduce, NCCL's rows beside
#                                                   -> bench_plans_<m>.csv, bench_small_<m>.csv ...
#   4. calibrate (world W)                          -> calibrate_<m>.csv / .log
#   5. the GPU suite's hang cases (world W)         -> hang_<m>.log
#   6. nvidia-smi's SM clock and power, sampled every 100 ms through steps 1-2 (read only)
#                                                   -> smi_<m>.csv
#   scripts/gpu/round.sh <world> <out-dir> [steps, default 123456]
# <m> = h200x<W> (the bench names its rows the same way from the device).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
W=${1:?usage: scripts/gpu/round.sh <world> <out-dir> [steps]}
DIR=${2:?usage: scripts/gpu/round.sh <world> <out-dir> [steps]}
STEPS=${3:-123456}
mkdir -p "$DIR"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
BIN=.carry/symmcoll-cuda
SHA=$($BIN --version 2>/dev/null | awk '{print substr($2, 1, 7)}')
M=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H100 && echo h100x$W || echo h200x$W)
L="$BIN launch -n $W --"
SECONDS=0
has() { [[ $STEPS == *$1* ]]; }
SMI=
if has 6; then
  nvidia-smi --query-gpu=timestamp,index,clocks.sm,power.draw,temperature.gpu --format=csv,nounits -lms 100 \
    > "$DIR/smi_$M.csv" 2>/dev/null & SMI=$!
fi
if has 1; then
  echo "# step 1 fused bench starts at ${SECONDS}s" >> "$DIR/smi_marks_$M.txt"
  timeout 300 $L $BIN bench --backend cuda --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b,70b --m 4096,16384 \
    --mode both --csv "$DIR/fused_${SHA}_$M.csv" > "$DIR/fused_${SHA}_$M.log" 2>&1
  echo "# 1 fused bench: rc $? at ${SECONDS}s"
  grep -E "FAIL|rror" "$DIR/fused_${SHA}_$M.log" | head -10
fi
if has 2; then
  echo "# step 2 torch starts at ${SECONDS}s" >> "$DIR/smi_marks_$M.txt"
  TR=$(command -v torchrun || echo /opt/torch/.venv/bin/torchrun)
  timeout 200 $TR --nproc-per-node $W scripts/gpu/torch_fused.py \
    --out "$DIR/torch_fused_${SHA}_$M.csv" --machine $M > "$DIR/torch_fused_${SHA}_$M.log" 2>&1
  echo "# 2 torch fused: rc $? at ${SECONDS}s"
  grep -E "^(ag_mm|mm_rs)|not measured|Error" "$DIR/torch_fused_${SHA}_$M.log" | head -20
fi
[ -n "$SMI" ] && kill $SMI
if has 3; then
  bash scripts/gpu/plans.sh $W "$DIR"
  echo "# 3 plans: rc $? at ${SECONDS}s"
fi
if has 4; then
  timeout 120 $L $BIN calibrate --backend cuda --csv "$DIR/calibrate_$M.csv" > "$DIR/calibrate_$M.log" 2>&1
  echo "# 4 calibrate: rc $? at ${SECONDS}s"; grep -E "^launch," "$DIR/calibrate_$M.csv" | head -4
fi
if has 5; then
  SB=$(mktemp -d); mkdir -p "$SB/apps" && ln -s "$PWD/$BIN" "$SB/apps/symmcoll-cuda"
  timeout 200 env SYMM_TEST_LOGDIR="$SB/logs" WORLD=$W bash tests/gpu/run.sh "$SB" hang > "$DIR/hang_$M.log" 2>&1
  echo "# 5 hang: rc $? at ${SECONDS}s"; grep -E "^--- |GPU suite" "$DIR/hang_$M.log" | head -14
fi
