#!/usr/bin/env bash
# The fused bench with timing passes (--passes: every case of a shape timed once per pass, passes
# one after the other, each row the median of its passes'), on a machine of W GPUs:
#   1. every ag_mm / mm_rs algorithm and baseline, 8B / 70B x M 4096 / 16384, graph and eager,
#      checked, PASSES passes (default 3)          -> fused_<sha>_<m>.csv / .log
#   2. the same bench as an in-process team of 2 on GPU 0 (one GPU), a small shape, 2 passes:
#      the team path of the passes                  -> team_passes.log
#   scripts/gpu/fused_passes.sh <world> <out-dir>
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh
PASSES=${PASSES:-3}
timeout 400 $BIN launch -n $W -- $BIN bench --backend cuda --op ag_mm,mm_rs --algo all --dtype bf16 --shape 8b,70b \
  --m 4096,16384 --mode both --passes $PASSES --csv "$DIR/fused_${SHA}_$M.csv" > "$DIR/fused_${SHA}_$M.log" 2>&1
echo "# 1 fused bench, $PASSES passes: rc $? at ${SECONDS}s"
grep -E "FAIL|rror" "$DIR/fused_${SHA}_$M.log" | head -10
CUDA_VISIBLE_DEVICES=0 timeout 100 $BIN bench --backend cuda --world 2 --op ag_mm,mm_rs --algo all --dtype bf16 \
  --m 1024 --n 512 --k 1024 --mode both --passes 2 --iters 5 --warmup 1 > "$DIR/team_passes.log" 2>&1
echo "# 2 team, 2 passes: rc $? at ${SECONDS}s"
grep -E "FAIL|rror|check failure" "$DIR/team_passes.log" | head -5
