// The SM clock a traced call's cycle counts are converted with (trace_out.h, verb_trace.h).
#include <cuda_runtime.h>

#include "apps/harness/cuda/trace_out.h"
#include "backends/cuda/check.h"

namespace symm::cuda {
namespace {

// One thread spins for `ns` of the global timer and writes the cycles and the nanoseconds that
// passed: long enough that the timer's coarse ticks do not matter (200 us: < 0.1 % at 100 ns).
__global__ void sm_clock_probe(unsigned long long ns, unsigned long long* out) {
  unsigned long long g0, g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  const long long c0 = clock64();
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  } while (g1 - g0 < ns);
  const long long c1 = clock64();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = g1 - g0;
}

}  // namespace

double measure_sm_ghz(cudaStream_t s, unsigned long long* scratch) {
  unsigned long long h[2] = {0, 0};
  sm_clock_probe<<<1, 1, 0, s>>>(200000ull, scratch);
  SYMM_CUDA_CHECK(cudaGetLastError());
  SYMM_CUDA_CHECK(cudaMemcpyAsync(h, scratch, sizeof h, cudaMemcpyDeviceToHost, s));
  SYMM_CUDA_CHECK(cudaStreamSynchronize(s));
  return h[1] ? double(h[0]) / double(h[1]) : 0.0;  // 0: no time passed (the caller fails)
}

}  // namespace symm::cuda
