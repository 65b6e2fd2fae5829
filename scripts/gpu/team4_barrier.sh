#!/usr/bin/env bash
# A one-GPU team of 4 whose eager samples start together (a meeting before each, bench_common.h),
# with the host plans' flag waits as kernels and as stream memory operations
# (SYMM_PLAN_KERNEL_WAITS=1 / 0, plan_exec.h): mm_rs gemm_st_chunk_reduce alone (the stop of run11..run13)
# and every mm_rs and ag_mm algorithm, M 4096,16384, graph and eager, each repeated.
#   scripts/gpu/team4_barrier.sh <out-dir> <machine-name> [repeats]
source scripts/gpu/one_gpu_env.sh
N=${3:-6}
mkdir -p "$DIR"
export SYMM_STREAM_TIMEOUT_S=12 SYMM_DEBUG_ALL_STUCK=1
BIN=.carry/symmcoll-cuda
T="$DIR/team4_barrier.log"; : > "$T"
for kw in 1 0; do
  F="$BIN bench --backend cuda --world 4 --dtype bf16 --shape 8b --mode both --warmup 1 --m 4096,16384 --machine $M"
  for i in $(seq "$N"); do
    run "SYMM_PLAN_KERNEL_WAITS=$kw, mm_rs st_chunk_reduce, try $i" SYMM_PLAN_KERNEL_WAITS=$kw $F --op mm_rs \
      --algo gemm_st_chunk_reduce --iters 20
  done
  for i in 1 2; do
    for op in mm_rs ag_mm; do
      run "SYMM_PLAN_KERNEL_WAITS=$kw, every $op algorithm, try $i" SYMM_PLAN_KERNEL_WAITS=$kw $F --op $op --algo all \
        --iters 10 --csv "$DIR/team4_${op}_all_kw${kw}_$i.csv"
    done
  done
done
grep -E "^###|FAIL|check failure|error|stuck" "$T"
