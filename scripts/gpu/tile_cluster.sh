#!/usr/bin/env bash
# The coop tile GEMM in clusters of two (tile pairs sharing B by TMA multicast) against one block
# per tile, cuBLASLt beside each run, on one GPU (kind nvidia-h100-x1 or nvidia-h200):
#   1. checks: every tile width, clusters of 1 and 2, edge shapes (an odd number of tile rows:
#      M 300), a capped odd grid (--sms 7), bf16 and fp16          -> check.log (exit 1 on FAIL)
#   2. the fused shapes, graph and eager, --cluster 1 / 2 / 1 / 2 (interleaved runs)
#                                                                     -> tile_cluster<c>_<run>_<m>.csv
#   3. ncu of both at 16384 x 3584 x 4096                           -> ncu_cluster<c>.txt
#   scripts/gpu/tile_cluster.sh <out-dir> <machine>   (binary: .carry/symmcoll-cuda)
source scripts/gpu/one_gpu_env.sh  # safety variables, one GPU, DIR and M from the arguments
BIN=${BIN:-.carry/symmcoll-cuda}
mkdir -p "$DIR"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$DIR/gpu.txt" 2>&1
rc=0
SECONDS=0
for c in 2 1; do
  for tn in 256 224 192 128; do
    timeout 60 $BIN gemm-bench --no-timing --schedule coop --cluster $c --tile-n $tn --dtype bf16,fp16 \
      --shapes "1000,1000,1000;300,520,136;129,8,8;4096,1792,4096;16384,3584,4096" >> "$DIR/check.log" 2>&1 ||
      { rc=1; echo "check cluster $c tile-n $tn FAILED"; }
  done
done
timeout 60 $BIN gemm-bench --no-timing --schedule coop --cluster 2 --sms 7 --shapes "1000,1000,1000;4096,1792,4096" \
  >> "$DIR/check.log" 2>&1 || { rc=1; echo "check sms 7 FAILED"; }
grep -E "FAIL|rror" "$DIR/check.log" | head
echo "# checks rc $rc at ${SECONDS}s"
for run in 1 2; do
  for c in 1 2; do
    timeout 150 $BIN gemm-bench --shapes fused --dtype bf16 --schedule coop --cluster $c --iters 60 --warmup 10 \
      --timing-only --machine "$M" --out "$DIR/tile_cluster${c}_${run}_$M.csv" > "$DIR/tile_cluster${c}_${run}_$M.log" 2>&1 || rc=1
    echo "# cluster $c run $run at ${SECONDS}s"
    grep -v "^#" "$DIR/tile_cluster${c}_${run}_$M.log" | awk '{print $2, $3, $4, $5, $(NF-5), $(NF-4), $(NF-3)}'
  done
done
for c in 1 2; do
  timeout 100 ncu --clock-control none -k regex:tile_gemm_kernel -c 1 --launch-skip 2 \
    --section SpeedOfLight --section LaunchStats \
    --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum \
    $BIN gemm-bench --shapes 16384,3584,4096 --impl tile --schedule coop --cluster $c --mode eager --iters 2 --warmup 2 \
    --timing-only > "$DIR/ncu_cluster$c.txt" 2>&1
  grep -E "Duration|hmma|lts__t_bytes|Cluster Size|L2 Cache Throughput" "$DIR/ncu_cluster$c.txt"
done
echo "# done at ${SECONDS}s"
exit $rc
