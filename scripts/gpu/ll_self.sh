#!/usr/bin/env bash
# The flagged-packet (LL) reductions before and after a change, in one device call, from the
# repository root with both binaries carried: .carry/old/symmcoll-cuda (main before the change)
# and .carry/symmcoll-cuda (the change).
#   1. checks of the new binary: all_reduce / reduce_scatter st_ll_reduce and all_gather st_ll,
#      bf16 / fp16 / fp32, worlds 2, 3, 4, 8 as in-process teams on GPU 0 (odd sizes for world 3),
#      1000 graph replays each, and the bounded packet wait (--probe-timeout)   -> check_<m1>.log
#   2. compute-sanitizer memcheck / racecheck / synccheck of the three programs, world 2 and 4 as
#      teams on GPU 0, one checked call each                                    -> sanitize_<tool>_<m1>.log
#   3. timing on one GPU: the three programs, 4K..1M x4, graph and eager, worlds 2, 4, 8 as teams,
#      old and new binary interleaved twice (old, new, old, new)               -> one_<bin><rep>_w<W>_<m1>.csv
#   4. timing over NVLink when the machine has W >= 2 GPUs: the same, one process per GPU, NCCL's
#      rows beside; NVL_WORLDS="2 4" runs worlds 2 and 4 on GPUs 0..W-1      -> nvl_<bin><rep>_<mW>.csv
#   scripts/gpu/ll_self.sh <out-dir> [steps, default 1234] [worlds of step 3, default "2 4 8"]
# Many files: tar the out-dir before it is fetched.
# <m1> = h100x1 / h200x1 (one GPU's numbers, never mixed with NVLink's); <mW> = h100xW / h200xW.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-EAGER}
DIR=${1:?usage: scripts/gpu/ll_self.sh <out-dir> [steps] [worlds]}
STEPS=${2:-1234}
WORLDS=${3:-2 4 8}
step() { [[ $STEPS == *$1* ]]; }
mkdir -p "$DIR"
NEW=.carry/symmcoll-cuda
OLD=.carry/old/symmcoll-cuda
NGPU=$(nvidia-smi -L | wc -l)
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H100 && echo h100 || echo h200)
M1=${GPU}x1
MW=${GPU}x$NGPU
{ nvidia-smi --query-gpu=index,name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
  $NEW --version; $OLD --version; } > "$DIR/gpu.txt" 2>&1
SECONDS=0
OPS="all_reduce:st_ll_reduce reduce_scatter:st_ll_reduce all_gather:st_ll"  # op:algorithm
# Runs "$@" (a bench command line without --op / --algo) once per op of $OPS, appending $EXTRA to
# its algorithm, stdout and stderr to $LOG, the rows to one CSV ($CSV; empty: none).
per_op() {
  local first=1 o
  for o in $OPS; do
    local csv=()
    [ -n "$CSV" ] && csv=(--csv "$CSV.$first.tmp")
    "$@" --op ${o%%:*} --algo ${o##*:}$EXTRA ${csv[@]+"${csv[@]}"} >> "$LOG" 2>&1
    echo "### ${o%%:*} rc $?" >> "$LOG"
    first=$((first + 1))
  done
  if [ -n "$CSV" ]; then
    : > "$CSV"
    for f in "$CSV".1.tmp "$CSV".2.tmp "$CSV".3.tmp; do
      [ -s "$f" ] || continue
      if [ -s "$CSV" ]; then grep -vE "^(#|backend,)" "$f" >> "$CSV"; else cat "$f" >> "$CSV"; fi
      rm -f "$f"
    done
  fi
}
EXTRA=""

# ---- 1. checks ------------------------------------------------------------------------------
step 1 && : > "$DIR/check_$M1.log"
step 1 && for w in 2 3 4 8; do
  sizes=4K,16K,64K,256K,1M
  [ $w = 3 ] && sizes=12K,48K,192K,768K
  echo "### world $w: checked, 1000 graph replays" >> "$DIR/check_$M1.log"
  LOG="$DIR/check_$M1.log" CSV="" per_op timeout 60 env CUDA_VISIBLE_DEVICES=0 $NEW bench --backend cuda --world $w \
    --dtype bf16,fp16,fp32 --sizes $sizes --no-timing --replays 1000
  echo "### world $w: bounded wait" >> "$DIR/check_$M1.log"
  timeout 60 env CUDA_VISIBLE_DEVICES=0 $NEW bench --backend cuda --world $w --probe-timeout >> "$DIR/check_$M1.log" 2>&1
  echo "### rc $?" >> "$DIR/check_$M1.log"
done
step 1 && echo "# 1 checks at ${SECONDS}s: $(grep -cE '^### .*rc 0' "$DIR/check_$M1.log") commands rc 0, \
  $(grep -cE '^### .*rc [1-9]' "$DIR/check_$M1.log") not"

# ---- 2. sanitizers --------------------------------------------------------------------------
SAN=/usr/local/cuda/bin/compute-sanitizer
step 2 && for tool in memcheck racecheck synccheck; do
  extra=(); [ $tool = memcheck ] && extra=(--report-api-errors no --leak-check no)
  : > "$DIR/sanitize_${tool}_$M1.log"
  for w in 2 4; do
    LOG="$DIR/sanitize_${tool}_$M1.log" CSV="" per_op timeout 60 env CUDA_VISIBLE_DEVICES=0 $SAN --tool $tool \
      ${extra[@]+"${extra[@]}"} --error-exitcode 3 --kernel-name kns=program_kernel $NEW bench --backend cuda \
      --world $w --dtype bf16 --sizes 16K,1M --no-timing
  done
  echo "# 2 $tool at ${SECONDS}s: $(grep -E '^### ' "$DIR/sanitize_${tool}_$M1.log" | tr '\n' ' ')"
  grep -E "(ERROR|RACECHECK) SUMMARY" "$DIR/sanitize_${tool}_$M1.log" | sort | uniq -c
done

# ---- 3. one GPU, teams ----------------------------------------------------------------------
step 3 && for rep in 1 2; do
  for b in old new; do
    bin=$OLD; [ $b = new ] && bin=$NEW
    for w in $WORLDS; do
      LOG="$DIR/one_${b}${rep}_w${w}_$M1.log" CSV="$DIR/one_${b}${rep}_w${w}_$M1.csv" per_op timeout 40 \
        env CUDA_VISIBLE_DEVICES=0 $bin bench --backend cuda --world $w --dtype bf16 --sizes 4K:1M:x4 --mode both \
        --machine $M1
      echo "# 3 one GPU $b$rep world $w at ${SECONDS}s: $(grep -E '^### ' "$DIR/one_${b}${rep}_w${w}_$M1.log" | tr '\n' ' ')"
    done
  done
done

# ---- 4. NVLink ------------------------------------------------------------------------------
# NVL_WORLDS: the NVLink worlds (default: every GPU), each on GPUs 0..W-1, named h100xW / h200xW.
if step 4 && [ "$NGPU" -ge 2 ]; then
  for w in ${NVL_WORLDS:-$NGPU}; do
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((w - 1)))
    MW=${GPU}x$w
    for rep in 1 2; do
      for b in old new; do
        bin=$OLD; [ $b = new ] && bin=$NEW
        LOG="$DIR/nvl_${b}${rep}_$MW.log" CSV="$DIR/nvl_${b}${rep}_$MW.csv" EXTRA=,nccl,nccl_symm per_op timeout 60 \
          $bin launch -n $w -- $bin bench --backend cuda --dtype bf16 --sizes 4K:1M:x4 --mode both --machine $MW
        echo "# 4 NVLink $MW $b$rep at ${SECONDS}s: $(grep -E '^### ' "$DIR/nvl_${b}${rep}_$MW.log" | tr '\n' ' ')"
      done
    done
  done
fi
