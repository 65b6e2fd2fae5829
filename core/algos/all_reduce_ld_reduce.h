// all_reduce.ld_reduce ("one_shot"): every rank loads every peer's input and reduces locally.
//
//   1. barrier (release/acquire): every rank's `in` is published and visible
//   2. out[piece] = reduce over r of peer(in, r)[piece]      (loads from all ranks)
//   3. barrier (release/acquire): no rank returns (and lets its caller overwrite `in`)
//      while a peer may still be loading it
//
// Bytes over NVLink per rank: (world-1) * bytes in. Latency: two flag trips + one load trip.
// Best for small messages. The template parameters are for tests, which instantiate broken
// variants to show the simulator catches them: kStart and kEnd are the barriers' orderings,
// kEndBarrier false drops step 3.
#pragma once

#include "core/algos/barrier_signal_wait.h"
#include "core/descriptor.h"
#include "core/partition.h"

namespace symm {

template <BarrierOrder kStart = kBarrierAcqRel, BarrierOrder kEnd = kBarrierAcqRel, bool kEndBarrier = true>
struct AllReduceLdReduceT {
  static constexpr Descriptor kDescriptor{.op = Op::kAllReduce,
                                          .name = "ld_reduce",
                                          .alias = "one_shot",
                                          .summary = "barrier; load every peer's input and reduce locally; barrier"};
  struct Config {
    static constexpr int kBlockLimit = kResidentBlocks;
    static constexpr int kDefaultBlockCap = 16;
    static constexpr std::size_t kBytesPerBlock = 16 << 10;
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const Range piece = split_aligned<T>(a.count, ctx.blocks(), ctx.block());
    const T* in = static_cast<const T*>(a.in) + piece.begin;
    T* out = static_cast<T*>(a.out) + piece.begin;
    const T* srcs[Ctx::kWorldLimit];
    for (int r = 0; r < ctx.world(); ++r) srcs[r] = ctx.peer(in, r);

    barrier(ctx, kStart);
    if (piece.count) ctx.template reduce<T>(out, srcs, ctx.world(), piece.count, a.op);
    if constexpr (kEndBarrier) barrier(ctx, kEnd);
  }
};
using AllReduceLdReduce = AllReduceLdReduceT<>;

}  // namespace symm
