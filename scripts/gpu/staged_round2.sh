#!/usr/bin/env bash
# Two GPUs (kind nvidia-h100-x2), after the staged epilogue took C_in (the plain GEMM's gemm_c_in
# and mm_rs.gemm_ce_tile_acc's peers' partials): on GPU 0 the GEMM checks and both epilogues timed
# (scripts/gpu/tile_staged.sh), C = A x B + C_in timed with each epilogue, the fused plans checked in
# one-GPU teams (scripts/gpu/tile_fused.sh); then the NVLink fused round (scripts/gpu/round.sh 2,
# step 1: every algorithm, checked, beside cuBLASLt).
#   scripts/gpu/staged_round2.sh <out-dir>   (binary: .carry/symmcoll-cuda)
set -uo pipefail
DIR=${1:?usage: scripts/gpu/staged_round2.sh <out-dir>}
export BIN=${BIN:-.carry/symmcoll-cuda}
mkdir -p "$DIR"
rc=0
CUDA_VISIBLE_DEVICES=0 bash scripts/gpu/tile_staged.sh "$DIR/gemm" h100x1 || rc=1
for e in registers staged; do
  CUDA_VISIBLE_DEVICES=0 timeout 120 $BIN gemm-bench --shapes fused --dtype bf16 --c-in --schedule coop --epilogue $e \
    --iters 40 --warmup 10 --timing-only --machine h100x1 --out "$DIR/gemm/cin_$e.csv" > "$DIR/gemm/cin_$e.log" 2>&1 || rc=1
  echo "# C_in, $e"; grep -v "^#" "$DIR/gemm/cin_$e.log" | awk '{print $2, $3, $4, $5, $(NF-5), $(NF-4), $(NF-3)}'
done
CUDA_VISIBLE_DEVICES=0 bash scripts/gpu/tile_fused.sh "$DIR/team" h100x1 > "$DIR/team.txt" 2>&1 || rc=1
grep -E "check failure|FAIL" "$DIR/team.txt" | sort | uniq -c
bash scripts/gpu/round.sh 2 "$DIR/round" 1 || rc=1
exit $rc
