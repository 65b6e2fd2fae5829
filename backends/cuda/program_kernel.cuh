// The one kernel every device program runs as: a block context over the rank's handle, the
// program, then the block's end-of-kernel flush. Shared by kernels.cu (collectives), plans.cu
// (the kernels host plans launch) and calibrate_kernels.cu.
//
// Programmatic dependent launch (PDL, Hopper): launch_program_kernel() may launch with
// cudaLaunchAttributeProgrammaticStreamSerialization, which lets this kernel be launched and its
// blocks be placed while the kernel before it on the stream is still running. Every block
// first waits (griddepcontrol.wait) until that kernel has completed and its memory operations
// are visible, so the program sees exactly what it would after a plain launch; only the launch
// latency overlaps. Right after the wait it allows the next kernel to be launched
// (griddepcontrol.launch_dependents): by then every block of this kernel has been placed (the
// next kernel launches only once all of them have allowed it), so the next kernel's waiting
// blocks can never keep one of ours from becoming resident, which a spin-wait across ranks
// needs. Without the attribute both instructions do nothing.
#pragma once

#include <cuda_runtime.h>

#include "backends/cuda/block_ctx.cuh"
#include "backends/cuda/check.h"
#include "core/coll_args.h"

namespace symm::cuda {

// Both kernels' body: the programmatic-launch wait, a block context over the rank's handle, the
// program, the block's end-of-kernel flush.
template <class P, class T, bool kTraced>
__device__ __forceinline__ void run_program(const DeviceHandle& h, const CollArgs& a, const VerbTraceBuf& trace) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  BlockCtxT<kTraced> ctx(h, trace);
  P::template run<T>(ctx, a);
  ctx.finish();
}

template <class P, class T>
__global__ void __launch_bounds__(512) program_kernel(const __grid_constant__ DeviceHandle h, const CollArgs a) {
  run_program<P, T, false>(h, a, VerbTraceBuf{});
}

// The same program with every block's verbs stamped into `trace` (verb_trace.h): a traced call's
// kernel (launch_program picks it when its trace buffer is set). A kernel of its own, so that
// program_kernel's parameters and code stay exactly what they are without tracing.
template <class P, class T>
__global__ void __launch_bounds__(512)
    traced_program_kernel(const __grid_constant__ DeviceHandle h, const CollArgs a, const VerbTraceBuf trace) {
  run_program<P, T, true>(h, a, trace);
}

// program_kernel<P, T> on `blocks` x `threads` on stream `s`, with PDL when `pdl` (the
// collectives: programmatic_launch(); a host plan's kernels, which follow stream waits and
// copies rather than kernels, launch plainly); traced_program_kernel<P, T> when `trace` has a
// buffer.
template <class P, class T>
void launch_program_kernel(const DeviceHandle& h, const CollArgs& a, int blocks, int threads, cudaStream_t s, bool pdl,
                           const VerbTraceBuf& trace = {}) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(blocks));
  cfg.blockDim = dim3(unsigned(threads));
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  if (trace.stamps)
    SYMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, traced_program_kernel<P, T>, h, a, trace));
  else
    SYMM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, program_kernel<P, T>, h, a));
}

}  // namespace symm::cuda
