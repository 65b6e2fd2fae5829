#!/usr/bin/env bash
# A trial, not a change: a block's copy (backends/cuda/block_ctx.cuh) with 8 vectors a thread per
# step in flight instead of 4, old binary (.carry/old/symmcoll-cuda, kU 4) against new
# (.carry/symmcoll-cuda, kU 8), interleaved twice, as teams of 2 and 4 on GPU 0:
#   calibrate's copy_peer rows (a block's copy rate, block_GBps)          -> calib_<bin><rep>_w<W>_<m>.csv
#   all_gather ld / st and all_reduce rs_ld_ag_ld at 1, 2, 4 blocks, 256K..16M, graph, timing only
#                                                                        -> ab_<bin><rep>_w<W>_<m>.csv
#   scripts/gpu/copy_unroll.sh <out-dir>
DIR=${1:?usage: scripts/gpu/copy_unroll.sh <out-dir>}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H100 && echo h100 || echo h200)
source "$(dirname "$0")/one_gpu_env.sh" "$DIR" "${GPU}x1"
NEW=.carry/symmcoll-cuda
OLD=.carry/old/symmcoll-cuda
begin copy_unroll "$NEW"
SECONDS=0
for rep in 1 2; do
  for b in old new; do
    bin=$OLD; [ $b = new ] && bin=$NEW
    for w in 2 4; do
      C=$DIR/ab_${b}${rep}_w${w}_$M
      run "$b$rep world $w calibrate" "$bin" calibrate --backend cuda --world $w --rows copy_peer \
        --csv "$DIR/calib_${b}${rep}_w${w}_$M.csv"
      run "$b$rep world $w ag" "$bin" bench --backend cuda --world $w --op all_gather --algo ld,st \
        --sizes 256K:16M:x4 --blocks 1,2,4 --mode graph --timing-only --iters 20 --csv "$C.ag.csv"
      run "$b$rep world $w ar" "$bin" bench --backend cuda --world $w --op all_reduce --algo rs_ld_ag_ld \
        --sizes 256K:16M:x4 --blocks 1,2,4 --mode graph --timing-only --iters 20 --csv "$C.ar.csv"
      { cat "$C.ag.csv"; grep -vE "^(#|backend,)" "$C.ar.csv"; } > "$C.csv" && rm -f "$C.ag.csv" "$C.ar.csv"
      echo "# $b$rep world $w at ${SECONDS}s"
    done
  done
done
