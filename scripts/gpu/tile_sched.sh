#!/usr/bin/env bash
# Our tile GEMM's schedules on one GPU, each forced, beside cuBLASLt in the same call (the data that
# backends/cuda/tile_sched.h's TileModel for this GPU is fitted from):
#   1. checks: coop (clusters of 1 and 2, the staged epilogue) and ping-pong (128 x 128, 64 x 256)
#      on edge shapes and two fused shapes, bf16 / fp16          -> check.log (rc 1 on FAIL)
#   2. the fused shapes at worlds 1, 2 and 4 (M 4096 / 8192 / 16384 x {8B: N 1792, K 4096 / 2048 /
#      1024; 70B: N 3584, K 8192 / 4096 / 2048}), graph and eager, 60 samples after 10, each of
#      auto, coop (clusters of 1), coop (clusters of 2), ping-pong (tile chosen), two interleaved runs
#                                                               -> sched_<cfg>_<run>_<m>.csv / .log
#   scripts/gpu/tile_sched.sh <out-dir> <machine>   (binary: .carry/symmcoll-cuda)
#   CONFIGS="auto" RUNS="1 2 3" ...: only those configurations, those runs
#   ITERS=1000 WARMUP=200 MODE=graph ...: longer runs (the GPU then at its power limit through the
#   sweep: what the time model should be fitted on, experiments/results/h200x1/gemm_configs_bbad638)
source scripts/gpu/one_gpu_env.sh  # safety variables, one GPU, DIR and M from the arguments
BIN=${BIN:-.carry/symmcoll-cuda}
mkdir -p "$DIR"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > "$DIR/gpu.txt" 2>&1
rc=0
SECONDS=0
for opts in "--schedule coop --cluster 2" "--schedule coop --cluster 1" "--schedule pingpong --tile-m 128 --tile-n 128" \
  "--schedule pingpong --tile-m 64 --tile-n 256"; do
  timeout 60 $BIN gemm-bench --no-timing $opts --dtype bf16,fp16 \
    --shapes "1000,1000,1000;300,520,136;129,8,8;16384,1792,1024;16384,3584,2048" >> "$DIR/check.log" 2>&1 ||
    { rc=1; echo "check $opts FAILED"; }
done
grep -E "FAIL|rror" "$DIR/check.log" | head
echo "# checks rc $rc at ${SECONDS}s"
S=""
for m in 4096 8192 16384; do
  for nk in 1792,4096 1792,2048 1792,1024 3584,8192 3584,4096 3584,2048; do S="$S${S:+;}$m,$nk"; done
done
declare -A CFG=([auto]="--schedule auto" [coop1]="--schedule coop --cluster 1" [coop2]="--schedule coop --cluster 2"
  [pingpong]="--schedule pingpong")
for run in ${RUNS:-1 2}; do
  for c in ${CONFIGS:-auto coop1 coop2 pingpong}; do
    timeout 150 $BIN gemm-bench --shapes "$S" --dtype bf16 ${CFG[$c]} --iters ${ITERS:-60} --warmup ${WARMUP:-10} \
      --mode ${MODE:-both} --timing-only \
      --machine "$M" --out "$DIR/sched_${c}_${run}_$M.csv" > "$DIR/sched_${c}_${run}_$M.log" 2>&1 || rc=1
    echo "# $c run $run at ${SECONDS}s"
  done
done
exit $rc
