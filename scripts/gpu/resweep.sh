#!/usr/bin/env bash
# The collectives measured again with today's binary where the committed rows are older than the
# device programs they judge: the default bench sweep (every algorithm at its default blocks, 4K..256M
# in x2 steps, graph and eager) and the block-count sweeps of the first runs (tune_<m>.csv: the same
# algorithms, sizes and block counts, graph). The simulator's fidelity tables take a cell's newest run
# (plots/data.py newest_runs, tune_rows), so these rows replace the rows of superseded kernels.
#   scripts/gpu/resweep.sh <world> <out-dir> [steps: 1 bench, 2 tune; default 12]
# -> <out-dir>/bench_<m>.csv / .log, tune_<m>.csv / .log, smi_<m>.csv   (<m> = h200x<world>)
DEFAULT_STEPS=12
source scripts/gpu/nvlink_env.sh
L="$BIN launch -n $W --"
step1() {
  timeout 300 $L $BIN bench --backend cuda --machine $M --op all_reduce,reduce_scatter,all_gather --algo all \
    --sizes 4K:256M --mode both --check-up-to 16M --csv "$DIR/bench_$M.csv" > "$DIR/bench_$M.log" 2>&1
  echo "# 1 bench 4K-256M: rc $? at ${SECONDS}s"; grep -E "FAIL|rror" "$DIR/bench_$M.log" | head -5
}
step2() {
  rc=0
  bench_calls "$L $BIN bench --backend cuda --machine $M --mode graph --check-up-to 1M" "$DIR/tune_$M.log" \
    "$DIR/tune_$M.csv" <<'ARGS'
--op all_reduce --algo ld_reduce,st_reduce --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32
--op all_reduce --algo rs_ld_ag_st --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32,64,96,132
--op all_reduce --algo rs_ld_ag_st --sizes 16M,256M --blocks 32,64,96,132
--op all_reduce --algo rs_ld_ag_ld --sizes 16M,256M --blocks 32,64,96,132
--op reduce_scatter --algo ld_reduce --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32,64,96,132
--op reduce_scatter --algo ld_reduce --sizes 16M,256M --blocks 32,64,96,132
--op all_gather --algo st,ld --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32,64,96,132
--op all_gather --algo st,ld --sizes 16M,256M --blocks 32,64,96,132
--op all_reduce,reduce_scatter --algo st_ll_reduce --sizes 4K:1M:x4 --blocks 1,2,4,8,16,32,64
--op all_gather --algo st_ll --sizes 4K:1M:x4 --blocks 2,4,8,16,32,64
ARGS
  echo "# 2 tune: rc $rc at ${SECONDS}s"
}
for ((i = 0; i < ${#STEPS}; ++i)); do step${STEPS:i:1}; done
