// `symmcoll bench --backend cuda`: every requested algorithm next to NCCL's own collective,
// on plain cudaMalloc buffers (algo `nccl`) and on symmetric windows (`nccl_symm`), checked
// against a float64 reference and against NCCL's answer, timed in CUDA-graph replay and eager.
//
// Timing: a sample is one launch of a graph holding `calls` back-to-back collectives (graph
// mode) or `calls` back-to-back eager launches, timed with events; per-call time = sample /
// calls. Each rank takes median, p10 and p90 over `iters` samples after warm-up; the row
// holds the maximum over ranks of each statistic (the slowest rank is the collective's time).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/common.h"

namespace symm::cuda {

struct BenchOptions {
  std::vector<Op> ops{Op::kAllReduce};
  std::vector<std::string> algos{"all"};  // names/aliases per op, or "all" (every non-multicast one)
  std::vector<DType> dtypes{DType::kBF16};
  std::vector<std::size_t> sizes;
  ReduceOp rop = ReduceOp::kSum;
  bool graph = true, eager = true;
  bool nccl = true;             // the nccl and nccl_symm baselines (+ nccl_ce for all_gather:
                                // NCCL's copy-engine all-gather, CTA policy ZERO, symmetric windows)
  bool pdl = true;              // device-program kernels with programmatic dependent launch
  int sm_percent = 0;           // host plans splitting SM / copy-engine bytes: the SMs' share (0: default)
  int streams = 3;              // host plans: streams per rank (main + side streams)
  std::size_t chunk_bytes = 0;  // host plans: bytes per copy / progress flag (0: the plan's default)
  double plan_timeout_s = 10;   // host plans: bound on a checked call before the watchdog reports
  int iters = 50, warmup = 5;   // samples
  int calls = 0;                // collectives per sample; 0: by size (100 / 20 / 5)
  std::vector<int> blocks{0};   // 0: the registry default; several: one row per count
  int threads = 0;              // 0: by size (plan_launch)
  bool check = true;
  std::size_t check_max = 64u << 20;      // larger sizes are timed but not checked (max_rel_err -1)
  int replays = 0;                        // > 0: also replay a one-call graph this often, then check
  std::size_t heap = 0;                   // symmetric heap per rank; 0: what the sizes need
  unsigned long long timeout_cycles = 0;  // 0: SYMM_WAIT_TIMEOUT_CYCLES, else SYMM_WAIT_TIMEOUT_S at the clock
  bool probe_timeout = false;             // run only the bounded-wait error-path test
  bool timing = true;
  std::string csv, machine;
  // Non-empty: after timing each host plan, one call of it per launch mode traced on the GPU (its
  // verbs on their streams, CUDA events; trace_out.h) written into this folder as Chrome traces.
  std::string trace_dir;
  int trace_calls = 1;             // calls traced back to back per launch mode (--trace-calls)
  bool nccl_tests_format = false;  // stdout: nccl-tests' tables (core/nccl_tests_format.h) instead of ours
  std::uint64_t seed = 1;
  int world = 0;  // > 0: an in-process team of this many ranks (team.h; no launch, no NCCL)
};

// Ranks: a process each under `symmcoll launch` (RANK / WORLD_SIZE), or `world` threads of this
// process (an in-process team: plain device memory, no NCCL baselines, checked against float64).
// Returns 0, or 1 when a check failed (every failure is printed). Throws symm::Error.
int run_bench(const BenchOptions& o);
// Throws kInvalidArgument for an option that means nothing for what `o` runs (--streams,
// --chunk-bytes without a host plan, --sm-percent without ce_sm, --reduce without a reducing op).
void check_bench_knobs(const BenchOptions& o);

}  // namespace symm::cuda
