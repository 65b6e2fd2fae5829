#!/usr/bin/env bash
# What before the mm_rs tile program makes it fast (h100x4/mode_ac69c7f: 504-512 us alone after its
# GEMM baselines, 467-476 after host plans): 70B M 16384, graph, 3 passes, the program after
# (a) its baselines (NCCL + cuBLASLt, cuBLASLt, the tile GEMM), (b) no baselines, (c) the plan that
# stores over NVLink by SMs (gemm_st_chunk_reduce), (d) the copy-engine ring plan
# (gemm_ce_ring_reduce), in turn, twice; nvidia-smi's clock and power beside it.
#   scripts/gpu/mode_order.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
for rep in 1 2; do
  for cfg in a b c d; do
    case $cfg in
      a) args="--algo tiles" ;;
      b) args="--algo tiles --no-baselines" ;;
      c) args="--algo gemm_st_chunk_reduce,tiles --no-baselines" ;;
      d) args="--algo gemm_ce_ring_reduce,tiles --no-baselines" ;;
    esac
    f="$DIR/order_${rep}_${cfg}_$M.log"
    echo "# $cfg rep $rep starts at ${SECONDS}s $(date +%T.%N)" >> "$DIR/smi_marks_$M.txt"
    timeout 120 $L $BIN bench --backend cuda --op mm_rs $args --dtype bf16 --shape 70b --m 16384 --mode graph \
      --passes 3 --timing-only > "$f" 2>&1
    echo "# $cfg ($args) rep $rep: rc $? at ${SECONDS}s"
    grep -E "^mm_rs +(mm_rs\.|cublaslt)" "$f" | awk '{print "   ", $2, "median", $8, "p10", $9, "p90", $10}'
  done
done
