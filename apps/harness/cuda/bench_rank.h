// The two halves of the collective bench (bench.h): what every rank needs resolved from the
// options (bench_setup.cpp) and one rank's bench (bench.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "apps/harness/cuda/bench.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/runtime.h"
#include "core/registry.h"

namespace symm::cuda {

struct BenchSetup {
  std::vector<std::vector<const AlgoInfo*>> per_op;  // per op of the options: its algorithms
  bool auto_algo = false;                            // --algo auto
  bool multicast = false;                            // an algorithm needs a multicast address
  std::size_t in_max = 16, out_max = 16;             // the `nccl` baseline's plain buffers
  std::size_t heap = 0;                              // symmetric heap per rank
};

// One rank's bench: a process of a launch, or a thread of an in-process team. Returns 0, or 1
// when a check failed; on an error, aborts the runtime (nothing more waits for a peer) and rethrows.
int bench_rank(const BenchOptions& o, Runtime& rt, const TestRankOverrides& test, const BenchSetup& setup);

}  // namespace symm::cuda
