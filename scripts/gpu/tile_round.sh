#!/usr/bin/env bash
# After a change of the tile programs' protocol, on a machine of W >= 2 GPUs, the binary in .carry/:
#   1. the mm_rs tile programs under compute-sanitizer memcheck, racecheck and synccheck at world 2
#      (GPUs 0, 1) with bands forced (--chunk-rows 128: the side reduce and the last band's reduce;
#      round.sh step 6's small shape runs one band)      -> sanitize_tiles_<tool>_<m>.log
#   2. the fused bench as a one-GPU team (GPU 0 alone, teams of 2 and 4: every rank's result checked
#      against the team's own answer), the rows named <gpu>x1 as on a one-GPU machine
#                                                         -> fused_team_<gpu>x1_w<n>.csv, fused_team.log
#   scripts/gpu/tile_round.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
SAN=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck synccheck; do
  extra=(); [ $tool = memcheck ] && extra=(--report-api-errors no --leak-check no)
  SYMM_WAIT_TIMEOUT_S=120 SYMM_STREAM_TIMEOUT_S=300 CUDA_VISIBLE_DEVICES=0,1 timeout 150 $BIN launch -n 2 -- \
    $SAN --tool $tool ${extra[@]+"${extra[@]}"} --error-exitcode 3 $BIN bench --backend cuda --op mm_rs \
    --algo tiles,tiles_push --dtype bf16 --m 1024 --n 256 --k 512 --chunk-rows 128 --no-timing \
    > "$DIR/sanitize_tiles_${tool}_$M.log" 2>&1
  echo "# 1 sanitize tiles $tool: rc $? at ${SECONDS}s"
  grep -E "(ERROR|RACECHECK) SUMMARY|rror" "$DIR/sanitize_tiles_${tool}_$M.log" | head -4
done
T="$DIR/fused_team.log"; : > "$T"
for w in 2 4; do
  echo "### team of $w on GPU 0" >> "$T"
  CUDA_VISIBLE_DEVICES=0 timeout 150 $BIN bench --backend cuda --world $w --op ag_mm,mm_rs --algo all --dtype bf16 \
    --shape 8b,70b --m 4096,16384 --mode both --iters 5 --warmup 1 --machine ${GPU}x1 \
    --csv "$DIR/fused_team_${GPU}x1_w$w.csv" >> "$T" 2>&1
  echo "### rc $?" >> "$T"
done
echo "# 2 team fused: at ${SECONDS}s"; grep -E "^###|FAIL|check failure" "$T" | head -8
