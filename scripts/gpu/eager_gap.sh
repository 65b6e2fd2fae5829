#!/usr/bin/env bash
# Why a device program's eager call costs ~1.3-2 us more than in a graph on 2x / 4x H200 (the default
# sweeps of round_eeb23eb_sweep) where calibrate's launch_busy rows (a one-rank load chain launched as
# the bench launches) measure 0.39 us: at world 2 and (with >= 4 GPUs) world 4, binary carried
# (.carry/symmcoll-cuda):
#   1. calibrate, twice, rows launch, launch_busy, exchange, exchange_busy, barrier_busy, barrier_landing,
#      peer_copy_chain, peer_copy_chain_all, load_chain_lines: exchange_busy is the exchange (every rank
#      meets its peers every round, relaxed) launched as launch_busy, graph and eager; barrier_busy the
#      collectives' barrier (release / acquire) so; peer_copy_chain_all is peer_copy_chain on every
#      rank at once
#   2. bench all_reduce.ld_reduce, all_gather.ld at 4K, 256K, 64M, both modes, timing only: the
#      default calls a sample, --calls 20 and 5, and --pdl off
#   3. bench all_gather ce_st, ce_sm_st at 4K, 1M, both modes, default calls and --calls 5
#   [STEP=123] scripts/gpu/eager_gap.sh <gpus> <out-dir>  -> <out-dir>/w<world>/...
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh "$1" "$2"
STEP=${STEP:-123}
for w in 2 4; do
  [ $w -le $W ] || continue
  d=$DIR/w$w; mkdir -p $d
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((w - 1)))
  L="$BIN launch -n $w --"
  for rep in 1 2; do
    [[ $STEP == *1* ]] || continue
    timeout 120 $L $BIN calibrate --backend cuda --rows launch,launch_busy,exchange,exchange_busy,barrier_busy,barrier_landing,peer_copy_chain,peer_copy_chain_all,load_chain_lines \
      --csv $d/calib_$rep.csv > $d/calib_$rep.log 2>&1
    echo "# w$w calibrate $rep: rc $? at ${SECONDS}s"
  done
  for k in "calls0:" "calls20:--calls 20" "calls5:--calls 5" "pdloff:--pdl off" "blocks1:--blocks 1"; do
    [[ $STEP == *2* ]] || continue
    n=${k%%:*}; a=${k#*:}
    for oa in all_reduce:ld_reduce all_gather:ld; do
      timeout 120 $L $BIN bench --backend cuda --op ${oa%%:*} --algo ${oa#*:} --no-nccl --timing-only \
        --sizes 4K,256K,64M --mode both $a --csv $d/dev_${oa%%:*}_$n.csv > $d/dev_${oa%%:*}_$n.log 2>&1
      echo "# w$w dev ${oa%%:*} $n: rc $? at ${SECONDS}s"
    done
  done
  for k in "calls0:" "calls5:--calls 5"; do
    [[ $STEP == *3* ]] || continue
    n=${k%%:*}; a=${k#*:}
    timeout 120 $L $BIN bench --backend cuda --op all_gather --algo ce_st,ce_sm_st --no-nccl --timing-only \
      --sizes 4K,1M --mode both $a --csv $d/ce_$n.csv > $d/ce_$n.log 2>&1
    echo "# w$w ce $n: rc $? at ${SECONDS}s"
  done
done
