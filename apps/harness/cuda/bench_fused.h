// `symmcoll bench --backend cuda --op ag_mm,mm_rs`: matmul fused with communication
// (core/fused.h), each fused algorithm next to its baselines in the same run:
//   cublaslt        the matmul alone, the lower bound (ag_mm: M x K x N on the gathered A;
//                   mm_rs: M x K/world x N, this rank's partial product)
//   nccl_cublaslt   NCCL's collective and the cuBLASLt matmul one after the other (ag_mm:
//                   ncclAllGather then the GEMM; mm_rs: the GEMM then ncclReduceScatter), on
//                   plain cudaMalloc buffers
// Checked against a float64 reference of the product when M x N x K is small enough
// (--ref-max), and against nccl_cublaslt's answer always: max relative error per row (the
// row's largest element is the scale). Timed as the collective bench does (bench.h): CUDA-graph
// replay and eager, per call, max over ranks of each rank's median / p10 / p90.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/fused.h"

namespace symm::cuda {

struct FusedBenchOptions {
  std::vector<FusedOp> ops{FusedOp::kAgMm};
  std::string algos = "all";  // per op: ids, suffixes, aliases, or all
  std::vector<DType> dtypes{DType::kBF16};
  std::vector<MatShape> shapes;  // global M, N, K each
  bool graph = true, eager = true;
  bool baselines = true;
  int iters = 20, warmup = 3;
  int calls = 0;  // per sample; 0: by work (20 small, 5 large)
  // Timing passes: every case of a shape timed once per pass, one pass over all of them after the
  // other; a row's median / p10 / p90 are the medians of its passes' (a GPU whose clocks drift with
  // its power state spreads the drift over every case alike instead of favouring the first).
  int passes = 1;
  int streams = 3;             // main + side streams of the plans
  std::size_t chunk_rows = 0;  // 0: each plan's default
  int blocks = 0;              // the plans' kernels (FusedArgs::blocks); 0: each plan's default
  bool check = true;
  double ref_max = 4.0e9;  // float64 reference when M x N x K (ag_mm; mm_rs: / world) <= this
  int replays = 0;         // > 0: also replay a one-call graph this often, then check
  bool timing = true;
  // Host plans: the bound on a sample's plan waits (PlanExec::wait_main) before the rank reports the
  // wait it is stuck on (rank, stream, slot). Below the stream watchdog's default (30 s), so that a
  // peer that never calls ends the run on the waiting rank's named report, not on the idle rank's.
  double plan_timeout_s = 10;
  std::string csv, machine;
  // Non-empty: after timing each host plan, one call of it per launch mode traced on the GPU (its
  // verbs on their streams, CUDA events; trace_out.h) written into this folder as Chrome traces.
  std::string trace_dir;
  int trace_calls = 1;  // calls traced back to back per launch mode (--trace-calls)
  std::uint64_t seed = 1;
  int world = 0;  // > 0: an in-process team of this many ranks (team.h): no NCCL, so no
                  // nccl_cublaslt; the plans are checked against peer copies + cuBLASLt instead
};

// Returns 0, or 1 when a check failed (every failure is printed). Throws symm::Error.
int run_fused_bench(const FusedBenchOptions& o);

}  // namespace symm::cuda
