#!/usr/bin/env bash
# Why the bench's plain `nccl` row is slower than nccl-tests (issue: the newcomer's second hour).
# One device run on 2 GPUs, from the repository root; carried in .carry/: symmcoll-cuda and
# nccl-tests/{all_gather,all_reduce}_perf (nccl-tests built against NCCL 2.28.9, MPI=0, sm_90).
#   scripts/gpu/nccl_gap.sh <out-dir> <machine-name>
# Writes <out-dir>/nccl_gap_<m>.log (every command, its output, NCCL's transport lines) and
# nccl_gap_<m>.csv (the bench's rows). Same GPUs, minutes apart; multicast stays off.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CUDA_VISIBLE_DEVICES=0,1
DIR=${1:?usage: nccl_gap.sh <out-dir> <machine>}; M=${2:?machine}
L=$DIR/nccl_gap_$M.log; : > "$L"
NT=.carry/nccl-tests
B=".carry/symmcoll-cuda"
SIZES="-b 16M -e 256M -f 4"
run() { echo "### $*" >> "$L"; timeout 60 "$@" >> "$L" 2>&1; echo "### rc $?" >> "$L"; }
for op in all_gather all_reduce; do
  # nccl-tests without MPI: one process, 2 GPUs (-g 2), and one process, 2 threads (-t 2).
  run $NT/${op}_perf -g 2 $SIZES -d bfloat16 -w 5 -n 20 -G 20
  run $NT/${op}_perf -t 2 -g 1 $SIZES -d bfloat16 -w 5 -n 20 -G 20
  run $NT/${op}_perf -g 2 $SIZES -d bfloat16 -w 5 -n 20 -G 0
done
# The bench: one process per GPU (launch), plain NCCL only, its default calls and nccl-tests' 20.
run $B launch -n 2 -- $B bench --backend cuda --op all_gather,all_reduce --algo nccl --sizes 16M,64M,256M \
  --mode both --timing-only --machine $M --csv "$DIR/nccl_gap_$M.csv"
run $B launch -n 2 -- $B bench --backend cuda --op all_gather,all_reduce --algo nccl --sizes 16M,64M,256M \
  --mode graph --timing-only --calls 20 --machine $M
# NCCL's choices in each: transports and algorithms.
echo "### NCCL_DEBUG=INFO: nccl-tests -g 2 all_gather 256M" >> "$L"
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P,TUNING timeout 60 $NT/all_gather_perf -g 2 -b 256M -e 256M -d bfloat16 -w 1 -n 2 2>&1 \
  | grep -E "via |Algo|NCCL_|comm 0x|Channel 00" | sort | uniq -c | head -40 >> "$L"
echo "### NCCL_DEBUG=INFO: bench (launch -n 2) all_gather 256M" >> "$L"
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P,TUNING timeout 60 $B launch -n 2 -- $B bench --backend cuda --op all_gather \
  --algo nccl --sizes 256M --mode graph --timing-only --iters 2 --warmup 1 --machine $M 2>&1 \
  | grep -E "via |Algo|NCCL_|comm 0x|Channel 00" | sort | uniq -c | head -40 >> "$L"
grep -E "^###|^ +(16777216|67108864|268435456) " "$L" | head -60
grep -E "^(all_gather|all_reduce) +nccl" "$L" | head -20
