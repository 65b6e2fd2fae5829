#!/usr/bin/env bash
# The CUDA verbs' last step (backends/cuda/block_ctx.cuh copy, vec_math.cuh reduce_n) before and
# after it became one guarded step, in one device call from the repository root with both binaries
# carried: .carry/old/symmcoll-cuda (main before the change) and .carry/symmcoll-cuda (the change).
#   1. checks of the new binary: every algorithm of all_reduce / reduce_scatter / all_gather, bf16
#      and fp32, worlds 2, 3, 4, 8 as in-process teams on GPU 0 (odd sizes at world 3), 100 graph
#      replays each                                                           -> check_<m>.log
#   2. compute-sanitizer memcheck of the programs whose copies and reduces changed, worlds 2 and 4,
#      sizes whose pieces end in a tail (48K, 96K, 1M)                         -> sanitize_<m>.log
#   3. timing on one GPU, old and new binary interleaved twice (old, new, old, new), worlds 2, 4, 8
#      as teams, graph: the load and store programs at their default blocks 4K..4M, and
#      all_gather.ld / all_reduce.rs_ld_ag_ld / all_reduce.ld_reduce at 1..32 blocks, 256K..4M
#                                                                             -> ab_<bin><rep>_w<W>_<m>.csv
#   scripts/gpu/tail_ab.sh <out-dir> [steps, default 123]
# Many files: tar the out-dir before it is fetched. <m> = h100x1 / h200x1 (one GPU's numbers, never
# mixed with NVLink's). scripts/gpu/compare_bins.py ab_*.csv compares the binaries cell by cell.
DIR=${1:?usage: scripts/gpu/tail_ab.sh <out-dir> [steps]}
STEPS=${2:-123}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H100 && echo h100 || echo h200)
source "$(dirname "$0")/one_gpu_env.sh" "$DIR" "${GPU}x1"
export CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-EAGER}
step() { [[ $STEPS == *$1* ]]; }
NEW=.carry/symmcoll-cuda
OLD=.carry/old/symmcoll-cuda
begin tail_ab "$NEW"
{ $NEW --version; $OLD --version; } >> "$DIR/gpu_$M.csv" 2>&1
SECONDS=0

# ---- 1. checks ------------------------------------------------------------------------------
if step 1; then
  for w in 2 3 4 8; do
    sizes=4K,16K,48K,96K,256K,1M,4M
    [ $w = 3 ] && sizes=12K,48K,96K,192K,768K,3M
    for op in all_reduce reduce_scatter all_gather; do
      run "check world $w $op" "$NEW" bench --backend cuda --world $w --op $op --algo all --dtype bf16,fp32 \
        --sizes $sizes --no-timing --replays 100
    done
  done
  echo "# 1 checks at ${SECONDS}s: $(grep -cE '^### rc 0 ' "$T") commands rc 0, $(grep -cE '^### rc [1-9]' "$T") not"
fi

# ---- 2. memcheck ----------------------------------------------------------------------------
if step 2; then
  S=$DIR/sanitize_$M.log
  : > "$S"
  for w in 2 4; do
    for oa in all_gather:ld,st,st_copy all_reduce:ld_reduce,rs_ld_ag_ld,rs_ld_ag_st,st_reduce reduce_scatter:ld_reduce; do
      echo "### memcheck world $w $oa" >> "$S"
      timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --report-api-errors no --leak-check no \
        --error-exitcode 3 --kernel-name kns=program_kernel "$NEW" bench --backend cuda --world $w \
        --op ${oa%%:*} --algo ${oa##*:} --dtype bf16 --sizes 48K,96K,1M --no-timing >> "$S" 2>&1
      echo "### rc $?" >> "$S"
    done
  done
  echo "# 2 memcheck at ${SECONDS}s: $(grep -cE '^### rc 0$' "$S") rc 0, $(grep -cE '^### rc [1-9]' "$S") not;" \
    "$(grep -E 'ERROR SUMMARY' "$S" | sort | uniq -c | tr '\n' ' ')"
fi

# ---- 3. old against new, one GPU ------------------------------------------------------------
if step 3; then
  for rep in 1 2; do
    for b in old new; do
      bin=$OLD; [ $b = new ] && bin=$NEW
      for w in 2 4 8; do
        C=$DIR/ab_${b}${rep}_w${w}_$M
        run "$b$rep world $w all_gather" "$bin" bench --backend cuda --world $w --op all_gather --algo ld,st,st_copy \
          --sizes 4K:4M --mode graph --timing-only --iters 20 --csv "$C.ag.csv"
        run "$b$rep world $w all_reduce" "$bin" bench --backend cuda --world $w --op all_reduce \
          --algo ld_reduce,rs_ld_ag_ld,rs_ld_ag_st,st_reduce --sizes 4K:4M --mode graph --timing-only --iters 20 \
          --csv "$C.ar.csv"
        run "$b$rep world $w reduce_scatter" "$bin" bench --backend cuda --world $w --op reduce_scatter \
          --algo ld_reduce --sizes 4K:4M --mode graph --timing-only --iters 20 --csv "$C.rs.csv"
        run "$b$rep world $w blocks ag" "$bin" bench --backend cuda --world $w --op all_gather --algo ld \
          --sizes 256K,1M,4M --blocks 1,2,4,8,16,32 --mode graph --timing-only --iters 20 --csv "$C.agb.csv"
        run "$b$rep world $w blocks ar" "$bin" bench --backend cuda --world $w --op all_reduce \
          --algo rs_ld_ag_ld,ld_reduce --sizes 256K,1M,4M --blocks 1,2,4,8,16,32 --mode graph --timing-only \
          --iters 20 --csv "$C.arb.csv"
        # One CSV per binary, rep and world: the header once.
        : > "$C.csv"
        for f in "$C".ag.csv "$C".ar.csv "$C".rs.csv "$C".agb.csv "$C".arb.csv; do
          [ -s "$f" ] || continue
          if [ -s "$C.csv" ]; then grep -vE "^(#|backend,)" "$f" >> "$C.csv"; else cat "$f" >> "$C.csv"; fi
          rm -f "$f"
        done
        echo "# 3 $b$rep world $w at ${SECONDS}s: $(grep -c "" "$C.csv") lines"
      done
    done
  done
fi
