#!/usr/bin/env bash
# Block-count sweeps at the current launch path, and the copy-engine all-gather's knobs at 64M /
# 256M, from the repository root, binaries carried in .carry/ (build/apps/symmcoll-cuda):
#   scripts/gpu/tune_ag.sh <world> <out-dir> [steps]      (steps: default "1 2")
#   1  tune_<m>.csv/.log: the sweeps of scripts/gpu/h200.sh's `tune` and `lltune` steps in one CSV
#      (graph mode, timing only): every device program's block counts at 4K..1M, the two-shot
#      and pull programs at 16M / 256M, the flagged-packet programs 1..64 blocks, the barrier.
#      The committed tune rows before this (git bf45302 / 5888e58) predate programmatic dependent
#      launch (464a61a), the launch path the bench and the simulator's launch keys now take.
#   2  ag/: all_gather.ce_st / ce_sm_st at 64M and 256M, graph and eager, timing only, one call
#      per knob setting (each log's `# knobs:` line): copies to the one peer on two or three
#      concurrent side streams (--streams, --chunk-bytes; --sm-percent 1 leaves the SMs 1 %), and
#      the SMs' share with fewer push blocks; NCCL's copy-engine all-gather in the first call.
# About 80 seconds at world 2 (2x H100). Multicast stays off.
DEFAULT_STEPS="1 2"
source scripts/gpu/nvlink_env.sh  # safety variables, GPUs, BIN, DIR, M, STEPS, the clock samples
B="$BIN launch -n $W -- $BIN bench --backend cuda --machine $M"
rc=0
has() { [[ " $STEPS " == *" $1 "* ]]; }
if has 1; then
  T="timeout 120 $B --mode graph --timing-only"
  bench_calls "$T" "$DIR/tune_$M.log" "$DIR/tune_$M.csv" <<'EOF'
--op barrier --algo all --sizes 4K --no-nccl
--op all_reduce --algo one_shot,one_shot_push,two_shot --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32
--op reduce_scatter,all_gather --algo all --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32 --no-nccl
--op all_reduce --algo two_shot,two_shot_ld --sizes 16M,256M --blocks 32,64,96,132 --no-nccl
--op reduce_scatter,all_gather --algo all --sizes 16M,256M --blocks 32,64,96,132 --no-nccl
--op all_reduce --algo one_shot_ll --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32,64 --no-nccl
--op reduce_scatter,all_gather --algo push_ll --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32,64 --no-nccl
EOF
  echo "# tune done at ${SECONDS}s (rc $rc, $(($(wc -l < "$DIR/tune_$M.csv") - 1)) rows)"
fi
if has 2; then
  mkdir -p "$DIR/ag"
  A="timeout 60 $B --op all_gather --sizes 64M,256M --mode both --timing-only"
  i=0
  while read -r args; do
    i=$((i + 1))
    echo "# knobs: $args" > "$DIR/ag/ag_$i.log"
    $A $args --csv "$DIR/ag/ag_$i.csv" >> "$DIR/ag/ag_$i.log" 2>&1 || { rc=1; echo "# call $i failed"; }
    echo "[$i] $args"
    awk '$4==268435456 || $4==67108864' "$DIR/ag/ag_$i.log" | awk '{print "   ", $2, $4, $5, $7, $8}'
  done <<'EOF'
--algo ce,ce_sm
--algo ce_sm --no-nccl --sm-percent 1 --streams 4 --chunk-bytes 64M
--algo ce_sm --no-nccl --sm-percent 1 --streams 5 --chunk-bytes 43M
--algo ce_sm --no-nccl --sm-percent 1 --streams 4 --chunk-bytes 32M
--algo ce_sm --no-nccl --sm-percent 10 --streams 4 --chunk-bytes 64M --blocks 16,32,64
--algo ce_sm --no-nccl --sm-percent 20 --streams 4 --chunk-bytes 64M --blocks 16,32,64
--algo ce_sm --no-nccl --sm-percent 10 --blocks 8,16,32
--algo ce_sm --no-nccl --sm-percent 20 --blocks 8,16,32
--algo ce_sm --no-nccl --sm-percent 30 --blocks 16,32
--algo ce --no-nccl
EOF
  echo "# ag done at ${SECONDS}s (rc $rc)"
fi
exit $rc
