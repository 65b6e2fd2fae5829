#include "apps/harness/cuda/plan_wait_probe.h"

#include <cuda_runtime.h>

#include <chrono>

#include "backends/cuda/check.h"
#include "backends/cuda/team.h"

namespace symm::cuda {

PlanWaitReport probe_stuck_plan_wait(PlanExec& x, Runtime& rt, const std::function<void()>& enqueue, uint32_t stuck,
                                     uint32_t value, double bound_s, const std::string& what) {
  // What releases the stuck stream, made first: with a stream stuck, allocating pinned memory may
  // synchronize the device and never return.
  cudaStream_t s;
  SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  uint32_t* release = nullptr;
  SYMM_CUDA_CHECK(cudaMallocHost(&release, sizeof(uint32_t)));
  *release = value;
  enqueue();
  PlanWaitReport r;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    x.wait_main(bound_s, what);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kTimeout) throw;
    r.report = e.what();
  }
  r.took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.report.empty()) fail(ErrorCode::kInternal, what + ": a wait nobody satisfies was not reported");
  // An in-process team: every rank has reported before any releases (on one H100 at 4 ranks, two
  // ranks' releases issued while the others' watchdogs still looked never returned to the host).
  // (A host-only meeting: Runtime::barrier would first wait for this rank's stuck stream.)
  if (rt.team()) rt.team()->barrier(rt.rank(), what + ": every rank reported");
  SYMM_CUDA_CHECK(cudaMemcpyAsync(rt.handle().pad_local + stuck, release, sizeof(uint32_t), cudaMemcpyHostToDevice, s));
  x.wait_main(10.0, what + ", released");
  SYMM_CUDA_CHECK(cudaStreamSynchronize(s));
  SYMM_CUDA_CHECK(cudaStreamDestroy(s));
  SYMM_CUDA_CHECK(cudaFreeHost(release));
  return r;
}

}  // namespace symm::cuda
