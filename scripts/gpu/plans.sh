#!/usr/bin/env bash
# The host plans and the smallest collectives on a multi-GPU machine, next to NCCL in the same
# calls, from the repository root, binaries carried in .carry/ (build/apps/symmcoll-cuda):
#   scripts/gpu/plans.sh <world> <out-dir>
#   bench_plans_<m>.csv/.log  all_gather (ce, ce_sm, push) and reduce_scatter (ce, ce_overlap,
#                             pull) 1M..256M x4, graph and eager, checked up to 64M, NCCL's rows
#                             (nccl_ce: its copy-engine all-gather) in the same call
#   bench_small_<m>.csv/.log  all_reduce, every algorithm, 4K..1M x4, graph and eager, checked,
#                             with programmatic dependent launch (the default) ...
#   bench_small_nopdl_<m>.csv ... and the same with --pdl off (log appended to bench_small_<m>.log)
#   bench_rsag_<m>.csv/.log   reduce_scatter and all_gather, every algorithm (the LL ones included,
#                             which the plans step leaves out), 4K..16M x4, graph and eager, checked
#                             up to 1M, NCCL's rows in the same calls
# About three minutes at world 2. Multicast stays off.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
W=${1:?usage: scripts/gpu/plans.sh <world> <out-dir>}
DIR=${2:?usage: scripts/gpu/plans.sh <world> <out-dir>}
mkdir -p "$DIR"
BIN=.carry/symmcoll-cuda
M=${MACHINE:-$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H100 && echo h100x$W || echo h200x$W)}
devs=$(seq -s, 0 $((W - 1)))
B="env CUDA_VISIBLE_DEVICES=$devs $BIN launch -n $W -- $BIN bench --backend cuda --machine $M"
rc=0
SECONDS=0
timeout 120 $B --op all_gather --algo ce,ce_sm,push --sizes 1M:256M:x4 --mode both --check-up-to 64M \
  --csv "$DIR/bench_plans_$M.csv" > "$DIR/bench_plans_$M.log" 2>&1 || rc=1
timeout 120 $B --op reduce_scatter --algo ce,ce_overlap,pull --sizes 1M:256M:x4 --mode both --check-up-to 64M \
  --csv /tmp/rs.csv >> "$DIR/bench_plans_$M.log" 2>&1 || rc=1
tail -n +2 /tmp/rs.csv >> "$DIR/bench_plans_$M.csv"
echo "# plans done at ${SECONDS}s (rc $rc)"
timeout 90 $B --op all_reduce --algo all --sizes 4K:1M:x4 --mode both --check-up-to 1M \
  --csv "$DIR/bench_small_$M.csv" > "$DIR/bench_small_$M.log" 2>&1 || rc=1
timeout 90 $B --op all_reduce --algo all --sizes 4K:1M:x4 --mode both --check-up-to 1M --no-nccl --pdl off \
  --csv "$DIR/bench_small_nopdl_$M.csv" >> "$DIR/bench_small_$M.log" 2>&1 || rc=1
echo "# small done at ${SECONDS}s (rc $rc)"
for op in reduce_scatter all_gather; do
  timeout 120 $B --op $op --algo all --sizes 4K:16M:x4 --mode both --check-up-to 1M \
    --csv /tmp/rsag_$op.csv >> "$DIR/bench_rsag_$M.log" 2>&1 || rc=1
done
{ cat /tmp/rsag_reduce_scatter.csv; tail -n +2 /tmp/rsag_all_gather.csv; } > "$DIR/bench_rsag_$M.csv"
echo "# reduce_scatter, all_gather 4K-16M done at ${SECONDS}s (rc $rc)"
grep -E "FAIL|error" "$DIR"/bench_*_$M.log | head -20
exit $rc
