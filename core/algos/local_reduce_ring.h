// local_reduce_ring: a plan's kernel, not a collective of its own. It reduces what the copy
// engines brought into this rank's scratch, in ring order from this rank:
//
//   out[i] = op(in[i], slot[me+1][i], slot[me+2][i], ..., slot[me-1][i])    (indices mod world)
//
// where `in` is this rank's own contribution (already offset to its slice), slot[r] =
// scratch + r * stride elements is what rank r sent (stride = CollArgs::stride, or count when
// 0). Every rank starts its accumulation with its own data and walks the ring the same way, so
// the copy-engine reduce-scatter adds in the order a ring reduce-scatter would. Local loads
// only: no signal, no wait; the plan orders it after the data flags it waited for.
#pragma once

#include "core/coll_args.h"
#include "core/partition.h"
#include "core/verbs.h"

namespace symm {

struct LocalReduceRing : PlanKernel<32, (256 << 10)> {
  // The cap of a plan whose reduce runs alone after every copy has landed (reduce_scatter ce;
  // mm_rs ce where each owner's rows are one chunk): HBM-bound, it gains up to 64 blocks and no more (2x H100: the
  // reduce-scatter 3-6 % faster at 16M-256M, mm_rs 8B / 70B 3-4 %; experiments/results/h100x2/reduce_blocks_8d5ec12).
  // A reduce that overlaps copies chunk by chunk (ce_overlap) keeps 32: at 256M in a graph it ran
  // 4 % slower with 64.
  static constexpr int kAloneBlockCap = 64;
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world();
    const std::size_t stride = a.stride ? a.stride : a.count;
    const Range piece = split_aligned<T>(a.count, ctx.blocks(), ctx.block());
    if (!piece.count) return;
    const T* srcs[Ctx::kWorldLimit];
    srcs[0] = static_cast<const T*>(a.in) + piece.begin;
    for (int j = 1; j < n; ++j)
      srcs[j] = static_cast<const T*>(a.scratch) + std::size_t((me + j) % n) * stride + piece.begin;
    ctx.template reduce<T>(static_cast<T*>(a.out) + piece.begin, srcs, n, piece.count, a.op);
  }
};

}  // namespace symm
