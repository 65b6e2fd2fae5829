#!/usr/bin/env bash
# The barrier's wait order, old binary against new, in turn, twice, on whatever came (world 4 and
# 2 over NVLink, GPUs 0..W-1): every all_reduce, reduce_scatter and all_gather device program at
# 4K..1M x4, graph and eager, checked (NCCL's rows left out; the LL programs, which have no
# barrier, are the control: their old / new ratio is the calls' noise).
#   scripts/gpu/barrier_order.sh <out-dir>   (.carry/old/symmcoll-cuda: before; .carry/symmcoll-cuda: after)
# -> <out>/order_<old|new>_<pass>_<m>.csv / .log, m = h200x4 / h200x2 (h100 on H100s)
# About 40 s a binary and world at world 4. Multicast stays off.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
DIR=${1:?usage: scripts/gpu/barrier_order.sh <out-dir>}
mkdir -p "$DIR"
NG=$(nvidia-smi -L | grep -c GPU)
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H100 && echo h100 || echo h200)
WORLDS="4 2"; [ "$NG" -lt 4 ] && WORLDS="2"
SECONDS=0
for w in $WORLDS; do
  M=${GPU}x$w
  devs=$(seq -s, 0 $((w - 1)))
  for pass in 1 2; do
    for v in old new; do
      BIN=.carry/symmcoll-cuda; [ $v = old ] && BIN=.carry/old/symmcoll-cuda
      : > "$DIR/order_${v}_${pass}_$M.log"
      first=1
      for op in all_reduce reduce_scatter all_gather; do
        timeout 120 env CUDA_VISIBLE_DEVICES=$devs $BIN launch -n $w -- $BIN bench --backend cuda --machine $M \
          --op $op --algo all --no-nccl --sizes 4K:1M:x4 --mode both --check-up-to 1M --csv /tmp/order_$op.csv \
          >> "$DIR/order_${v}_${pass}_$M.log" 2>&1 || echo "# $op failed" >> "$DIR/order_${v}_${pass}_$M.log"
        if [ $first = 1 ]; then cat /tmp/order_$op.csv; first=0; else tail -n +2 /tmp/order_$op.csv; fi
      done > "$DIR/order_${v}_${pass}_$M.csv"
      echo "# world $w pass $pass $v: $(grep -c . "$DIR/order_${v}_${pass}_$M.csv") lines at ${SECONDS}s"
      grep -E "FAIL|failed|rror" "$DIR/order_${v}_${pass}_$M.log" | head -3
    done
  done
done
