#!/usr/bin/env bash
# Why tiles_acc's NVLink stores cost more than tiles_push's (scripts/gpu/mmrs_acc.sh found its stores
# alone ~100 us over the tile GEMM at 70B M 16384 on 2x H200): sustained runs as mmrs_acc.sh's, timing
# only, of the stores alone (SYMM_DEBUG_MMRS_TILES=compute-only) in
#   acc_co        tiles_acc on 132 blocks (with world 2 its merged walk gives the even blocks every
#                 peer tile: half the SMs store over NVLink all the time)
#   acc_co_131    tiles_acc on 131 blocks (SYMM_DEBUG_FUSED_SMS: each block alternates wave by wave)
#   push_co       tiles_push (bands: owners alternate within a wave, each block alternating)
#   push_co_1band tiles_push in one band (--chunk-rows 8192: every block stores over NVLink for the
#                 first half, as tiles_acc before its merged walk)
#   pull_co       tiles (every store local)
# and tiles_acc whole on 131 blocks (acc_131). The list twice, in turn.
#   scripts/gpu/mmrs_acc_diag.sh <world> <out-dir>
source scripts/gpu/nvlink_env.sh
ITERS=${ITERS:-400}
source scripts/gpu/power_samples.sh
run() {  # name algo mode sms [extra args] (power_samples.sh)
  local sms=$4
  SYMM_DEBUG_FUSED_SMS=$sms mmrs_sustained "$1" "$2" "$3" "${@:5}"
}
for rep in 1 2; do
  run acc_co tiles_acc compute-only 0
  run acc_co_131 tiles_acc compute-only 131
  run push_co tiles_push compute-only 0
  run push_co_1band tiles_push compute-only 0 --chunk-rows 8192
  run pull_co tiles compute-only 0
  run acc_131 tiles_acc "" 131
  sleep 1
done
