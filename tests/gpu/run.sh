#!/usr/bin/env bash
# GPU test suite (make test-gpu BUILD=<dir>): run on a GPU machine, never in CI.
#   every algorithm x dtype x world {2,4,8} (as many as the machine has) x sizes vs NCCL and the float64 reference, with a
#   1000-replay CUDA graph of each (epochs only grow: no hang, no wrong answer), and the
#   bounded-wait error path (a wait nobody signals must be reported, not hang); the fused
#   matmul + collective plans (ag_mm, mm_rs) vs the float64 reference, replayed 100x in a graph.
# Exits non-zero on any failure. Multicast stays off (never run multimem here).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
BUILD=${1:?usage: tests/gpu/run.sh <build-dir>}
BIN=""
for c in "$BUILD/apps/symmcoll" "$BUILD/symmcoll" "$BUILD/backends/cuda/symmcoll_cuda" "$BUILD/symmcoll_cuda"; do
  [ -x "$c" ] && { BIN=$c; break; }
done
[ -n "$BIN" ] || { echo "no symmcoll binary under $BUILD" >&2; exit 2; }
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
SIZES=${SYMM_TEST_SIZES:-16K,64K,1M,4M}
REPLAYS=${SYMM_TEST_REPLAYS:-1000}
fail=0
run() {  # name, timeout seconds, command...
  local name=$1 t=$2; shift 2
  echo "=== $name"
  if timeout "$t" "$@"; then echo "--- ok: $name"; else echo "--- FAIL ($?): $name"; fail=1; fi
}
for w in 2 4 8; do
  [ "$NGPU" -ge "$w" ] || { echo "=== skip world $w: $NGPU GPU(s)"; continue; }
  devs=$(seq -s, 0 $((w - 1)))
  run "correctness world $w" 240 env CUDA_VISIBLE_DEVICES=$devs "$BIN" launch -n $w -- "$BIN" bench --backend cuda \
    --op all_reduce,reduce_scatter,all_gather --algo all --dtype bf16,fp16,fp32 --sizes "$SIZES" \
    --no-timing --replays "$REPLAYS"
  run "fused correctness world $w" 180 env CUDA_VISIBLE_DEVICES=$devs "$BIN" launch -n $w -- "$BIN" bench --backend cuda \
    --op ag_mm,mm_rs --algo all --dtype bf16,fp16 --n 512 --k 1024 --m 256,1536 --chunk-rows 32 \
    --no-timing --replays 100
  run "bounded wait world $w" 60 env CUDA_VISIBLE_DEVICES=$devs "$BIN" launch -n $w -- "$BIN" bench --backend cuda \
    --probe-timeout
done
# Refusals that must fail cleanly (exit 2, one line), not crash or hang.
if [ "$NGPU" -ge 2 ]; then
  echo "=== multicast refused"
  out=$(timeout 60 env CUDA_VISIBLE_DEVICES=0,1 "$BIN" launch -n 2 -- "$BIN" bench --backend cuda --algo multimem --sizes 4K 2>&1)
  rc=$?
  echo "$out" | head -3
  if [ $rc -eq 2 ] && echo "$out" | grep -q "multicast"; then echo "--- ok"; else echo "--- FAIL: rc=$rc"; fail=1; fi
  echo "=== more ranks than GPUs refused"
  out=$(timeout 60 env CUDA_VISIBLE_DEVICES=0 "$BIN" launch -n 2 -- "$BIN" bench --backend cuda --sizes 4K 2>&1)
  rc=$?
  echo "$out" | grep -m2 error
  if [ $rc -ne 0 ] && echo "$out" | grep -q "fewer GPUs than ranks"; then echo "--- ok"; else echo "--- FAIL: rc=$rc"; fail=1; fi
fi
[ $fail -eq 0 ] && echo "GPU suite: all passed" || echo "GPU suite: FAILURES"
exit $fail
