// The plain-data arguments every collective device program takes (ThunderKittens' `globals`).
#pragma once

#include "core/common.h"
#include "core/mat_args.h"

namespace symm {

// All pointers are this rank's addresses. `in`, `out` and `scratch` lie in symmetric
// memory (every rank has the same buffer at the same offset), so ctx.peer() works on them.
// `in` and `out` must not overlap: the programs read peers' `in` while peers write `out`.
struct CollArgs {
  const void* in = nullptr;  // all_reduce: count; reduce_scatter: count*world; all_gather: count
  void* out = nullptr;       // all_reduce: count; reduce_scatter: count;       all_gather: count*world
  void* scratch = nullptr;   // algorithm-private symmetric scratch (AlgoInfo::scratch_bytes)
  void* out_mc = nullptr;    // multicast address of `out` (NVLS algorithms only)
  std::size_t count = 0;     // elements, as above (NCCL's count / recvcount / sendcount)
  ReduceOp op = ReduceOp::kSum;
  std::size_t stride = 0;  // plan kernels: elements between per-rank slots of scratch (0: count)
  MatArgs mat;             // matrix programs only (core/mat_args.h); empty for collectives
};

}  // namespace symm
