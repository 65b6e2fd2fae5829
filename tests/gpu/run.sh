#!/usr/bin/env bash
# GPU test suite (make test-gpu BUILD=<dir>): run on a GPU machine, never in CI.
#   tests/gpu/run.sh <build-dir> [all|correctness|hang|sanitize]...      (default: all)
# correctness  every algorithm x dtype x world {2,3,4,8} x sizes vs NCCL and the float64 reference,
#              with a 1000-replay CUDA graph of each (epochs only grow: no hang, no wrong answer),
#              the fused matmul + collective plans (ag_mm, mm_rs) replayed 100x, the bounded-wait
#              error-path probes, and the refusals.
# Worlds the machine has GPUs for run one process per GPU (launch, NCCL beside); larger worlds run
# as an in-process team (bench --world N: N ranks as threads on the visible GPUs, no NCCL, checked
# against float64 only), so a single GPU runs every world.
# hang         ranks that disagree must end within 2 x the wait bound + start-up, non-zero, with
#              a named error: mismatched programs (device and LL programs, graph and eager),
#              mismatched sizes, a rank that never calls (a collective; the mm_rs and ag_mm tile
#              programs), a rank killed mid-run (world 2).
# sanitize     every algorithm under compute-sanitizer memcheck (--report-api-errors no: NCCL's
#              initialisation probes report benign API errors), racecheck and synccheck, small and
#              large sizes, worlds 2 and 4 where the machine has them; zero errors required. One
#              log per tool and world: $SYMM_TEST_LOGDIR/sanitize_<tool>_w<W>.log.
# Environment: SYMM_TEST_SIZES, SYMM_TEST_REPLAYS, SYMM_TEST_WORLDS (default "2 3 4 8") (correctness);
# SYMM_TEST_TEAM=1 runs every world as an in-process team; SYMM_TEST_LOGDIR (default
# <build-dir>/gpu-logs); SAN_TOOLS (default "memcheck racecheck synccheck"), SAN_SIZES (default
# 16K,4M), SAN_WORLDS (default "2 4"), SAN_KERNELS (compute-sanitizer --kernel-name filter,
# default kns=program_kernel: this project's kernels; "" checks NCCL's too).
# Exits non-zero on any failure. Multicast stays off (never run multimem here).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
BUILD=${1:?usage: tests/gpu/run.sh <build-dir> [all|correctness|hang|sanitize]...}
shift
PARTS=${*:-all}
want() { [[ " $PARTS " == *" all "* || " $PARTS " == *" $1 "* ]]; }
BIN=""
for c in "$BUILD/apps/symmcoll-cuda" "$BUILD/symmcoll-cuda" "$BUILD/apps/symmcoll" "$BUILD/symmcoll"; do
  [ -x "$c" ] && { BIN=$c; break; }
done
[ -n "$BIN" ] || { echo "no symmcoll binary under $BUILD" >&2; exit 2; }
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
# CUDA_VISIBLE_DEVICES, where set, limits the GPUs the suite may use (team.sh: one GPU).
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  vis=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
  [ "$vis" -lt "$NGPU" ] && NGPU=$vis
fi
LOGDIR=${SYMM_TEST_LOGDIR:-$BUILD/gpu-logs}
mkdir -p "$LOGDIR"
fail=0
now() { date +%s.%N; }
calc() { awk "BEGIN { print $* }"; }  # float arithmetic and comparisons (1/0), no bc needed
# How a world runs: one process per GPU where the machine has the GPUs, else an in-process team.
team() { [ "${SYMM_TEST_TEAM:-0}" = 1 ] || [ "$NGPU" -lt "$1" ]; }
# The command line of a bench of world $1 (then the bench's own arguments).
ranks() {
  local w=$1
  if team "$w"; then echo "$BIN bench --backend cuda --world $w"
  else echo "env CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((w - 1))) $BIN launch -n $w -- $BIN bench --backend cuda"; fi
}
how() { if team "$1"; then echo "in-process team on $(team_gpus "$1") GPU(s)"; else echo "one process per GPU"; fi; }
team_gpus() { [ "$NGPU" -lt "$1" ] && echo "$NGPU" || echo "$1"; }
run() {  # name, timeout seconds, command...
  local name=$1 t=$2; shift 2
  echo "=== $name"
  if timeout "$t" "$@"; then echo "--- ok: $name"; else echo "--- FAIL ($?): $name"; fail=1; fi
}

# ---- correctness -------------------------------------------------------------------------
if want correctness; then
  SIZES=${SYMM_TEST_SIZES:-16K,64K,1M,4M}
  REPLAYS=${SYMM_TEST_REPLAYS:-1000}
  [ "$NGPU" -ge 1 ] || { echo "=== correctness: FAIL: no GPU"; fail=1; }
  for w in ${SYMM_TEST_WORLDS:-2 3 4 8}; do
    [ "$NGPU" -ge 1 ] || break
    # --m 1536 and 256 are multiples of every world's rows (M / world, rows of 32): 3 takes 1536 and 768.
    # World 3: sizes that are multiples of 16 x 3 bytes (reduce_scatter, all_gather), K of 3 x 512.
    ms=256,1536 k=1024 sizes=$SIZES
    [ $((256 % (32 * w))) -eq 0 ] || ms=768,1536
    [ $((1024 % w)) -eq 0 ] || k=1536
    [ $((16384 % (16 * w))) -eq 0 ] || sizes=${SYMM_TEST_SIZES_ODD:-12K,48K,768K,3M}
    run "correctness world $w ($(how $w))" 300 $(ranks $w) \
      --op all_reduce,reduce_scatter,all_gather --algo all --dtype bf16,fp16,fp32 --sizes "$sizes" \
      --no-timing --replays "$REPLAYS"
    run "fused correctness world $w ($(how $w))" 180 $(ranks $w) \
      --op ag_mm,mm_rs --algo all --dtype bf16,fp16 --n 512 --k "$k" --m "$ms" --chunk-rows 32 \
      --no-timing --replays 100
    run "bounded wait world $w ($(how $w))" 60 $(ranks $w) --probe-timeout
  done
  # Refusals that must fail cleanly (exit 2, one line), not crash or hang.
  if [ "$NGPU" -ge 1 ]; then
    echo "=== multicast refused ($(how 2))"
    out=$(timeout 60 $(ranks 2) --algo multimem --sizes 4K 2>&1)
    rc=$?
    echo "$out" | head -3
    if [ $rc -eq 2 ] && echo "$out" | grep -q "NCCL_NVLS_ENABLE=0 disables"; then echo "--- ok"; else echo "--- FAIL: rc=$rc"; fail=1; fi
    # A team's ranks share the GPU: blocks that do not all fit at once are refused, never left to spin.
    echo "=== in-process team: blocks that do not fit on one GPU refused"
    out=$(timeout 60 env CUDA_VISIBLE_DEVICES=0 "$BIN" bench --backend cuda --world 8 --op all_reduce --algo one_shot \
      --blocks 132 --sizes 4M --no-timing 2>&1)
    rc=$?
    echo "$out" | grep -m2 "do not fit"
    if [ $rc -eq 0 ] && echo "$out" | grep -q "8 ranks x 132 blocks of .* threads do not fit on one GPU at once"; then
      echo "--- ok"; else echo "--- FAIL: rc=$rc"; echo "$out" | tail -5; fail=1; fi
    echo "=== more ranks than GPUs refused"
    out=$(timeout 60 env CUDA_VISIBLE_DEVICES=0 "$BIN" launch -n 2 -- "$BIN" bench --backend cuda --sizes 4K 2>&1)
    rc=$?
    echo "$out" | grep -m2 error
    if [ $rc -ne 0 ] && echo "$out" | grep -q "needs 2 GPUs, one per rank"; then echo "--- ok"; else echo "--- FAIL: rc=$rc"; fail=1; fi
  fi
fi

# ---- hang: ranks that disagree end in seconds ----------------------------------------------
# World 2: one process per GPU on two GPUs, else an in-process team (a rank is a thread there).
if want hang && [ "$NGPU" -ge 1 ]; then
  BOUND=2  # seconds; the default bound, set explicitly so the limit below is exact
  export SYMM_WAIT_TIMEOUT_S=$BOUND
  DEVS=0,1; team 2 && DEVS=0
  B="$(ranks 2) --no-nccl --timing-only --iters 3 --warmup 1 --dtype bf16"
  echo "=== hang cases: world 2, $(how 2)"
  # Start-up: the same shape of run with nothing wrong (NCCL init or the team's set-up, heap, first launches).
  startup_of() {  # what, log name, command...: a healthy run of it (a failed one fails the suite); its seconds in STARTUP_S
    local what=$1 log=$LOGDIR/$2 t0 rc
    shift 2
    t0=$(now)
    env CUDA_VISIBLE_DEVICES=$DEVS "$@" > "$log" 2>&1
    rc=$?
    STARTUP_S=$(calc "$(now) - $t0")
    echo "=== hang: start-up of a healthy $what: ${STARTUP_S}s (rc=$rc)"
    [ $rc -eq 0 ] || { echo "--- FAIL: the healthy $what failed"; tail -5 "$log"; fail=1; }
  }
  startup_of run hang_startup.log $B --op all_reduce --algo one_shot --sizes 64K --mode graph
  STARTUP=$STARTUP_S
  LIMIT=$(calc "2 * $BOUND + $STARTUP + 1")
  # The error-path probes: each timeout reported with its exact message, and the world usable after.
  run "hang: bounded-wait probes world 2" 60 env CUDA_VISIBLE_DEVICES=$DEVS $(ranks 2) --probe-timeout
  hang_case() {  # name, message regex, VAR=value..., -- bench args...
    local name=$1 msg=$2; shift 2
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    echo "=== hang: $name (limit ${LIMIT}s)"
    local t0 out rc dt
    t0=$(now)
    out=$(timeout 120 env CUDA_VISIBLE_DEVICES=$DEVS "${envs[@]}" $B "$@" 2>&1)
    rc=$?
    dt=$(calc "$(now) - $t0")
    echo "$out" | grep -E "error|launch:|timed out|not done" | head -4
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(calc "$dt <= $LIMIT")" = 1 ] && echo "$out" | grep -qE "$msg"; then
      echo "--- ok: $name: rc=$rc in ${dt}s"
    else
      echo "--- FAIL: $name: rc=$rc in ${dt}s (limit ${LIMIT}s), want /$msg/"
      echo "$out" | tail -8
      fail=1
    fi
  }
  TO="timed out waiting .*\(in all_"
  hang_case "mismatched programs, device vs LL, graph" "$TO" SYMM_TEST_RANK_ALGO=1:one_shot_ll -- \
    --op all_reduce --algo one_shot --sizes 64K --mode graph
  hang_case "mismatched programs, device vs LL, eager" "$TO" SYMM_TEST_RANK_ALGO=1:one_shot_ll -- \
    --op all_reduce --algo one_shot --sizes 64K --mode eager
  hang_case "mismatched device programs, graph" "$TO" SYMM_TEST_RANK_ALGO=1:two_shot -- \
    --op all_reduce --algo one_shot --sizes 64K --mode graph
  hang_case "mismatched programs, LL vs device (all_gather), eager" "$TO" SYMM_TEST_RANK_ALGO=1:pull -- \
    --op all_gather --algo push_ll --sizes 64K --mode eager
  hang_case "mismatched sizes, LL program, graph" "$TO" SYMM_TEST_RANK_SIZE=1:256K -- \
    --op all_reduce --algo one_shot_ll --sizes 64K --mode graph
  hang_case "mismatched sizes, device program, eager" "$TO" SYMM_TEST_RANK_SIZE=1:4M -- \
    --op all_reduce --algo two_shot --sizes 16K --mode eager
  hang_case "a rank that never calls" "$TO" SYMM_TEST_RANK_SKIP=1 -- \
    --op all_reduce --algo one_shot --sizes 64K --mode graph
  # The fused device programs: a peer that never calls (SYMM_TEST_RANK_SKIP in the fused bench). A
  # fused plan's ranks first meet at the stream level (the plan's entry handshake, stream flag waits),
  # so the waiting rank is ended by its plan-wait bound (--plan-timeout, here the device wait bound),
  # naming its rank, stream and the slot it waits on; it then releases its stuck waits so that its
  # streams drain (the kernels behind them end on their device bound) before the NCCL abort, and
  # exits well before the idle rank's stream watchdog (30 s). (Before the release, the NCCL abort
  # waited for the stuck stream forever and the idle rank's watchdog ended both cases at 32 s:
  # experiments/results/h200x2/hang_fbf8246, hang_76347a1.)
  FB="$(ranks 2) --no-baselines --timing-only --iters 3 --warmup 1 --dtype bf16 --m 2048 --n 512 --k 1024"
  startup_of "fused run" hang_fused_startup.log $FB --op mm_rs --algo tiles --mode graph
  FSTARTUP=$STARTUP_S
  SAVED_LIMIT=$LIMIT B_SAVED=$B
  LIMIT=$(calc "3 * $BOUND + $FSTARTUP + 1") B="$FB --plan-timeout $BOUND"
  # (A team sharing a GPU: the waiting rank's lockstep names the rank that never called, and the call.)
  FTO="rank [0-9]+ ((block|stream) [0-9]+ timed out waiting|waited [0-9.]+ s at the team's lockstep) .*(ag_mm|mm_rs) "
  hang_case "a rank that never calls, mm_rs tile program, graph" "$FTO" SYMM_TEST_RANK_SKIP=1 -- \
    --op mm_rs --algo tiles --mode graph
  hang_case "a rank that never calls, ag_mm tile program, eager" "$FTO" SYMM_TEST_RANK_SKIP=1 -- \
    --op ag_mm --algo tiles --mode eager
  LIMIT=$SAVED_LIMIT B=$B_SAVED
  # A team's rank is a thread: "killed", it stops, and the team stops with it.
  KILLED="rank 1 was killed by signal 9"; team 2 && KILLED="rank 1 stops with its samples in flight"
  hang_case "a rank killed mid-run" "$KILLED" SYMM_TEST_RANK_KILL=1 -- \
    --op all_reduce --algo one_shot --sizes 64K --mode graph
  unset SYMM_WAIT_TIMEOUT_S
fi

# ---- sanitize: compute-sanitizer over every algorithm ----------------------------------------
if want sanitize; then
  SAN=${SAN:-/usr/local/cuda/bin/compute-sanitizer}
  [ -x "$SAN" ] || SAN=$(command -v compute-sanitizer || true)
  if [ -z "$SAN" ]; then
    echo "=== sanitize: FAIL: no compute-sanitizer"; fail=1
  else
    SAN_SIZES=${SAN_SIZES:-16K,4M}
    SAN_KERNELS=${SAN_KERNELS-kns=program_kernel}
    # Instrumented kernels run far slower than their peers expect: generous bounds here.
    export SYMM_WAIT_TIMEOUT_S=120 SYMM_STREAM_TIMEOUT_S=600
    for w in ${SAN_WORLDS:-2 4}; do
      [ "$NGPU" -ge 1 ] || { echo "=== skip sanitize: no GPU"; break; }
      devs=$(seq -s, 0 $((w - 1)))
      for tool in ${SAN_TOOLS:-memcheck racecheck synccheck}; do
        log="$LOGDIR/sanitize_${tool}_w$w.log"
        extra=()
        [ "$tool" = memcheck ] && extra+=(--report-api-errors no --leak-check no)
        [ -n "$SAN_KERNELS" ] && extra+=(--kernel-name "$SAN_KERNELS")
        tmp=$(mktemp -d)
        echo "=== sanitize $tool world $w ($(how $w); sizes $SAN_SIZES, every algorithm, bf16, checked once each)"
        t0=$(now)
        args=(bench --backend cuda --op all_reduce,reduce_scatter,all_gather --algo all --dtype bf16
          --sizes "$SAN_SIZES" --no-timing)
        if team "$w"; then  # one process: one tool instance over every rank's thread, one summary
          timeout 300 "$SAN" --tool "$tool" "${extra[@]}" --error-exitcode 3 --log-file "$tmp/rank_%p.log" \
            "$BIN" "${args[@]}" --world "$w" > "$tmp/bench.out" 2>&1
          need=1
        else
          timeout 300 env CUDA_VISIBLE_DEVICES=$devs "$BIN" launch -n $w -- "$SAN" --tool "$tool" "${extra[@]}" \
            --error-exitcode 3 --log-file "$tmp/rank_%p.log" "$BIN" "${args[@]}" > "$tmp/bench.out" 2>&1
          need=$w
        fi
        rc=$?
        dt=$(calc "$(now) - $t0")
        { echo "# compute-sanitizer --tool $tool ${extra[*]} world $w, sizes $SAN_SIZES: rc=$rc in ${dt}s"
          echo "# bench output"; cat "$tmp/bench.out"
          for f in "$tmp"/rank_*.log; do echo "# $(basename "$f")"; cat "$f"; done; } > "$log"
        rm -rf "$tmp"
        # Every rank's summary must say 0 (memcheck/synccheck: ERROR SUMMARY; racecheck: RACECHECK SUMMARY).
        summaries=$(grep -cE "(ERROR|RACECHECK) SUMMARY" "$log")
        nonzero=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$log" | grep -vcE "SUMMARY: 0 (errors|hazards)")
        grep -E "SUMMARY|check failure|error" "$log" | head -6
        if [ $rc -eq 0 ] && [ "$summaries" -ge "$need" ] && [ "$nonzero" -eq 0 ]; then
          echo "--- ok: sanitize $tool world $w in ${dt}s"
        else
          echo "--- FAIL: sanitize $tool world $w: rc=$rc, $summaries summaries, $nonzero non-zero (log: $log)"
          # A tool that runs one process's kernels one at a time leaves a team's ranks unable to meet.
          team "$w" && grep -q "timed out waiting" "$log" &&
            echo "    (waits timed out: $tool may serialize this process's kernels, which a team's ranks cannot survive)"
          fail=1
        fi
      done
    done
    unset SYMM_WAIT_TIMEOUT_S SYMM_STREAM_TIMEOUT_S
  fi
fi

[ $fail -eq 0 ] && echo "GPU suite ($PARTS): all passed" || echo "GPU suite ($PARTS): FAILURES"
exit $fail
