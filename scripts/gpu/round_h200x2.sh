#!/usr/bin/env bash
# 2x H200, one device call, after the day's changes (tile programs on the wgmma kernel, one graph
# per team, side streams joined only when used, calibrate's launch rows launched with PDL):
#   1. fused bench, every algorithm (host plans and the tile programs) and baseline (cublaslt,
#      tile_gemm, nccl_cublaslt), 8b/70b x M 4096/16384, graph and eager, checked
#                                                         -> fused_<sha>_h200x2.csv / .log
#   2. the tile programs and fused plans under compute-sanitizer memcheck and racecheck (world 2,
#      small shape, one checked call each)                  -> sanitize_fused_<tool>_w2.log
#   3. the collective host plans checked with 20 graph replays (64K, 16M)   -> plans_check_h200x2.log
#   4. calibrate (world 2)                                   -> calibrate_h200x2.csv / .log
#   5. the GPU suite's hang cases, world 2 (one process per GPU)            -> hang_h200x2.log
#   scripts/gpu/round_h200x2.sh <out-dir>
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_VISIBLE_DEVICES=0,1
DIR=${1:?usage: scripts/gpu/round_h200x2.sh <out-dir>}
BIN=.carry/symmcoll-cuda
SHA=$($BIN --version 2>/dev/null | awk '{print substr($2, 1, 7)}')
L="$BIN launch -n 2 --"
SECONDS=0
timeout 200 $L $BIN bench --backend cuda --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b,70b --m 4096,16384 \
  --mode both --csv "$DIR/fused_${SHA}_h200x2.csv" > "$DIR/fused_${SHA}_h200x2.log" 2>&1
echo "# 1 fused bench: rc $? at ${SECONDS}s"
grep -E "FAIL|error|ag_mm .*tile|mm_rs .*tile|cublaslt|tile_gemm" "$DIR/fused_${SHA}_h200x2.log" | head -40
SAN=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck; do
  extra=(); [ $tool = memcheck ] && extra=(--report-api-errors no --leak-check no)
  SYMM_WAIT_TIMEOUT_S=120 SYMM_STREAM_TIMEOUT_S=300 timeout 150 $L $SAN --tool $tool "${extra[@]}" --error-exitcode 3 \
    $BIN bench --backend cuda --op ag_mm,mm_rs --algo all --dtype bf16 --m 512 --n 256 --k 512 --no-timing \
    > "$DIR/sanitize_fused_${tool}_w2.log" 2>&1
  echo "# 2 sanitize fused $tool: rc $? at ${SECONDS}s"
  grep -E "(ERROR|RACECHECK) SUMMARY|error" "$DIR/sanitize_fused_${tool}_w2.log" | head -4
done
timeout 90 $L $BIN bench --backend cuda --op all_gather,reduce_scatter --algo ce,ce_sm,ce_overlap --dtype bf16,fp32 \
  --sizes 64K,16M --no-timing --replays 20 > "$DIR/plans_check_h200x2.log" 2>&1
echo "# 3 plans check: rc $? at ${SECONDS}s"; grep -E "FAIL|error" "$DIR/plans_check_h200x2.log" | head -3
timeout 90 $L $BIN calibrate --backend cuda --csv "$DIR/calibrate_h200x2.csv" > "$DIR/calibrate_h200x2.log" 2>&1
echo "# 4 calibrate: rc $? at ${SECONDS}s"; grep -E "^launch," "$DIR/calibrate_h200x2.csv" | head -4
SB=$(mktemp -d); mkdir -p "$SB/apps" && ln -s "$PWD/$BIN" "$SB/apps/symmcoll-cuda"
timeout 200 env SYMM_TEST_LOGDIR="$SB/logs" bash tests/gpu/run.sh "$SB" hang > "$DIR/hang_h200x2.log" 2>&1
echo "# 5 hang: rc $? at ${SECONDS}s"; grep -E "^--- |GPU suite" "$DIR/hang_h200x2.log" | head -14
