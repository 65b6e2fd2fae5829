#!/usr/bin/env bash
# The tile device programs (issue 24) on the wgmma kernel, on one GPU (the `run` tool, kind
# nvidia-h200), from the repository root, the binary carried (BIN, default .carry/i24c/symmcoll-cuda):
#   scripts/gpu/tile_fused.sh <out-dir> [machine]
# 1. correctness, in-process teams of 2 and 4 ranks: every fused plan (--algo all: the host plans
#    and ag_mm.ce_tile_gemm, mm_rs.tile_st_ld_reduce, mm_rs.tile_st_peer_reduce) in bf16 and fp16,
#    checked against float64 and the team's answer, 20 graph replays; then the 8B shape at M 4096;
# 2. timing, 2 ranks: the tile programs beside cublaslt and tile_gemm (the matmul alone, on cuBLASLt
#    and as the TileGemm program) at 8b, 70b x M 4096, 16384, graph and eager -> CSVs;
# 3. timing, 1 rank (its GPU to itself): the same rows on all SMs.
# Multicast stays off; nothing touches clocks. Every command under its own `timeout`.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
DIR=${1:?usage: scripts/gpu/tile_fused.sh <out-dir> [machine]}
M=${2:-h200x1}
BIN=${BIN:-.carry/i24c/symmcoll-cuda}
B="$BIN bench --backend cuda"
mkdir -p "$DIR"
nvidia-smi --query-gpu=index,name,memory.total,clocks.sm,clocks.max.sm --format=csv > "$DIR/gpu.txt" 2>&1
L=$DIR/check.log; : > "$L"
SECONDS=0
step() {  # step <timeout> <log> <title> <command...>
  local t=$1 log=$2 title=$3; shift 3
  echo "### $title" >> "$log"
  timeout "$t" "$@" >> "$log" 2>&1
  echo "### rc $? at ${SECONDS}s" >> "$log"
}
[ -z "${SKIP_CHECK:-}" ] && {
for w in 2 4; do
  step 45 "$L" "check world $w small" $B --world $w --op ag_mm,mm_rs --algo all --dtype bf16,fp16 --m 512 --n 256 --k 512 --no-timing --replays 20
done
for w in 2 4; do
  step 40 "$L" "check world $w 8b M 4096" $B --world $w --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b --m 4096 --no-timing
done
}
T=$DIR/timing.log; : > "$T"
step 55 "$T" "time world 2 ag_mm" $B --world 2 --op ag_mm --algo tiles,ce --shape 8b,70b --m 4096,16384 --mode both --iters 5 --warmup 1 --machine "$M" --csv "$DIR/tile_fused_ag_mm_w2_$M.csv"
step 55 "$T" "time world 2 mm_rs" $B --world 2 --op mm_rs --algo tiles,tiles_push --shape 8b,70b --m 4096,16384 --mode both --iters 5 --warmup 1 --machine "$M" --csv "$DIR/tile_fused_mm_rs_w2_$M.csv"
step 35 "$T" "time world 1 (one process, NCCL of one rank)" $B --op ag_mm,mm_rs --algo tiles --shape 8b,70b --m 4096,16384 --mode graph --iters 5 --warmup 1 --machine "$M" --csv "$DIR/tile_fused_w1_$M.csv"
grep -E "^###|FAIL|rror|check failure|skip|timed out" "$L" "$T"
grep -vE "^#" "$T" | grep -E "tile|cublaslt" | head -80
