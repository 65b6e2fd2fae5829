#!/usr/bin/env bash
# Where the one-GPU team of 4 stops in a sequence of mm_rs host plans (h100x1/team/run10): each
# rank's stuck wait (SYMM_DEBUG_ALL_STUCK), the bench's phase in every timeout (the rank's
# context: case, checked call / replays / timing), a 12 s bound; the run10 sequence, then the same
# without batched stream memory operations, then each suspect plan alone at both M, then M reversed.
#   scripts/gpu/team4_diag.sh <out-dir> <machine-name>
source scripts/gpu/one_gpu_env.sh
mkdir -p "$DIR"
export SYMM_STREAM_TIMEOUT_S=12 SYMM_DEBUG_ALL_STUCK=1 CUDA_MODULE_LOADING=EAGER
B=".carry/symmcoll-cuda bench --backend cuda --world 4 --op mm_rs --dtype bf16 --shape 8b --mode both --iters 5 --warmup 1"
T="$DIR/team4_diag.log"; : > "$T"
SEQ=gemm_ce_ring_reduce,gemm_ce_acc,gemm_st_chunk_reduce,gemm_ce_tile_acc
run() {  # <label> <env...> -- <bench args>
  local label=$1; shift
  echo "### $label" >> "$T"
  local t0=$SECONDS
  timeout 170 env "$@" >> "$T" 2>&1
  echo "### rc $? in $((SECONDS - t0)) s" >> "$T"
}
run "run10 sequence: $SEQ, M 4096,16384" $B --algo $SEQ --m 4096,16384 --machine $M
run "the same, SYMM_PLAN_BATCH_MEMOPS=0" SYMM_PLAN_BATCH_MEMOPS=0 $B --algo $SEQ --m 4096,16384 --machine $M
run "gemm_ce_acc alone, M 4096,16384" $B --algo gemm_ce_acc --m 4096,16384 --machine $M
run "gemm_st_chunk_reduce alone, M 4096,16384" $B --algo gemm_st_chunk_reduce --m 4096,16384 --machine $M
run "ring + acc, M 4096,16384" $B --algo gemm_ce_ring_reduce,gemm_ce_acc --m 4096,16384 --machine $M
run "the sequence, M 16384,4096" $B --algo $SEQ --m 16384,4096 --machine $M
grep -E "^###|FAIL|check failure|error|stuck" "$T"
