#!/usr/bin/env bash
# What cuBLASLt's C_in (beta = 1) costs at the fused plans' GEMM shapes, and the mm_rs plans' timelines
# at two chunk sizes, on a machine of W GPUs (the `run` tool), binary carried (.carry/symmcoll-cuda):
#   1. gemm-bench --impl cublaslt on GPU 0, C = A x B and C = A x B + C_in, graph and eager
#                                                     -> gemm_plain.csv / .log, gemm_cin.csv / .log
#   2. mm_rs ce and ce_acc at 70B and 8B, M 16384, --chunk-rows 4096 and 8192, timed and traced
#      (two calls back to back)                       -> mmrs_trace_<rows>.log, traces_<rows>/
#   scripts/gpu/gemm_c_in.sh <world> <out-dir>
DEFAULT_STEPS=1
source scripts/gpu/nvlink_env.sh
S="2048,3584,4096;4096,3584,4096;8192,3584,4096;16384,3584,4096;4096,1792,2048;8192,1792,2048"
CUDA_VISIBLE_DEVICES=0 timeout 100 $BIN gemm-bench --impl cublaslt --shapes "$S" --mode both --timing-only \
  --out "$DIR/gemm_plain.csv" > "$DIR/gemm_plain.log" 2>&1
CUDA_VISIBLE_DEVICES=0 timeout 100 $BIN gemm-bench --impl cublaslt --c-in --shapes "$S" --mode both --timing-only \
  --out "$DIR/gemm_cin.csv" > "$DIR/gemm_cin.log" 2>&1
echo "# 1 gemm: rc $? at ${SECONDS}s"
for cr in 4096 8192; do
  timeout 100 $BIN launch -n $W -- $BIN bench --backend cuda --op mm_rs --algo ce,ce_acc --shape 70b,8b --m 16384 \
    --chunk-rows $cr --mode both --timing-only --trace "$DIR/traces_$cr" --trace-calls 2 > "$DIR/mmrs_trace_$cr.log" 2>&1
  echo "# 2 chunk rows $cr: rc $? at ${SECONDS}s"
done
