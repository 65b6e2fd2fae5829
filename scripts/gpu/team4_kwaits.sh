#!/usr/bin/env bash
# The one-GPU team's host-plan flag waits as kernels (plan_exec.h) against stream memory waits
# (SYMM_PLAN_KERNEL_WAITS=0), on the stop of h100x1/team/run11: mm_rs gemm_st_chunk_reduce alone,
# a team of 4, M 4096,16384, repeated; then the whole mm_rs sequence of run10 (graph and eager,
# CSV), the collective host plans at 4 and 8 ranks, and a host plan's hang (a rank that never
# calls) that must end in seconds naming rank, block and slot.
#   scripts/gpu/team4_kwaits.sh <out-dir> <machine-name> [repeats]
source scripts/gpu/one_gpu_env.sh
N=${3:-8}
mkdir -p "$DIR"
export SYMM_STREAM_TIMEOUT_S=12 SYMM_DEBUG_ALL_STUCK=1
BIN=.carry/symmcoll-cuda
F="$BIN bench --backend cuda --world 4 --op mm_rs --dtype bf16 --shape 8b --mode both --warmup 1"
T="$DIR/team4_kwaits.log"; : > "$T"
for i in $(seq "$N"); do
  run "kernel waits, st_chunk_reduce, try $i" $F --algo gemm_st_chunk_reduce --m 4096,16384 --iters 20 --machine $M
  run "stream waits (SYMM_PLAN_KERNEL_WAITS=0), st_chunk_reduce, try $i" SYMM_PLAN_KERNEL_WAITS=0 \
    $F --algo gemm_st_chunk_reduce --m 4096,16384 --iters 20 --machine $M
done
for i in 1 2; do
  run "kernel waits, every mm_rs algorithm, M 4096,16384, try $i" $F --algo all --m 4096,16384 --iters 10 --machine $M \
    --csv "$DIR/team4_mmrs_all_${M}_$i.csv"
done
run "kernel waits, every ag_mm algorithm, M 4096,16384" $BIN bench --backend cuda --world 4 --op ag_mm --dtype bf16 \
  --shape 8b --mode both --warmup 1 --algo all --m 4096,16384 --iters 10 --machine $M --csv "$DIR/team4_agmm_all_$M.csv"
for w in 4 8; do
  for spec in reduce_scatter:ce,ce_overlap all_gather:ce,ce_sm; do
    run "kernel waits, ${spec%%:*} host plans, world $w" $BIN bench --backend cuda --world $w --op ${spec%%:*} \
      --algo ${spec#*:} --sizes 64K,4M,64M --dtype bf16 --mode both --iters 10 --machine $M \
      --csv "$DIR/team${w}_${spec%%:*}_plans_$M.csv"
  done
done
# A host plan's hang: rank 1 never calls; the device wait's bound is 2 s, so the error must name
# rank, block and slot well inside the 12 s stream bound (eager: a wait kernel; graph: the team
# graph's flags do not pair up).
for mode in eager graph; do
  run "hang: rank 1 never calls, reduce_scatter ce_overlap, world 2, $mode" SYMM_WAIT_TIMEOUT_S=2 SYMM_TEST_RANK_SKIP=1 \
    $BIN bench --backend cuda --world 2 --no-nccl --timing-only --iters 3 --warmup 1 --dtype bf16 --op reduce_scatter \
    --algo ce_overlap --sizes 16K --mode $mode
done
grep -E "^###|FAIL|check failure|error|stuck" "$T"
