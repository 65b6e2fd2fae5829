#!/usr/bin/env bash
# N ranks in one process on ONE GPU (an in-process team, `--world N`; issue 19): every device
# program, host plan and fused plan on real hardware with a single GPU. One device run (the `run`
# tool, kind nvidia-h200 or nvidia-h100-x1), from the repository root, the binary carried in
# .carry/ (build/apps/symmcoll-cuda):
#   scripts/gpu/team.sh <out-dir> <machine-name>          (machine-name: h200x1 or h100x1)
# Output (8 files at most, each step under its own timeout; the whole under ~8 minutes):
#   bench_team_<m>.csv / .log   all_reduce, reduce_scatter, all_gather, every algorithm, worlds
#                               2, 4, 8, sizes 4K:256M:x4, graph and eager, checked (float64) up to 64M
#   fused_team_<m>.csv / .log   ag_mm, mm_rs, every fused plan + cublaslt, shapes 8b, 70b, M 4096
#                               and 16384, worlds 2 and 4, checked against peer copies + cuBLASLt
#   suite_team_<m>.log          tests/gpu/run.sh correctness + hang + sanitize, every world as a team
#   sanitize_team_<m>.tgz       compute-sanitizer's logs per tool and world (2, 4)
#   calibrate_team_<m>.csv/.log calibrate at world 2 and 4 (rows that need a peer get one)
#   (the GPU, nvidia-smi: at the head of bench_team_<m>.log)
# These numbers are one GPU's HBM and L2 shared by N ranks, not NVLink: rows are named by device
# and GPU count (h200x1), the world column counts ranks, and no NCCL baseline exists (NCCL refuses
# two ranks on one GPU). Multicast stays off and no multimem program runs.
# Knobs: T_BENCH, T_FUSED, T_SUITE, T_CALIB (timeouts, below), T_SIZES (the bench's sizes). The commands load every CUDA module
# up front in a team (CUDA_MODULE_LOADING=EAGER unless set: a module loaded lazily may synchronize
# the context while a peer spins); if start-up turns out slow (suite log: "start-up of a healthy
# run"), CUDA_MODULE_LOADING=LAZY keeps our kernels preloaded all the same (cuBLASLt's load lazily).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_VISIBLE_DEVICES=0  # one GPU, whatever the machine has
DIR=${1:?usage: scripts/gpu/team.sh <out-dir> <machine-name>}
M=${2:?usage: scripts/gpu/team.sh <out-dir> <machine-name (h200x1, h100x1)>}
mkdir -p "$DIR"
BIN=.carry/symmcoll-cuda  # the CUDA build of the command (apps/CMakeLists.txt)
[ -x $BIN ] || BIN=.carry/symmcoll
# Timeouts (seconds); every step ends by its own, so the script ends in at most their sum (545 s).
T_BENCH=${T_BENCH:-"45 50 55"}  # worlds 2 4 8
T_FUSED=${T_FUSED:-"35 40"}     # worlds 2 4
T_SUITE=${T_SUITE:-260}
T_CALIB=${T_CALIB:-"30 30"}     # worlds 2 4
{ nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm,power.limit --format=csv; nvidia-smi topo -m; } \
  2>&1 | sed 's/^/# /' > "$DIR/bench_team_$M.log"
head -2 "$DIR/bench_team_$M.log"
SECONDS=0
rc=0
nth() { echo "$2" | awk -v i="$1" '{ print $i }'; }
# Joins per-world CSVs into one: the first file's header (and comments), every file's rows.
join_csv() {
  local out=$1; shift
  local first=1
  : > "$out"
  for f in "$@"; do
    [ -s "$f" ] || continue
    if [ $first = 1 ]; then cat "$f" >> "$out"; first=0; else grep -vE "^(#|backend,|bench,)" "$f" >> "$out"; fi
    rm -f "$f"
  done
}

# ---- 1. the collective bench: worlds 2, 4, 8 ------------------------------------------------
i=0
for w in 2 4 8; do
  i=$((i + 1))
  echo "### world $w: bench --world $w (timeout $(nth $i "$T_BENCH") s)" >> "$DIR/bench_team_$M.log"
  timeout "$(nth $i "$T_BENCH")" $BIN bench --backend cuda --world $w --op all_reduce,reduce_scatter,all_gather \
    --algo all --dtype bf16 --sizes "${T_SIZES:-4K:256M:x4}" --mode both --check-up-to 64M --iters 5 --warmup 1 \
    --machine "$M" --csv "$DIR/bench_team_${M}_w$w.csv" >> "$DIR/bench_team_$M.log" 2>&1
  r=$?
  echo "### world $w: rc $r at ${SECONDS}s" >> "$DIR/bench_team_$M.log"
  echo "# bench world $w: rc $r at ${SECONDS}s"
  [ $r -eq 0 ] || rc=1
done
join_csv "$DIR/bench_team_$M.csv" "$DIR"/bench_team_${M}_w2.csv "$DIR"/bench_team_${M}_w4.csv "$DIR"/bench_team_${M}_w8.csv
grep -E "FAIL|error|check failure" "$DIR/bench_team_$M.log" | head -12
echo "# bench: $(grep -vc '^backend' "$DIR/bench_team_$M.csv" 2>/dev/null) rows at ${SECONDS}s"

# ---- 2. the fused bench: worlds 2, 4 --------------------------------------------------------
: > "$DIR/fused_team_$M.log"
i=0
for w in 2 4; do
  i=$((i + 1))
  echo "### world $w: fused bench --world $w (timeout $(nth $i "$T_FUSED") s)" >> "$DIR/fused_team_$M.log"
  timeout "$(nth $i "$T_FUSED")" $BIN bench --backend cuda --world $w --op ag_mm,mm_rs --algo all --dtype bf16 \
    --shape 8b,70b --m 4096,16384 --mode both --iters 5 --warmup 1 \
    --machine "$M" --csv "$DIR/fused_team_${M}_w$w.csv" >> "$DIR/fused_team_$M.log" 2>&1
  r=$?
  echo "### world $w: rc $r at ${SECONDS}s" >> "$DIR/fused_team_$M.log"
  echo "# fused world $w: rc $r at ${SECONDS}s"
  [ $r -eq 0 ] || rc=1
done
join_csv "$DIR/fused_team_$M.csv" "$DIR"/fused_team_${M}_w2.csv "$DIR"/fused_team_${M}_w4.csv
grep -E "FAIL|error|check failure" "$DIR/fused_team_$M.log" | head -12

# ---- 3. the GPU suite in team mode: correctness (worlds 2, 3, 4, 8), hang, sanitize (2, 4) ----
# The suite's build dir is where it finds the binary: a directory holding apps/symmcoll-cuda.
SUITE_BUILD=$(mktemp -d)
mkdir -p "$SUITE_BUILD/apps" && ln -s "$PWD/$BIN" "$SUITE_BUILD/apps/symmcoll-cuda"
timeout "$T_SUITE" env SYMM_TEST_TEAM=1 SYMM_TEST_SIZES=16K,1M SYMM_TEST_SIZES_ODD=48K,768K SYMM_TEST_REPLAYS=100 \
  SYMM_TEST_LOGDIR="$SUITE_BUILD/logs" SAN_WORLDS="2 4" bash tests/gpu/run.sh "$SUITE_BUILD" correctness hang sanitize \
  > "$DIR/suite_team_$M.log" 2>&1
r=$?
(cd "$SUITE_BUILD/logs" 2>/dev/null && tar czf "$DIR/sanitize_team_$M.tgz" sanitize_*.log 2>/dev/null)
rm -rf "$SUITE_BUILD"
echo "# suite: rc $r at ${SECONDS}s"
grep -E "^--- FAIL|GPU suite" "$DIR/suite_team_$M.log" | head -12
[ $r -eq 0 ] || rc=1

# ---- 4. calibrate at world 2 and 4 ------------------------------------------------------------
: > "$DIR/calibrate_team_$M.log"
i=0
for w in 2 4; do
  i=$((i + 1))
  echo "### world $w: calibrate --world $w (timeout $(nth $i "$T_CALIB") s)" >> "$DIR/calibrate_team_$M.log"
  timeout "$(nth $i "$T_CALIB")" $BIN calibrate --backend cuda --world $w --csv "$DIR/calibrate_team_${M}_w$w.csv" \
    >> "$DIR/calibrate_team_$M.log" 2>&1
  r=$?
  echo "### world $w: rc $r at ${SECONDS}s" >> "$DIR/calibrate_team_$M.log"
  echo "# calibrate world $w: rc $r at ${SECONDS}s"
  [ $r -eq 0 ] || rc=1
done
join_csv "$DIR/calibrate_team_$M.csv" "$DIR"/calibrate_team_${M}_w2.csv "$DIR"/calibrate_team_${M}_w4.csv
grep -E "error|FAIL|NOT NAMED" "$DIR/calibrate_team_$M.log" | head -6
echo "# team.sh done at ${SECONDS}s (rc $rc)"
exit $rc
