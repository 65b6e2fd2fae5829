#!/usr/bin/env bash
# What mm_rs.tile_st_peer_acc's own tiles pay to read the peers' slots in their epilogue (the
# simulator's mma_in_GBps), on a machine of >= 2 GPUs (the `run` tool), binary carried
# (.carry/symmcoll-cuda): at world 2 and (with >= 4 GPUs) world 4, the fused bench's tiles_acc at 8B
# and 70B, M 4096 and 16384, graph, timing only, as the program (mode "") and in the diagnosis modes
# (SYMM_DEBUG_MMRS_TILES) acc-no-inputs (the epilogue without the slots: acquires and signals kept),
# no-reduce (no acquires) and compute-only (no acquires, inputs or signals); the modes in turn, twice.
# ALGO=gemm_ce_tile_acc MODES="no-reduce compute-only": the copy-engine plan's tile program (its modes:
# no-reduce without its acquires, compute-only without its epilogue inputs too).
#   [ALGO=..] [MODES=..] scripts/gpu/acc_inputs.sh <gpus> <out-dir>   -> <out-dir>/w<world>_<rep>_<mode>.csv / .log
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh "$1" "$2"
for w in 2 4; do
  [ $w -le $W ] || continue
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((w - 1)))
  for rep in 1 2; do
    for mode in ${MODES:-program acc-no-inputs no-reduce compute-only}; do
      m=$mode; [ $m = program ] && m=""
      timeout 120 env SYMM_DEBUG_MMRS_TILES=$m $BIN launch -n $w -- $BIN bench --backend cuda --op mm_rs \
        --algo ${ALGO:-tile_st_peer_acc} --dtype bf16 --shape 8b,70b --m 4096,16384 --mode graph --no-baselines \
        --timing-only --csv "$DIR/w${w}_${rep}_$mode.csv" > "$DIR/w${w}_${rep}_$mode.log" 2>&1
      echo "# w$w rep $rep $mode: rc $? at ${SECONDS}s"
    done
  done
done
