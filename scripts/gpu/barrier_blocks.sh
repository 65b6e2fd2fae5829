#!/usr/bin/env bash
# What more blocks crossing a barrier at once cost, and the floor under ag_mm beside its pushes,
# on a machine of W GPUs, from the repository root (binary carried in .carry/symmcoll-cuda):
#   scripts/gpu/barrier_blocks.sh <world> <out-dir> [steps]      (steps: default "1 2 3")
#   1  calibrate_<m>.csv / .log: every calibration row, with barrier_blocks(_relaxed): 1, 4 and 16
#      rounds of the collectives' barrier, acquire / release and relaxed, at 1..64 blocks (the rows
#      fence_gap_us is fitted from)
#   2  barrier_<m>.csv / .log: the bench's barrier ops at 1..64 blocks and the barrier programs
#      with data at 4K / 16K (all_reduce one_shot / one_shot_push, reduce_scatter ld_reduce,
#      all_gather ld / st) at 1..64 blocks, graph and eager, timing only: the same mechanism in the
#      collectives, measured in one run beside the calibration
#   3  agmm/: ag_mm 70B / 8B M 16384, the tile program as it is and with SYMM_DEBUG_AGMM_GEMM=
#      cublaslt (cuBLASLt over the gathered A beside the copy engines' pushes, no waits: the floor
#      under any ag_mm whose all-gather is those pushes), the matmul alone in every call
#      (scripts/gpu/agmm_cluster.sh, two repetitions interleaved)
# Multicast stays off.
DEFAULT_STEPS="1 2 3"
source scripts/gpu/nvlink_env.sh  # safety variables, GPUs, BIN, DIR, M, STEPS, the clock samples
has() { [[ " $STEPS " == *" $1 "* ]]; }
rc=0
if has 1; then
  timeout 300 $BIN launch -n $W -- $BIN calibrate --backend cuda --csv "$DIR/calibrate_$M.csv" \
    > "$DIR/calibrate_$M.log" 2>&1 || rc=1
  echo "# 1 calibrate: rc $rc at ${SECONDS}s"
  grep -E "^barrier_blocks" "$DIR/calibrate_$M.csv" | awk -F, '{print $1, $3, $5, $6}' | head -50
fi
if has 2; then
  B="timeout 120 $BIN launch -n $W -- $BIN bench --backend cuda --machine $M --mode both --timing-only --no-nccl"
  bench_calls "$B" "$DIR/barrier_$M.log" "$DIR/barrier_$M.csv" <<'EOF'
--op barrier --algo all --blocks 1,2,4,8,16,32,64
--op all_reduce --algo one_shot,one_shot_push --sizes 4K,16K --blocks 1,2,4,8,16,32,64
--op reduce_scatter --algo ld_reduce --sizes 4K,16K --blocks 1,2,4,8,16,32,64
--op all_gather --algo ld,st --sizes 4K,16K --blocks 1,2,4,8,16,32,64
EOF
  echo "# 2 barrier bench: rc $rc at ${SECONDS}s ($(($(wc -l < "$DIR/barrier_$M.csv") - 1)) rows)"
  awk -F, '$4=="barrier" {print $5, $8, $9, $10}' "$DIR/barrier_$M.csv"
fi
if has 3; then
  MODES="plan cublaslt" GEMM_ALONE=0 bash scripts/gpu/agmm_cluster.sh $W "$DIR/agmm" || rc=1
  echo "# 3 agmm floor: at ${SECONDS}s"
fi
exit $rc
