// all_reduce.rs_ld_ag_st ("two_shot"): reduce-scatter by loads, then all-gather by stores.
//
//   1. barrier (release/acquire): every rank's `in` is published
//   2. RS by loads: rank me owns slice me; out[slice me][piece] = reduce over r of
//      peer(in, r)[slice me][piece]
//   3. AG by stores: peer(out, r)[slice me][piece] = out[slice me][piece] for every peer r
//   4. barrier (release/acquire): the stores of step 3 have landed everywhere, and no rank
//      returns while a peer may still load its `in`
//
// Bytes over NVLink per rank: 2 * (world-1)/world * bytes (in and out each). Latency: two
// flag trips, one load trip. Best for large messages.
//
// AllReduceRsLdAgT is also all_reduce.rs_ld_ag_ld (all_reduce_rs_ld_ag_ld.h), step 3 by loads.
// The other template parameters are for tests: kOrder is the barriers' ordering, kEndBarrier
// false drops the last barrier.
#pragma once

#include "core/algos/barrier_signal_wait.h"
#include "core/partition.h"

namespace symm {

template <bool kGatherByStores, BarrierOrder kOrder = kBarrierAcqRel, bool kEndBarrier = true>
struct AllReduceRsLdAgT {
  struct Config {
    static constexpr int kBlockLimit = kResidentBlocks;
    static constexpr int kDefaultBlockCap = 64;
    static constexpr std::size_t kBytesPerBlock = 64 << 10;
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world(), nb = ctx.blocks(), b = ctx.block();
    const T* in = static_cast<const T*>(a.in);
    T* out = static_cast<T*>(a.out);
    auto piece_of = [&](int slice) { return split_aligned<T>(split_aligned<T>(a.count, n, slice), nb, b); };

    barrier(ctx, kOrder);
    const Range mine = piece_of(me);
    const std::size_t bytes = mine.count * sizeof(T);
    if (bytes) {
      const T* srcs[Ctx::kWorldLimit];
      for (int r = 0; r < n; ++r) srcs[r] = ctx.peer(in + mine.begin, r);
      ctx.template reduce<T>(out + mine.begin, srcs, n, mine.count, a.op);
    }
    if constexpr (kGatherByStores) {
      for (int i = 1; i < n && bytes; ++i) ctx.copy(ctx.peer(out + mine.begin, (me + i) % n), out + mine.begin, bytes);
      if constexpr (kEndBarrier) barrier(ctx, kOrder);
    } else {
      barrier(ctx, kOrder);
      for (int i = 1; i < n; ++i) {
        const int r = (me + i) % n;
        const Range theirs = piece_of(r);
        if (theirs.count) ctx.copy(out + theirs.begin, ctx.peer(out + theirs.begin, r), theirs.count * sizeof(T));
      }
      if constexpr (kEndBarrier) barrier(ctx, kOrder);
    }
  }
};

struct AllReduceRsLdAgSt : AllReduceRsLdAgT<true> {
  static constexpr Descriptor kDescriptor{.op = Op::kAllReduce,
                                          .name = "rs_ld_ag_st",
                                          .alias = "two_shot",
                                          .summary = "reduce-scatter by loads, all-gather by stores"};
};

}  // namespace symm
