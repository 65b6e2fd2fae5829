#!/usr/bin/env bash
# One device run (the `run` tool), from the repository root, binaries carried in .carry/ (build/apps/symmcoll-cuda):
#   scripts/gpu/h200.sh <world> [suite|bench|tune|lltune|all]     (all = suite + bench + lltune)
#   scripts/gpu/h200.sh <world> [hang|sanitize|reliability]         (reliability = hang + sanitize)
# Writes under $OUT: topo.txt, suite_<m>.log, bench_<m>.csv/.log, tune_<m>.csv/.log (<= 8 files);
# hang: hang_<m>.log; sanitize: sanitize_<m>.log + sanitize_<tool>_w<W>.log per tool and world.
# Multicast stays off in every command (never run multimem on the lent machines).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:${LD_LIBRARY_PATH:-}
W=${1:-4}
WHAT=${2:-all}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
BIN=.carry/symmcoll-cuda  # the CUDA build of the command (apps/CMakeLists.txt)
[ -x $BIN ] || BIN=.carry/symmcoll
M=h200x$W
{ nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm --format=csv; nvidia-smi topo -m; } > "$OUT/topo.txt" 2>&1
head -12 "$OUT/topo.txt"
rc=0
SECONDS=0
if [ "$WHAT" = suite ] || [ "$WHAT" = all ]; then
  timeout ${SUITE_TIMEOUT:-200} tests/gpu/run.sh .carry correctness 2>&1 | tee "$OUT/suite_$M.log" | grep -E "^(===|---|GPU suite|FAIL|probe)" || true
  grep -q "all passed" "$OUT/suite_$M.log" || rc=1
  echo "# suite done at ${SECONDS}s"
fi
if [ "$WHAT" = hang ] || [ "$WHAT" = reliability ]; then
  # Ranks that disagree must end in seconds with a named error (world 2 whatever W is).
  SYMM_TEST_LOGDIR=/tmp/hanglogs timeout ${HANG_TIMEOUT:-200} tests/gpu/run.sh .carry hang 2>&1 | tee "$OUT/hang_$M.log" \
    | grep -E "^(===|---|GPU suite|symmcoll)" || true
  grep -q "all passed" "$OUT/hang_$M.log" || rc=1
  echo "# hang done at ${SECONDS}s"
fi
if [ "$WHAT" = sanitize ] || [ "$WHAT" = reliability ]; then
  # compute-sanitizer memcheck, racecheck, synccheck over every algorithm; worlds 2..W.
  worlds=""
  for w in 2 4; do [ $w -le $W ] && worlds="$worlds $w"; done
  SAN_WORLDS="$worlds" SYMM_TEST_LOGDIR="$OUT" timeout ${SAN_TIMEOUT:-540} tests/gpu/run.sh .carry sanitize 2>&1 \
    | tee "$OUT/sanitize_$M.log" | grep -E "^(===|---|GPU suite|=+ (ERROR|RACECHECK))" || true
  grep -q "all passed" "$OUT/sanitize_$M.log" || rc=1
  echo "# sanitize done at ${SECONDS}s"
fi
if [ "$WHAT" = bench ] || [ "$WHAT" = all ]; then
  devs=$(seq -s, 0 $((W - 1)))
  timeout ${BENCH_TIMEOUT:-330} env CUDA_VISIBLE_DEVICES=$devs $BIN launch -n $W -- $BIN bench --backend cuda \
    --op all_reduce,reduce_scatter,all_gather --algo all --dtype bf16 --sizes 4K:256M --mode both \
    --check-up-to 16M --machine $M --csv "$OUT/bench_$M.csv" ${BENCH_EXTRA:-} > "$OUT/bench_$M.log" 2>&1 || rc=1
  grep -E "^# |FAIL|error" "$OUT/bench_$M.log" | head -20
  awk '$7==1 && $4<=1048576' "$OUT/bench_$M.log" | head -120
  echo "# bench done at ${SECONDS}s"
fi
if [ "$WHAT" = lltune ] || [ "$WHAT" = all ]; then
  # Block counts (and, at 4K, threads per block) of the flagged-packet programs, graph mode,
  # timing only; their rows are appended to the committed tune_<m>.csv (see the results README).
  devs=$(seq -s, 0 $((W - 1)))
  T="timeout 60 env CUDA_VISIBLE_DEVICES=$devs $BIN launch -n $W -- $BIN bench --backend cuda --mode graph --timing-only --no-nccl --machine $M"
  : > "$OUT/tune_$M.log"
  $T --op all_reduce --algo one_shot_ll --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32,64 --csv /tmp/l1.csv >> "$OUT/tune_$M.log" 2>&1
  $T --op reduce_scatter,all_gather --algo push_ll --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32,64 --csv /tmp/l2.csv >> "$OUT/tune_$M.log" 2>&1
  # Threads per block at the smallest sizes: the CSV schema has no threads column, so these
  # rows stay in the log (column thr).
  for th in 64 128; do
    $T --op all_reduce --algo one_shot_ll --sizes 4K,16K --blocks 1,2,4 --threads $th >> "$OUT/tune_$M.log" 2>&1
  done
  { cat /tmp/l1.csv; tail -n +2 /tmp/l2.csv; } > "$OUT/tune_$M.csv" 2>/dev/null
  grep -E "error|FAIL" "$OUT/tune_$M.log" | head
  awk '$4<=16384' "$OUT/tune_$M.log" | grep -E "ll|^op" | sort -k1,1 -k4,4n -k8,8n | awk '{k=$1" "$4; if (!(k in seen)) {seen[k]=1; print}}'
  echo "# lltune done at ${SECONDS}s"
fi
if [ "$WHAT" = tune ]; then
  # Block-count sweeps (graph mode, timing only) and the bare barrier's latency: the data the
  # per-size defaults are chosen from. One CSV, several invocations appended.
  devs=$(seq -s, 0 $((W - 1)))
  T="timeout 100 env CUDA_VISIBLE_DEVICES=$devs $BIN launch -n $W -- $BIN bench --backend cuda --mode graph --timing-only --machine $M"
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
