#include "backends/cuda/residency.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>

#include "backends/cuda/check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/team.h"

namespace symm::cuda {
namespace {

struct Fit {
  int per_sm = 0, sms = 0;
};

// Per (device, kernel, threads), cached per thread: a launch in a timing loop pays a map lookup.
// The query also loads the kernel's module if it is not yet (a lazily loaded module may need the
// context to synchronize, which would wait for peers' spinning kernels: better here, before the
// launch, than in it; run_team's callers also load every module up front, CUDA_MODULE_LOADING).
Fit fit_of(const void* kernel, int threads) {
  thread_local std::map<std::tuple<int, const void*, int>, Fit> cache;
  int dev = 0;
  SYMM_CUDA_CHECK(cudaGetDevice(&dev));
  const auto key = std::make_tuple(dev, kernel, threads);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Fit f;
  SYMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&f.per_sm, kernel, threads, 0));
  SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&f.sms, cudaDevAttrMultiProcessorCount, dev));
  cache[key] = f;
  return f;
}

}  // namespace

int team_fit_blocks(const void* kernel, const DeviceHandle& h, int threads) {
  const int ranks = h.team_gpu_ranks;  // alike on every rank of the team (>= its own GPU's gpu_ranks)
  if (ranks <= 1) return INT_MAX;
  const Fit f = fit_of(kernel, threads);
  return team_max_blocks(ranks, f.per_sm, f.sms);
}

LaunchPlan plan_launch_resident(const AlgoInfo& a, DType t, std::size_t bytes, int world, int blocks, int threads,
                                const DeviceHandle& h) {
  LaunchPlan p = plan_launch(a, t, bytes, world, blocks, threads);
  if (h.team_gpu_ranks <= 1 || blocks > 0 || a.plan) return p;
  const int fit = program_fit_blocks(a, t, h, p.threads);
  if (p.blocks <= fit) return p;
  try {
    return plan_launch(a, t, bytes, world, std::max(fit, 1), threads);
  } catch (const Error& e) {
    fail(ErrorCode::kUnsupported, a.id + ": " + std::to_string(h.team_gpu_ranks) + " ranks on one GPU fit " +
                                      std::to_string(fit) + " blocks each, fewer than it runs at " +
                                      std::to_string(bytes) + " bytes (" + e.what() + ")");
  }
}

void check_residency_slow(const void* kernel, const DeviceHandle& h, int blocks, int threads, const char* what) {
  const Fit f = fit_of(kernel, threads);
  if (auto why = residency_refusal(what, h.gpu_ranks, blocks, threads, f.per_sm, f.sms))
    fail(ErrorCode::kUnsupported, "rank " + std::to_string(h.rank) + ": " + *why);
}

}  // namespace symm::cuda
