#include "backends/cuda/kernels.h"

#include <nccl_device.h>

#include "backends/cuda/block_ctx.cuh"
#include "backends/cuda/check.h"
#include "core/dispatch.h"
#include "core/signal_pad.h"

namespace symm::cuda {
namespace {

template <class P, class T>
__global__ void __launch_bounds__(512) program_kernel(const __grid_constant__ DeviceHandle h, const CollArgs a) {
  __shared__ uint32_t word;
  BlockCtx ctx(h, &word);
  P::template run<T>(ctx, a);
  ctx.finish();
}

__global__ void wait_probe_kernel(const __grid_constant__ DeviceHandle h, uint32_t slot, uint32_t value) {
  __shared__ uint32_t word;
  BlockCtx ctx(h, &word);
  ctx.wait(slot, value, MemOrder::kAcquire);
  ctx.finish();
}

// One thread's worth of reduce_ll (one 16-byte vector, four packets) on a buffer nobody writes.
__global__ void ll_probe_kernel(const __grid_constant__ DeviceHandle h, const void* packets, float* dst,
                                uint32_t epoch) {
  __shared__ uint32_t word;
  BlockCtx ctx(h, &word);
  ctx.reduce_ll<float>(dst, &packets, 1, 4, epoch, ReduceOp::kSum);
  ctx.finish();
}

__global__ void gather_kernel(ncclWindow_t win, int world, void** out) {
  for (int r = threadIdx.x; r < world; r += blockDim.x) out[r] = ncclGetLsaPointer(win, 0, r);
  if (threadIdx.x == 0) out[world] = ncclGetLocalPointer(win, 0);
}

}  // namespace

void launch_program(const AlgoInfo& algo, DType t, const DeviceHandle& h, const CollArgs& a, int blocks,
                    int threads, cudaStream_t s) {
  with_program(algo, [&]<class P>() {
    with_type(t, [&]<class T>() { program_kernel<P, T><<<blocks, threads, 0, s>>>(h, a); });
  });
  SYMM_CUDA_CHECK(cudaGetLastError());
}

void launch_wait_probe(const DeviceHandle& h, uint32_t slot, uint32_t value, cudaStream_t s) {
  wait_probe_kernel<<<1, 32, 0, s>>>(h, slot, value);
  SYMM_CUDA_CHECK(cudaGetLastError());
}

void launch_ll_probe(const DeviceHandle& h, const void* packets, void* dst, uint32_t epoch, cudaStream_t s) {
  ll_probe_kernel<<<1, 32, 0, s>>>(h, packets, static_cast<float*>(dst), epoch);
  SYMM_CUDA_CHECK(cudaGetLastError());
}

void gather_window_bases(ncclWindow_t win, int world, void** out, cudaStream_t s) {
  gather_kernel<<<1, 64, 0, s>>>(win, world, out);
  SYMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symm::cuda
