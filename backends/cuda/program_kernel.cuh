// The one kernel every device program runs as: a block context over the rank's handle, the
// program, then the block's end-of-kernel flush. Shared by kernels.cu (collectives) and
// plans.cu (the kernels host plans launch).
#pragma once

#include "backends/cuda/block_ctx.cuh"
#include "core/coll_args.h"

namespace symm::cuda {

template <class P, class T>
__global__ void __launch_bounds__(512) program_kernel(const __grid_constant__ DeviceHandle h, const CollArgs a) {
  __shared__ uint32_t word;
  BlockCtx ctx(h, &word);
  P::template run<T>(ctx, a);
  ctx.finish();
}

}  // namespace symm::cuda
