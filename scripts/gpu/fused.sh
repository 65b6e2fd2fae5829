#!/usr/bin/env bash
# Matmul fused with communication (ag_mm, mm_rs) on the GPU machine, from the repository root,
# binaries carried in .carry/ (build/apps/symmcoll-cuda) (as scripts/gpu/h200.sh):
#   scripts/gpu/fused.sh <world> <out-dir> [check|bench|chunks|all]     (all = check + bench)
#   check   correctness, no timing: small custom shapes against the float64 reference and
#           nccl_cublaslt's result, bf16 and fp16, each fused plan also replayed 20x as a
#           one-call CUDA graph (consumed flags must stay right)              -> fused_check_<m>.log
#   bench   the 8B and 70B shapes at M 4096 and 16384, bf16, eager and graph, every fused
#           algorithm next to cublaslt (matmul alone) and nccl_cublaslt; each row is also
#           checked against nccl_cublaslt's result                    -> fused_<m>.csv / .log
#   chunks  (not in all) 70B M 16384 at several --chunk-rows, graph, log only -> fused_chunks_<m>.log
# About 2-3 minutes of GPU time for `all` at world 2. Multicast stays off.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
W=${1:?usage: scripts/gpu/fused.sh <world> <out-dir> [check|bench|chunks|all]}
DIR=${2:?usage: scripts/gpu/fused.sh <world> <out-dir> [check|bench|chunks|all]}
WHAT=${3:-all}
mkdir -p "$DIR"
BIN=.carry/symmcoll-cuda  # the CUDA build of the command (apps/CMakeLists.txt)
[ -x $BIN ] || BIN=.carry/symmcoll
M=h200x$W
devs=$(seq -s, 0 $((W - 1)))
B="env CUDA_VISIBLE_DEVICES=$devs $BIN launch -n $W -- $BIN bench --backend cuda"
rc=0
SECONDS=0
if [ "$WHAT" = check ] || [ "$WHAT" = all ]; then
  : > "$DIR/fused_check_$M.log"
  # M 8*W*... : every world 2..8 that divides it; N and K multiples of 8 (16-byte rows).
  timeout 150 $B --op ag_mm,mm_rs --algo all --dtype bf16,fp16 --n 512 --k 1024 --m $((64 * W)),$((384 * W)) \
    --no-timing --replays 20 >> "$DIR/fused_check_$M.log" 2>&1 || rc=1
  timeout 90 $B --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b --m $((128 * W)) --chunk-rows 32 \
    --no-timing --replays 20 >> "$DIR/fused_check_$M.log" 2>&1 || rc=1
  grep -E "FAIL|error|check failure" "$DIR/fused_check_$M.log" | head -20
  echo "# check done at ${SECONDS}s (rc $rc)"
fi
if [ "$WHAT" = bench ] || [ "$WHAT" = all ]; then
  timeout 240 $B --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b,70b --m 4096,16384 --mode both \
    --machine $M --csv "$DIR/fused_$M.csv" > "$DIR/fused_$M.log" 2>&1 || rc=1
  grep -E "^# |FAIL|error" "$DIR/fused_$M.log" | head -20
  grep -vE "^#" "$DIR/fused_$M.log" | head -80
  echo "# bench done at ${SECONDS}s (rc $rc)"
fi
if [ "$WHAT" = chunks ]; then
  : > "$DIR/fused_chunks_$M.log"
  for c in 256 512 1024 2048 4096; do
    timeout 60 $B --op ag_mm,mm_rs --algo all --no-baselines --timing-only --dtype bf16 --shape 70b,8b --m 16384 \
      --mode graph --chunk-rows $c >> "$DIR/fused_chunks_$M.log" 2>&1 || rc=1
  done
  grep -vE "^#" "$DIR/fused_chunks_$M.log" | grep -v "^op" | sort -k2,2 -k5,5n -k8,8n
  echo "# chunks done at ${SECONDS}s (rc $rc)"
fi
exit $rc
