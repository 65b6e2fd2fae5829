#!/usr/bin/env bash
# Pieces cut on large boundaries (core/partition.h split_aligned) against 16-byte ones, on one GPU as
# teams: old binary, new, old, new at 64M and 256M and block counts that do and do not divide them
# evenly (graph, timing only), then the new binary's checks (every algorithm of the three
# collectives, worlds 2 and 4, odd sizes and block counts among them).
# Usage: scripts/gpu/align_ab.sh <out-dir> <machine-name> <old-binary> <new-binary>
source "$(dirname "$0")/one_gpu_env.sh"
OLD=${3:?old binary} NEW=${4:?new binary}
begin align_ab "$NEW"
for rep in 1 2; do
  for tag in old new; do
    bin=$OLD; [ $tag = new ] && bin=$NEW
    for w in 2 4; do
      run "$tag rep $rep world $w ag" "$bin" bench --backend cuda --world $w --op all_gather --algo ld,st \
        --sizes 64M,256M --blocks 33,64,96,132 --mode graph --timing-only --iters 10 \
        --csv "$DIR/ab_${tag}_${rep}_ag_w${w}_$M.csv"
      run "$tag rep $rep world $w ar" "$bin" bench --backend cuda --world $w --op all_reduce \
        --algo rs_ld_ag_ld,rs_ld_ag_st --sizes 64M,256M --blocks 33,64,96 --mode graph --timing-only \
        --iters 10 --csv "$DIR/ab_${tag}_${rep}_ar_w${w}_$M.csv"
      run "$tag rep $rep world $w rs" "$bin" bench --backend cuda --world $w --op reduce_scatter \
        --algo ld_reduce --sizes 64M,256M --blocks 33,64,96 --mode graph --timing-only --iters 10 \
        --csv "$DIR/ab_${tag}_${rep}_rs_w${w}_$M.csv"
    done
  done
done
for w in 2 3 4; do
  for op in all_gather all_reduce reduce_scatter; do
    for blocks in default 7,33; do
      extra=(); [ $blocks = default ] || extra=(--blocks $blocks)
      run "check world $w $op blocks $blocks" "$NEW" bench --backend cuda --world $w --op $op --algo all \
        --dtype bf16 --sizes 4K,96K,1M,3M,16M "${extra[@]}" --mode graph --check-up-to 16M --iters 3 \
        --warmup 1 --csv "$DIR/check_${op}_w${w}_${blocks/,/_}_$M.csv"
    done
  done
done
grep -h "check failure" "$T" | sort | uniq -c
