#!/usr/bin/env bash
# One device run (the `run` tool), from the repository root, binary carried in .carry/:
#   scripts/gpu/h200.sh <world> [bench|suite|all]
# Writes under $OUT: topo.txt, suite.log, bench_<machine>.csv, bench_<machine>.log (<= 8 files).
# Multicast stays off in every command (never run multimem on the lent machines).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:${LD_LIBRARY_PATH:-}
W=${1:-4}
WHAT=${2:-all}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
BIN=.carry/symmcoll
[ -x $BIN ] || BIN=.carry/symmcoll_cuda
M=h200x$W
{ nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm --format=csv; nvidia-smi topo -m; } > "$OUT/topo.txt" 2>&1
head -12 "$OUT/topo.txt"
rc=0
if [ "$WHAT" = suite ] || [ "$WHAT" = all ]; then
  timeout 200 tests/gpu/run.sh .carry 2>&1 | tee "$OUT/suite_$M.log" | grep -E "^(===|---|GPU suite|FAIL|probe)" || true
  grep -q "all passed" "$OUT/suite_$M.log" || rc=1
fi
if [ "$WHAT" = bench ] || [ "$WHAT" = all ]; then
  devs=$(seq -s, 0 $((W - 1)))
  timeout ${BENCH_TIMEOUT:-330} env CUDA_VISIBLE_DEVICES=$devs $BIN launch -n $W -- $BIN bench --backend cuda \
    --op all_reduce,reduce_scatter,all_gather --algo all --dtype bf16 --sizes 4K:256M --mode both \
    --check-max 16M --machine $M --csv "$OUT/bench_$M.csv" ${BENCH_EXTRA:-} > "$OUT/bench_$M.log" 2>&1 || rc=1
  grep -E "^# |FAIL|error" "$OUT/bench_$M.log" | head -20
  awk '$7==1 || NR<4' "$OUT/bench_$M.log" | head -140
fi
if [ "$WHAT" = tune ] || [ "$WHAT" = all ]; then
  # Block-count sweeps (graph mode, timing only) and the bare barrier's latency: the data the
  # per-size defaults are chosen from. One CSV, several invocations appended.
  devs=$(seq -s, 0 $((W - 1)))
  T="timeout 100 env CUDA_VISIBLE_DEVICES=$devs $BIN launch -n $W -- $BIN bench --backend cuda --mode graph --no-check --machine $M"
  : > "$OUT/tune_$M.log"
  $T --op barrier --algo all --sizes 4K --no-nccl --csv /tmp/t0.csv >> "$OUT/tune_$M.log" 2>&1
  $T --op all_reduce --algo one_shot,one_shot_push,two_shot --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32 --csv /tmp/t1.csv >> "$OUT/tune_$M.log" 2>&1
  $T --op reduce_scatter,all_gather --algo all --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32 --no-nccl --csv /tmp/t2.csv >> "$OUT/tune_$M.log" 2>&1
  $T --op all_reduce --algo two_shot,two_shot_ld --sizes 16M,256M --blocks 32,64,96,132 --no-nccl --csv /tmp/t3.csv >> "$OUT/tune_$M.log" 2>&1
  $T --op reduce_scatter,all_gather --algo all --sizes 16M,256M --blocks 32,64,96,132 --no-nccl --csv /tmp/t4.csv >> "$OUT/tune_$M.log" 2>&1
  { cat /tmp/t0.csv; for f in /tmp/t1.csv /tmp/t2.csv /tmp/t3.csv /tmp/t4.csv; do tail -n +2 $f; done; } > "$OUT/tune_$M.csv" 2>/dev/null
  grep -E "barrier|error" "$OUT/tune_$M.log" | head
fi
exit $rc
