#include "backends/cuda/team_run.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/plan_exec.h"
#include "backends/cuda/rank_memory.h"
#include "backends/cuda/team.h"
#include "backends/cuda/tile_fused.h"

namespace symm::cuda {

int run_in_process(int world, std::size_t heap_bytes, unsigned long long timeout_cycles,
                   const std::function<int(Runtime&)>& rank_main) {
  if (auto why = team_world_refusal(world)) fail(ErrorCode::kInvalidArgument, *why);
  int gpus = 0;
  SYMM_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  // No programmatic dependent launch in a team: one rank's next kernel, placed early, could hold
  // the slots another rank's current kernel needs on the same GPU, while that kernel spins for it.
  set_programmatic_launch(false);
  // Every kernel of the device programs and host plans loaded now, while nothing runs: a module
  // loaded lazily at its first launch may synchronize the context, which would wait for a peer's
  // kernel spinning for this rank (the commands also set CUDA_MODULE_LOADING=EAGER).
  for (int g = 0; g < team_gpus_used(world, gpus); ++g) {
    SYMM_CUDA_CHECK(cudaSetDevice(g));
    preload_programs();
    preload_plan_programs();
    preload_tile_programs();
  }
  std::vector<std::unique_ptr<RankMemory>> mem = RankMemory::in_process(world, gpus, heap_bytes);
  Team team(world);
  // With a rank gone, each other rank's device waits end within the wait bound and its host
  // waits (streams, plan flags) within theirs: well inside this.
  constexpr double kStopBoundS = 120.0;
  try {
    return run_team(
        team,
        [&](int r) {
          Runtime rt(team, *mem[std::size_t(r)], timeout_cycles);
          try {
            return rank_main(rt);
          } catch (...) {
            rt.abort();  // its destructor then frees nothing that could wait for the device
            throw;
          }
        },
        kStopBoundS,
        [](const std::string& why) {
          std::fprintf(stderr, "symmcoll: error: %s; exiting\n", why.c_str());
          std::fflush(stderr);
          std::_Exit(1);
        });
  } catch (...) {
    for (auto& m : mem) m->leak();
    throw;
  }
}

void print_team_header(const Runtime& rt) {
  if (rt.rank() != 0) return;
  int gpus = 0;
  SYMM_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  const char* loading = std::getenv("CUDA_MODULE_LOADING");
  const char* connections = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  std::printf(
      "# in-process team: %d ranks on %d GPU(s) (%s), ranks round-robin, %d on this GPU; plain device memory, "
      "no NCCL (rows checked against float64 only); host plans' flag waits %s; CUDA_MODULE_LOADING=%s "
      "CUDA_DEVICE_MAX_CONNECTIONS=%s\n",
      rt.world(), team_gpus_used(rt.world(), gpus), rt.device_name().c_str(), rt.handle().gpu_ranks,
      plan_waits_in_kernels(rt.handle()) ? "in kernels (outside team graphs)" : "as stream memory operations",
      loading ? loading : "(unset)", connections ? connections : "(unset: 8)");
  std::fflush(stdout);
}

}  // namespace symm::cuda
