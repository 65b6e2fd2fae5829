#!/usr/bin/env bash
# The host plans' side streams at world W (the `run` tool, binary carried): every copy-engine plan with
# --streams 2 (one side stream carries every peer's copies) against the default 3 and 4, graph and
# eager, timing only, twice (logs: the knob refuses --csv):
#   1. all_gather ce, ce_sm and reduce_scatter ce, ce_overlap at 16M, 64M, 256M -> {ag,rs}_s<streams>_r<rep>.log
#   2. ag_mm ce, ce_bulk, tiles and mm_rs ce, ce_acc, tiles_ce at 8B / 70B, M 16384
#                                                                  -> {agmm,mmrs}_s<streams>_r<rep>.log
#   scripts/gpu/streams_w4.sh <world> <out-dir>
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W -- $BIN bench --backend cuda --mode both --timing-only"
run() {  # <log> <op> <algos> [options]
  local log=$1 op=$2 algos=$3; shift 3
  timeout 100 $L --op $op --algo $algos "$@" > "$DIR/$log" 2>&1; echo "# $log: rc $? at ${SECONDS}s"
}
for rep in 1 2; do for s in 2 3 4; do
  run ag_s${s}_r$rep.log all_gather ce,ce_sm --sizes 16M,64M,256M --streams $s
  run rs_s${s}_r$rep.log reduce_scatter ce,ce_overlap --sizes 16M,64M,256M --streams $s
  run agmm_s${s}_r$rep.log ag_mm ce,ce_bulk,tiles --shape 8b,70b --m 16384 --streams $s
  run mmrs_s${s}_r$rep.log mm_rs ce,ce_acc,tiles_ce --shape 8b,70b --m 16384 --streams $s
done; done
