#!/usr/bin/env bash
# Where the copy-engine plans' fixed cost goes at small sizes (the simulator puts all_gather ce 7 us
# too slow and reduce_scatter ce 8 us too fast at world 4, 4K; experiments/tables/fidelity_h200x4.md):
# on GPUs 0..W-1 of one machine, for W in 2 3 4 (as the machine has), timing only, graph and eager:
#   1. all_gather ce, ce_sm and reduce_scatter ce, ce_overlap at 4K, 64K, 1M      -> plans_w<W>.csv / .log
#   2. reduce_scatter ce at --streams 2 (every copy on one side stream) and 3 (two side streams, the
#      default), in turn, twice, 4K and 64K                 -> streams_w<W>_rs_s<s>_<rep>.log (the tables)
#   3. one traced call of each (bench --trace, CUDA events between the plan's items) at 4K -> traces_w<W>/
#   scripts/gpu/ce_small.sh <out-dir> [worlds, default "2 3 4"]
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
DIR=${1:?usage: ce_small.sh <out-dir> [worlds]}
WORLDS=${2:-2 3 4}
BIN=.carry/symmcoll-cuda
mkdir -p "$DIR"
SECONDS=0
for W in $WORLDS; do
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
  for op in all_gather reduce_scatter; do
    a=ce,ce_sm; [ $op = reduce_scatter ] && a=ce,ce_overlap
    timeout 120 $BIN launch -n $W -- $BIN bench --backend cuda --op $op --algo $a --sizes 4K,64K,1M --mode both \
      --timing-only --csv "$DIR/plans_w${W}_$op.csv" > "$DIR/plans_w${W}_$op.log" 2>&1
    echo "# 1 w$W $op: rc $? at ${SECONDS}s"
  done
  for rep in 1 2; do
    for s in 2 3; do
      timeout 90 $BIN launch -n $W -- $BIN bench --backend cuda --op reduce_scatter --algo ce --sizes 4K,64K --mode both \
        --timing-only --streams $s > "$DIR/streams_w${W}_rs_s${s}_$rep.log" 2>&1
      echo "# 2 w$W rs streams $s rep $rep: rc $? at ${SECONDS}s"
    done
  done
  for op in all_gather reduce_scatter; do
    a=ce; timeout 90 $BIN launch -n $W -- $BIN bench --backend cuda --op $op --algo $a --sizes 4K --mode both \
      --timing-only --trace "$DIR/traces_w$W" --trace-calls 3 > "$DIR/trace_w${W}_$op.log" 2>&1
    echo "# 3 w$W $op trace: rc $? at ${SECONDS}s"
  done
done
echo "# ce_small.sh done at ${SECONDS}s"
