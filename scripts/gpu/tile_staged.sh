#!/usr/bin/env bash
# The coop tile GEMM's staged epilogue (stmatrix into shared memory, 16-byte row stores) against
# the registers epilogue (quad transposes by shuffles), cuBLASLt beside each run, one GPU:
#   1. checks: every width, clusters of 1 and 2, both epilogues, edge shapes, bf16 / fp16
#                                                            -> check.log (exit 1 on FAIL)
#   2. the fused shapes, graph and eager, registers / staged / registers / staged (interleaved)
#                                                            -> epi_<e>_<run>_<m>.csv / .log
#   3. ncu of both at 16384 x 3584 x 4096                   -> ncu_<e>.txt
#   scripts/gpu/tile_staged.sh <out-dir> <machine>   (binary: .carry/symmcoll-cuda)
source scripts/gpu/one_gpu_env.sh  # safety variables, one GPU, DIR and M from the arguments
BIN=${BIN:-.carry/symmcoll-cuda}
mkdir -p "$DIR"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$DIR/gpu.txt" 2>&1
rc=0
SECONDS=0
for e in staged registers; do
  for c in 2 1; do
    for tn in 256 224 192 128; do
      timeout 60 $BIN gemm-bench --no-timing --schedule coop --epilogue $e --cluster $c --tile-n $tn --dtype bf16,fp16 \
        --shapes "1000,1000,1000;300,520,136;129,8,8;4096,1792,4096;16384,3584,4096" >> "$DIR/check.log" 2>&1 ||
        { rc=1; echo "check $e cluster $c tile-n $tn FAILED"; }
    done
  done
done
grep -E "FAIL|rror" "$DIR/check.log" | head
echo "# checks rc $rc at ${SECONDS}s"
for run in 1 2; do
  for e in registers staged; do
    timeout 150 $BIN gemm-bench --shapes fused --dtype bf16 --schedule coop --epilogue $e --iters 60 --warmup 10 \
      --timing-only --machine "$M" --out "$DIR/epi_${e}_${run}_$M.csv" > "$DIR/epi_${e}_${run}_$M.log" 2>&1 || rc=1
    echo "# $e run $run at ${SECONDS}s"
    grep -v "^#" "$DIR/epi_${e}_${run}_$M.log" | awk '{print $2, $3, $4, $5, $(NF-5), $(NF-4), $(NF-3)}'
  done
done
for e in registers staged; do
  timeout 100 ncu --clock-control none -k regex:tile_gemm_kernel -c 1 --launch-skip 2 \
    --section SpeedOfLight --section WarpStateStats --section InstructionStats \
    --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg,smsp__inst_executed.sum \
    $BIN gemm-bench --shapes 16384,3584,4096 --impl tile --schedule coop --epilogue $e --mode eager --iters 2 --warmup 2 \
    --timing-only > "$DIR/ncu_$e.txt" 2>&1
  echo "== $e"; grep -E "Duration|hmma|cycles_elapsed|inst_executed|Executed Instructions " "$DIR/ncu_$e.txt"
done
echo "# done at ${SECONDS}s"
exit $rc
