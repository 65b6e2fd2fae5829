#!/usr/bin/env bash
# Two-GPU device call (kind nvidia-h100-x2 or nvidia-h200-x2; the GPUs that come name the rows):
#   1. calibrate at world 2 over NVLink, with peer_reduce_chain (reduces of lines the peer just
#      stored, after its flag: local_load_us) and local_reduce_chain  -> <out>/calibrate_<m>.csv / .log
#   2. calibrate as an in-process team of 2 ranks on GPU 0 (the peer's stores from the same GPU)
#                                                        -> <out>/calibrate_team_<m1>.csv / .log
#   scripts/gpu/reduce_chain.sh <out-dir>   (binary: .carry/symmcoll-cuda)
set -- 2 "${1:?usage: scripts/gpu/reduce_chain.sh <out-dir>}"
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh  # safety variables, GPUs 0 and 1, BIN, DIR, M (h100x2 / h200x2), GPU
nvidia-smi -L | tee "$DIR/gpus.txt"
M1=${GPU}x1
timeout 300 env CUDA_VISIBLE_DEVICES=0,1 $BIN launch -n 2 -- $BIN calibrate --backend cuda \
  --csv "$DIR/calibrate_$M.csv" > "$DIR/calibrate_$M.log" 2>&1
echo "# calibrate world 2: rc $? at ${SECONDS}s"
grep -E "error|FAIL" "$DIR/calibrate_$M.log" | head
grep -E "^(peer|local)_reduce_chain|^acquire_peer" "$DIR/calibrate_$M.csv"
timeout 200 env CUDA_VISIBLE_DEVICES=0 $BIN calibrate --backend cuda --world 2 \
  --csv "$DIR/calibrate_team_$M1.csv" > "$DIR/calibrate_team_$M1.log" 2>&1
echo "# calibrate team of 2 on one GPU: rc $? at ${SECONDS}s"
grep -E "error|FAIL" "$DIR/calibrate_team_$M1.log" | head
grep -E "^(peer|local)_reduce_chain" "$DIR/calibrate_team_$M1.csv"
