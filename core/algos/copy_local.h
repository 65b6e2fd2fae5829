// copy_local: a plan's kernel, not a collective of its own. The blocks copy `count` elements of
// `in` to `out` on this rank (HBM to HBM):
//
//   out[i] = in[i]
//
// The copy-engine all-gathers write their own slot with it rather than with a copy engine: on
// 2x H100 (experiments/results/h100x2/floors_feede3c) a 256 MiB all_gather.ce_st in one copy per
// peer took 392 us where the bare two-way copy took 346, about what the 128 MiB local
// cudaMemcpyAsync takes on its own: the local copy queued with the peer copy instead of beside it.
// SMs copy beside the copy engines. No signal, no wait: the plan orders and joins it.
#pragma once

#include "core/coll_args.h"
#include "core/partition.h"
#include "core/verbs.h"

namespace symm {

// A block per 128 KiB, at most 64 blocks by default (a plan may ask for up to kResidentBlocks): a
// block's copy runs at tens of GB/s (the machine
// files' block_GBps), so the local copy needs many blocks to finish within the peer copies' time.
struct CopyLocal : PlanKernel<64, (128 << 10)> {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const Range piece = split_aligned<T>(a.count, ctx.blocks(), ctx.block());
    if (!piece.count) return;
    ctx.copy(static_cast<T*>(a.out) + piece.begin, static_cast<const T*>(a.in) + piece.begin, piece.count * sizeof(T));
  }
};

}  // namespace symm
