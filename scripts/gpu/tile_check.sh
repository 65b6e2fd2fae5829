#!/usr/bin/env bash
# One GPU, the tile programs' bounded acquires after a change to their spin loop: the fused check at
# teams of 4 and 8 (every ag_mm / mm_rs algorithm, bf16 and fp16, 20 graph replays, small shapes and
# 32-row chunks: many flags per call), then the GPU suite's hang part as a team (a rank that never
# calls, mismatched programs and sizes must end named). Usage: scripts/gpu/tile_check.sh <out-dir>
# <machine-name> [binary-dir]
source "$(dirname "$0")/one_gpu_env.sh"
BD=${3:-build/apps}
B="$BD/symmcoll-cuda bench --backend cuda"
mkdir -p "$DIR"
T=$DIR/tile_check_$M.log
for w in 4 8; do
  run "fused check world $w" $B --world $w --op ag_mm,mm_rs --algo all --dtype bf16,fp16 --n 512 --k 1024 \
    --m $((64 * w)),$((384 * w)) --chunk-rows 32 --no-timing --replays 20
done
echo "### hang part (team)" >> "$T"
t0=$SECONDS
SYMM_TEST_TEAM=1 SYMM_TEST_LOGDIR="$DIR/hang" timeout 300 bash tests/gpu/run.sh "$BD" hang >> "$T" 2>&1
echo "### rc $? in $((SECONDS - t0)) s" >> "$T"
