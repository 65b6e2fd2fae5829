// reduce_scatter.ld_reduce ("pull"): each rank loads its slice from every peer and reduces.
//
//   1. barrier (release/acquire): every rank's `in` (count * world elements) is published
//   2. out[piece] = reduce over r of peer(in, r)[me * count + piece]
//   3. barrier (release/acquire): no rank returns while a peer may still load its `in`
//
// Bytes over NVLink per rank: (world-1)/world * bytes in (bytes = the whole input).
// kOrder is the barriers' ordering (tests instantiate weaker ones).
#pragma once

#include "core/algos/barrier_signal_wait.h"
#include "core/partition.h"

namespace symm {

template <BarrierOrder kOrder = kBarrierAcqRel>
struct ReduceScatterLdReduceT {
  static constexpr Descriptor kDescriptor{.op = Op::kReduceScatter,
                                          .name = "ld_reduce",
                                          .alias = "pull",
                                          .summary = "each rank loads its slice from every peer and reduces"};
  struct Config {
    static constexpr int kBlockLimit = kResidentBlocks;
    static constexpr int kDefaultBlockCap = 64;
    static constexpr std::size_t kBytesPerBlock = 16 << 10;
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world();
    const Range piece = split_aligned<T>(a.count, ctx.blocks(), ctx.block());
    const T* in = static_cast<const T*>(a.in) + std::size_t(me) * a.count + piece.begin;
    const T* srcs[Ctx::kWorldLimit];
    for (int r = 0; r < n; ++r) srcs[r] = ctx.peer(in, r);

    barrier(ctx, kOrder);
    if (piece.count) ctx.template reduce<T>(static_cast<T*>(a.out) + piece.begin, srcs, n, piece.count, a.op);
    barrier(ctx, kOrder);
  }
};
using ReduceScatterLdReduce = ReduceScatterLdReduceT<>;

}  // namespace symm
