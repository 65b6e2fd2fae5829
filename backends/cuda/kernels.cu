#include <nccl_device.h>

#include "backends/cuda/block_ctx.cuh"
#include "backends/cuda/check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/program_kernel.cuh"
#include "backends/cuda/residency.h"
#include "core/dispatch.h"
#include "core/signal_pad.h"

namespace symm::cuda {
namespace {

__global__ void wait_probe_kernel(const __grid_constant__ DeviceHandle h, uint32_t slot, uint32_t value) {
  BlockCtx ctx(h);
  ctx.wait(slot, value, MemOrder::kAcquire);
  ctx.finish();
}

__global__ void plan_flag_waits_kernel(const __grid_constant__ DeviceHandle h,
                                       const __grid_constant__ PlanFlagWaits w) {
  const int i = int(threadIdx.x);
  uint32_t* f = i < w.n ? h.pad_local + w.slot[i] : nullptr;
  if (f) detail::acquire_flag<true>(h, w.slot[i], w.value[i]);
  __syncthreads();  // every wait has passed before any flag is reset
  if (f) asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(f), "r"(0u) : "memory");
}

// One thread's worth of reduce_ll (one 16-byte vector, four packets) on a buffer nobody writes.
__global__ void ll_probe_kernel(const __grid_constant__ DeviceHandle h, const void* packets, float* dst,
                                uint32_t epoch) {
  BlockCtx ctx(h);
  ctx.reduce_ll<float>(dst, &packets, 1, 4, epoch, ReduceOp::kSum);
  ctx.finish();
}

__global__ void gather_kernel(ncclWindow_t win, int world, void** out) {
  for (int r = threadIdx.x; r < world; r += blockDim.x) out[r] = ncclGetLsaPointer(win, 0, r);
  if (threadIdx.x == 0) out[world] = ncclGetLocalPointer(win, 0);
}

__global__ void multimem_base_kernel(ncclWindow_t win, const ncclDevComm dc, void** out) {
  out[0] = dc.lsaMultimem.mcBasePtr ? ncclGetLsaMultimemPointer(win, 0, dc) : nullptr;
}

}  // namespace

void launch_program(const AlgoInfo& algo, DType t, const DeviceHandle& h, const CollArgs& a, int blocks, int threads,
                    cudaStream_t s, const VerbTraceBuf& trace) {
  with_program(algo, [&]<class P>() {
    with_type(t, [&]<class T>() {
      const void* k = trace.stamps ? reinterpret_cast<const void*>(&traced_program_kernel<P, T>)
                                   : reinterpret_cast<const void*>(&program_kernel<P, T>);
      check_residency(k, h, blocks, threads, algo.id.c_str());
      launch_program_kernel<P, T>(h, a, blocks, threads, s, programmatic_launch(), trace);
    });
  });
}

namespace {
bool g_programmatic_launch = true;
}  // namespace
bool programmatic_launch() { return g_programmatic_launch; }
void set_programmatic_launch(bool on) { g_programmatic_launch = on; }

int program_fit_blocks(const AlgoInfo& algo, DType t, const DeviceHandle& h, int threads) {
  int fit = 0;
  with_program(algo, [&]<class P>() {
    with_type(
        t, [&]<class T>() { fit = team_fit_blocks(reinterpret_cast<const void*>(&program_kernel<P, T>), h, threads); });
  });
  return fit;
}

void preload_programs() {
  for (const AlgoInfo& algo : algorithms()) {
    if (algo.plan || algo.needs_multicast) continue;
    for (DType t : {DType::kBF16, DType::kFP16, DType::kFP32})
      with_program(algo, [&]<class P>() {
        with_type(t, [&]<class T>() {
          cudaFuncAttributes attr;
          SYMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, &program_kernel<P, T>));
        });
      });
  }
  cudaFuncAttributes attr;
  SYMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, &wait_probe_kernel));
  SYMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, &ll_probe_kernel));
  SYMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, &plan_flag_waits_kernel));
}

// No residency check per launch (each is a plan's hot path): one block of 32 threads without
// shared memory fits wherever the team's kernels left any room, which the programs' and tile
// programs' checks keep (team.h: every rank leaves SMs to the others).
void launch_plan_flag_waits(const DeviceHandle& h, const PlanFlagWaits& w, cudaStream_t s) {
  plan_flag_waits_kernel<<<1, 32, 0, s>>>(h, w);
  SYMM_CUDA_CHECK(cudaGetLastError());
}

void launch_wait_probe(const DeviceHandle& h, uint32_t slot, uint32_t value, cudaStream_t s) {
  check_residency(reinterpret_cast<const void*>(&wait_probe_kernel), h, 1, 32, "the wait probe");
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

namespace symm::cuda {

void* nccl_lsa_multimem_base(ncclComm_t comm, ncclWindow_t win, cudaStream_t s, void** devcomm) {
  *devcomm = nullptr;
  ncclDevCommRequirements reqs{};
  reqs.lsaMultimem = true;
  auto* dc = new ncclDevComm{};
  // NCCL refuses (ncclInvalidArgument, "no multicast support") where it has no NVLS: that is
  // an answer (no multicast here), not an error of this program.
  const bool created = ncclDevCommCreate(comm, &reqs, dc) == ncclSuccess;
  if (!created || dc->lsaMultimem.mcBasePtr == nullptr) {
    if (created) ncclDevCommDestroy(comm, dc);
    delete dc;
    return nullptr;
  }
  *devcomm = dc;
  void** dev = nullptr;
  SYMM_CUDA_CHECK(cudaMalloc(&dev, sizeof(void*)));
  multimem_base_kernel<<<1, 1, 0, s>>>(win, *dc, dev);
  SYMM_CUDA_CHECK(cudaGetLastError());
  void* base = nullptr;
  SYMM_CUDA_CHECK(cudaMemcpyAsync(&base, dev, sizeof(void*), cudaMemcpyDeviceToHost, s));
  SYMM_CUDA_CHECK(cudaStreamSynchronize(s));  // one tiny kernel, no wait in it
  SYMM_CUDA_CHECK(cudaFree(dev));
  return base;
}

void nccl_devcomm_destroy(ncclComm_t comm, void* devcomm) {
  auto* dc = static_cast<ncclDevComm*>(devcomm);
  ncclDevCommDestroy(comm, dc);
  delete dc;
}

}  // namespace symm::cuda
