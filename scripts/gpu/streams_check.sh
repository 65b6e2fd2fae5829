#!/usr/bin/env bash
# The copy-engine collectives after push_chunks put a peer's chunks on one side stream, on a
# machine of W GPUs (the `run` tool), from the repository root (.carry/symmcoll-cuda carried):
# reduce_scatter ce / ce_overlap and all_gather ce / ce_sm at 1M..256M (all_gather in 8M chunks),
# checked to 64M, graph and eager, NCCL's rows beside, at --streams 3 (the default) and 2, twice
#                                                   -> {rs,ag}_s<streams>_r<rep>_<m>.csv / .log
# and one traced eager call of each reduce-scatter plan at 64M        -> traces/
#   scripts/gpu/streams_check.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
for rep in 1 2; do for st in 3 2; do
  timeout 90 $BIN launch -n $W -- $BIN bench --backend cuda --op reduce_scatter --algo ce,ce_overlap --sizes 1M,16M,64M,256M \
    --mode both --check-up-to 64M --streams $st --csv "$DIR/rs_s${st}_r${rep}_$M.csv" > "$DIR/rs_s${st}_r${rep}_$M.log" 2>&1
  echo "# rs streams $st rep $rep: rc $? at ${SECONDS}s"; grep -E "FAIL|rror" "$DIR/rs_s${st}_r${rep}_$M.log" | head -3
  timeout 90 $BIN launch -n $W -- $BIN bench --backend cuda --op all_gather --algo ce,ce_sm --sizes 16M,64M,256M --chunk-bytes 8M \
    --mode both --check-up-to 64M --streams $st --csv "$DIR/ag_s${st}_r${rep}_$M.csv" > "$DIR/ag_s${st}_r${rep}_$M.log" 2>&1
  echo "# ag streams $st rep $rep: rc $? at ${SECONDS}s"; grep -E "FAIL|rror" "$DIR/ag_s${st}_r${rep}_$M.log" | head -3
done; done
timeout 60 $BIN launch -n $W -- $BIN bench --backend cuda --op reduce_scatter --algo ce,ce_overlap --sizes 64M --mode eager \
  --timing-only --trace "$DIR/traces" > "$DIR/rs_trace_$M.log" 2>&1
echo "# done at ${SECONDS}s"
