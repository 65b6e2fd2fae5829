#!/usr/bin/env bash
# Device programs traced verb by verb inside their kernels (bench --trace, backends/cuda/verb_trace.h),
# on whatever came: over NVLink at world 2 (and 4 with 4+ GPUs), graph and eager; always, a team of
# 2 ranks on GPU 0 (eager: a team's graph is one graph of every rank). The timed rows of the same
# cases come first (untraced), so the traced calls' cost shows beside them. Then, when
# .carry/old/symmcoll-cuda is there (main before tracing), old and new binary untraced, interleaved
# twice, timing only: what tracing costs the kernels that are not traced.
#   scripts/gpu/verb_trace.sh <out-dir> [sizes] [calls]   (binary: .carry/symmcoll-cuda)
# -> <out>/nvlink_w<W>/{bench_<m>_<op>.csv,.log,traces/}  <out>/team_w2/...  <out>/cmp/compare_*.txt
# The traces below 1M are kept as .json.xz; of 1M and above only their raw stamps
# (<trace>.stamps.rank<r>.csv.xz): the device tool's files must stay small.
OUT=${1:?usage: scripts/gpu/verb_trace.sh <out-dir> [sizes] [calls]}
SIZES=${2:-4K,64K,1M}
CALLS=${3:-20}
NG=$(nvidia-smi -L | grep -c GPU)
W=$(( NG >= 4 ? 4 : NG >= 2 ? 2 : 1 ))
set -- $W "$OUT"
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh  # safety variables, GPUs, BIN, SHA, DIR, M, GPU
WORLDS="2"; [ "$W" -ge 4 ] && WORLDS="2 4"; [ "$W" -lt 2 ] && WORLDS=""
nvidia-smi -L | tee "$DIR/gpus.txt"
$BIN --version | tee "$DIR/version.txt"
CASES=(
  "all_reduce st_reduce,ld_reduce,st_ll_reduce,rs_ld_ag_st,rs_ld_ag_ld"
  "reduce_scatter ld_reduce,st_ll_reduce"
  "all_gather st,ld,st_ll"
)
run_cases() {  # <label> <csv-stem> <mode> <extra bench args> <command before 'bench'...>
  local label=$1 stem=$2 mode=$3 extra=$4; shift 4
  mkdir -p "$DIR/$label/traces"
  for c in "${CASES[@]}"; do
    set -- $c "$@"
    local op=$1 algos=$2; shift 2
    timeout 200 "$@" bench --backend cuda $extra --op "$op" --algo "$algos" --sizes "$SIZES" --mode "$mode" \
      --check-up-to 1M --trace "$DIR/$label/traces" --trace-calls "$CALLS" \
      --csv "$DIR/$label/${stem}_$op.csv" > "$DIR/$label/${stem}_$op.log" 2>&1
    echo "# $label $op: rc $? at ${SECONDS}s, $(grep -c '# trace:' "$DIR/$label/${stem}_$op.log") traces"
    grep -E "FAIL|error|Error" "$DIR/$label/${stem}_$op.log" | head -5
  done
}
for w in $WORLDS; do
  run_cases nvlink_w$w "bench_${GPU}x$w" both "" env CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((w - 1))) $BIN launch -n $w -- $BIN
done
run_cases team_w2 "bench_${GPU}x1" eager "--world 2" env CUDA_VISIBLE_DEVICES=0 $BIN
OLD=.carry/old/symmcoll-cuda
if [ -x "$OLD" ]; then
  CMP=(
    "all_reduce st_reduce,ld_reduce,st_ll_reduce,rs_ld_ag_st"
    "reduce_scatter ld_reduce,st_ll_reduce"
    "all_gather st,ld,st_ll"
  )
  mkdir -p "$DIR/cmp"
  for rep in 1 2; do
    for bin in old new; do
      B=$BIN; [ $bin = old ] && B=$OLD
      for c in "${CMP[@]}"; do
        set -- $c
        for w in $WORLDS; do
          timeout 100 env CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((w - 1))) $B launch -n $w -- $B bench --backend cuda \
            --op $1 --algo $2 --sizes "$SIZES" --mode both --timing-only \
            --csv "$DIR/cmp/cmp_${bin}${rep}_nvlink_w${w}_$1.csv" >> "$DIR/cmp/cmp_nvlink.log" 2>&1 ||
            echo "# $bin $rep nvlink w$w $1 failed" >> "$DIR/cmp/cmp_nvlink.log"
        done
        timeout 100 env CUDA_VISIBLE_DEVICES=0 $B bench --backend cuda --world 2 --op $1 --algo $2 \
          --sizes "$SIZES" --mode both --timing-only --csv "$DIR/cmp/cmp_${bin}${rep}_team_$1.csv" \
          >> "$DIR/cmp/cmp_team.log" 2>&1 || echo "# $bin $rep team $1 failed" >> "$DIR/cmp/cmp_team.log"
      done
    done
    echo "# compare rep $rep at ${SECONDS}s"
  done
  for l in nvlink team; do
    ls "$DIR"/cmp/cmp_*_${l}_*.csv > /dev/null 2>&1 &&
      python3 scripts/gpu/compare_bins.py "$DIR"/cmp/cmp_*_${l}_*.csv > "$DIR/cmp/compare_$l.txt" 2>&1
    echo "## $l"; cat "$DIR/cmp/compare_$l.txt"
  done
fi
# Keep the files small enough to come back.
for f in "$DIR"/*/traces/*.json; do
  case "$f" in *.1M.*|*.4M.*|*.16M.*) rm -f "$f" ;; *) xz -T4 -9 "$f" ;; esac
done
xz -T4 -9 "$DIR"/*/traces/*.csv 2>/dev/null
du -sh "$DIR"
