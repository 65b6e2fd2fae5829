#!/usr/bin/env bash
# One GPU: the tile programs in in-process teams after the mm_rs epoch fix, and the ag_mm tile
# program's world-4 stall of the team suite (chunk rows 32, M 1536): eager alone, then with graph
# replays -> tile_team_diag_<m>.log
#   scripts/gpu/tile_team_diag.sh <out-dir> <machine>
. "$(dirname "$0")/one_gpu_env.sh" "$@"
export SYMM_STREAM_TIMEOUT_S=10 SYMM_DEBUG_ALL_STUCK=1
SECONDS=0
LOG="$DIR/tile_team_diag_$M.log"; : > "$LOG"
B=".carry/symmcoll-cuda bench --backend cuda --dtype bf16 --n 512 --k 1024 --no-timing"
v() { local name=$1; shift; echo "### $name: $*" >> "$LOG"; timeout 40 $B "$@" >> "$LOG" 2>&1; echo "### $name: rc $? at ${SECONDS}s" >> "$LOG"; }
v mmrs_w2_two_shapes --world 2 --op mm_rs --algo tiles,tiles_push --m 256,1536 --chunk-rows 32 --replays 20
v mmrs_w4_two_shapes --world 4 --op mm_rs --algo tiles,tiles_push --m 256,1536 --chunk-rows 32 --replays 20
v agmm_w4_eager --world 4 --op ag_mm --algo tiles --m 1536 --chunk-rows 32 --replays 0
v agmm_w4_replays --world 4 --op ag_mm --algo tiles --m 1536 --chunk-rows 32 --replays 20
v agmm_w4_default_chunks --world 4 --op ag_mm --algo tiles --m 1536 --replays 20
v agmm_w2_replays --world 2 --op ag_mm --algo tiles --m 1536 --chunk-rows 32 --replays 20
grep -E "^###|stuck|error|FAIL" "$LOG"
for w in 2 4; do
  echo "### suite's fused correctness world $w" >> "$LOG"
  timeout 120 .carry/symmcoll-cuda bench --backend cuda --world $w --op ag_mm,mm_rs --algo all --dtype bf16,fp16 --n 512 \
    --k 1024 --m 256,1536 --chunk-rows 32 --no-timing --replays 100 >> "$LOG" 2>&1
  echo "### rc $? at ${SECONDS}s" >> "$LOG"
done
tail -4 "$LOG"; grep -E "^### (suite|rc)|FAIL|error" "$LOG" | tail -8
