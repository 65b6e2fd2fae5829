#!/usr/bin/env bash
# The 2x H200 performance gaps (the copy-engine all-gather, the fused operations, the smallest
# all-reduce): knob sweeps that choose the defaults, graph mode unless said, timing only (every
# default chosen from them is checked by the bench runs of scripts/gpu/h200.sh and fused.sh).
# From the repository root, binaries carried in .carry/ (build/apps/symmcoll-cuda):
#   scripts/gpu/gaps.sh <world> <out-dir> [ce|split|fused|ar|all]
#   ce     all_gather ce and ce_sm at --streams x --chunk-bytes, 1M..256M, NCCL's rows (its
#          copy-engine all-gather too) in the first call                  -> gaps_ce_<m>.log
#   split  all_gather ce_sm at --sm-percent, 16M..256M                       -> gaps_split_<m>.log
#   fused  ag_mm / mm_rs fused plans at --chunk-rows, 70B and 8B, M 16384, both launch modes,
#          the matmul alone and NCCL + cuBLASLt in the first call          -> gaps_fused_<m>.log
#   ar     the flagged-packet and push all-reduce at 4K-64K: blocks x threads -> gaps_ar_<m>.log
# The CSV schema has no streams / chunk / percent / threads column: each call's knobs are the
# "# knobs" line above its rows in the log. Multicast stays off in every command.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
W=${1:?usage: scripts/gpu/gaps.sh <world> <out-dir> [ce|split|fused|ar|all]}
DIR=${2:?usage: scripts/gpu/gaps.sh <world> <out-dir> [ce|split|fused|ar|all]}
WHAT=${3:-all}
mkdir -p "$DIR"
BIN=.carry/symmcoll-cuda
M=h200x$W
devs=$(seq -s, 0 $((W - 1)))
B="env CUDA_VISIBLE_DEVICES=$devs $BIN launch -n $W -- $BIN bench --backend cuda"
SECONDS=0
want() { [ "$WHAT" = all ] || [ "$WHAT" = "$1" ]; }
if want ce; then
  L="$DIR/gaps_ce_$M.log"
  : > "$L"
  first=1
  for st in ${CE_STREAMS:-3 5}; do
    for cb in ${CE_CHUNKS:-8M 32M 64M 128M}; do
      nccl="--no-nccl"
      [ $first = 1 ] && nccl="" && first=0
      echo "# knobs: streams $st chunk-bytes $cb" >> "$L"
      timeout 60 $B --op all_gather --algo ce,ce_sm,push --sizes 1M,4M,16M,64M,256M --mode graph --timing-only $nccl \
        --streams $st --chunk-bytes $cb --machine $M >> "$L" 2>&1
    done
  done
  echo "# ce done at ${SECONDS}s"
fi
if want split; then
  L="$DIR/gaps_split_$M.log"
  : > "$L"
  for pct in ${SPLIT_PCT:-20 30 40 50 60 70}; do
    echo "# knobs: sm-percent $pct" >> "$L"
    timeout 60 $B --op all_gather --algo ce_sm --sizes 16M,64M,256M --mode both --timing-only --no-nccl \
      --sm-percent $pct --machine $M >> "$L" 2>&1
  done
  echo "# split done at ${SECONDS}s"
fi
if want fused; then
  L="$DIR/gaps_fused_$M.log"
  : > "$L"
  base=""
  for c in ${FUSED_CHUNKS:-1024 2048 4096}; do
    echo "# knobs: chunk-rows $c" >> "$L"
    timeout 120 $B --op ag_mm,mm_rs --algo all $base --timing-only --dtype bf16 --shape 70b,8b --m 16384 \
      --mode both --chunk-rows $c >> "$L" 2>&1
    base="--no-baselines"
  done
  echo "# fused done at ${SECONDS}s"
fi
if want ar; then
  L="$DIR/gaps_ar_$M.log"
  : > "$L"
  for th in 64 128 256; do
    echo "# knobs: threads $th" >> "$L"
    timeout 60 $B --op all_reduce --algo one_shot_ll,one_shot_push --sizes 4K,16K,64K --blocks 1,2,4,8,16 --threads $th \
      --mode graph --timing-only --no-nccl >> "$L" 2>&1
  done
  echo "# ar done at ${SECONDS}s"
fi
