// `symmcoll-cuda gemm-bench`: our tile GEMM (tile_gemm.h) beside cuBLASLt (gemm.h) on one GPU, in
// one process. For each shape and type: both run on fresh random inputs into poisoned outputs and
// are checked (every element of ours written; sampled entries of both against a float64 host
// reference; ours against cuBLASLt's whole C; ours with C_in), then timed, sample by sample
// alternating the two, in CUDA-graph replay and eager launches (cudaEvents around each call,
// inputs rotated over enough sets to outgrow L2). Our kernel runs the schedule of o.tile (coop,
// pingpong or auto: tile_gemm.h); the table's tile column names the one run, the CSV has no column
// for it (one CSV per schedule). Rows:
//   backend,machine,op,impl,dtype,M,N,K,graph,time_us_median,time_us_p10,time_us_p90,tflops,max_rel_err,git_sha
#pragma once

#include <array>
#include <string>
#include <vector>

#include "backends/cuda/tile_gemm.h"
#include "core/common.h"

namespace symm::cuda {

struct GemmBenchOptions {
  std::vector<std::array<int, 3>> shapes;  // M, N, K
  std::vector<DType> dtypes{DType::kBF16};
  std::vector<bool> modes{true, false};  // true: graph
  std::vector<std::string> impls{"tile", "cublaslt"};
  int iters = 100, warmup = 20;
  bool check = true, timing = true;
  bool time_c_in = false;  // time C = A x B + C_in instead of C = A x B
  int samples = 64;        // checked rows and columns (samples x samples entries, plus the last row / column)
  TileGemmOptions tile;
  std::string csv, machine;
  uint64_t seed = 1;
};

// 0 when every check passed, 1 when one failed (each failure printed as a FAIL line).
int run_gemm_bench(const GemmBenchOptions& o);

// "M,N,K;M,N,K" or a named set ("fused": the issue-24 shapes: 8B N 1792 K 4096, 70B N 3584 K
// 8192, M 4096 / 8192 / 16384, and mm_rs's K / 2).
std::vector<std::array<int, 3>> parse_gemm_shapes(const std::string& spec);

}  // namespace symm::cuda
