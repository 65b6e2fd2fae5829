#!/usr/bin/env bash
# The mm_rs tile program's two modes at 70B M 16384 (experiments/results/h100x2/mode_d9e51fd): the
# program timed alone, after the host plans, and within the whole fused bench, graph, 3 passes each,
# in turn twice; nvidia-smi's clock and power through it (nvlink_env.sh).
#   scripts/gpu/mode_diag.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
for rep in 1 2; do
  for cfg in tiles "gemm_ce_ring_reduce,gemm_ce_acc,tiles" all; do
    f="$DIR/mode_${rep}_${cfg//,/+}_$M.log"
    echo "# $cfg rep $rep starts at ${SECONDS}s $(date +%T.%N)" >> "$DIR/smi_marks_$M.txt"
    timeout 120 $L $BIN bench --backend cuda --op mm_rs --algo "$cfg" --dtype bf16 --shape 70b --m 16384 \
      --mode graph --passes 3 --timing-only > "$f" 2>&1
    echo "# $cfg rep $rep: rc $? at ${SECONDS}s"
    grep -E "^mm_rs +(mm_rs.tile_st_ld_reduce|cublaslt) " "$f" | awk '{print "   ", $2, "median", $8, "p10", $9, "p90", $10}'
  done
done
