#!/usr/bin/env bash
# mm_rs.gemm_ce_tile_acc (tiles_ce) on 2 GPUs: the peers' rows as a lead chunk's GEMM then the
# rest (the plan's default) or as one GEMM with every chunk's copy after it
# (SYMM_TILES_CE_ONE_GEMM=1: a switch of that experiment's build only, removed after it: see
# experiments/results/h100x2/README.md tiles_ce_lead_126f909), at chunk rows 4096 (default), 2048 and 1024; the ring plan (ce) and
# the matmul alone in each call; every row checked; each configuration twice, interleaved.
#   scripts/gpu/tiles_ce_lead.sh 2 <out-dir>      -> lead_<mode>_<rows>_r<rep>_<m>.log
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh
for rep in 1 2; do
  for cr in 0 2048 1024; do
    for mode in lead one; do
      log="$DIR/lead_${mode}_${cr}_r${rep}_$M.log"
      if [ $mode = one ]; then export SYMM_TILES_CE_ONE_GEMM=1; else unset SYMM_TILES_CE_ONE_GEMM; fi
      timeout 100 $BIN launch -n $W -- $BIN bench --backend cuda --op mm_rs --algo tiles_ce,ce --shape 8b,70b \
        --m 4096,16384 --mode both --chunk-rows $cr > "$log" 2>&1
      echo "# $mode chunk rows $cr rep $rep: rc $? at ${SECONDS}s"
      grep -E "FAIL|rror" "$log" | head -4
      grep -E "tile_acc|cublaslt " "$log" | grep 16384 | grep -v nccl | awk '{print $2, $5, $6, $7, $8}'
    done
  done
done
