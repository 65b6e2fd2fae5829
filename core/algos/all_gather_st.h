// all_gather.st ("push"): each rank stores its input into its slot of every rank's output.
//
//   1. barrier (release/acquire): every rank has entered the call, so it no longer reads
//      the `out` we are about to overwrite
//   2. peer(out, r)[me * count + piece] = in[piece] for every rank r (itself included)
//   3. barrier (release/acquire): every rank's stores into my `out` have landed
//
// all_gather.ld ("pull") loads instead:
//   1. barrier (release/acquire): every rank's `in` is published
//   2. out[r * count + piece] = peer(in, r)[piece] for every rank r
//   3. barrier (release/acquire): no rank returns while a peer may still load its `in`
//
// Bytes over NVLink per rank: (world-1)/world * bytes (bytes = the whole output).
#pragma once

#include "core/algos/barrier_signal_wait.h"
#include "core/partition.h"

namespace symm {

template <bool kByStores>
struct AllGatherT {
  struct Config {
    static constexpr int kMaxBlocks = kSymmMaxBlocks;
    static constexpr int kDefaultMaxBlocks = 64;
    static constexpr std::size_t kBytesPerBlock = 8 << 10;
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world();
    const Range piece = split_vec<T>(a.count, ctx.blocks(), ctx.block());
    const std::size_t bytes = piece.count * sizeof(T);
    const T* in = static_cast<const T*>(a.in) + piece.begin;
    T* out = static_cast<T*>(a.out) + piece.begin;

    barrier(ctx, kBarrierAcqRel);
    for (int i = 0; i < n && bytes; ++i) {
      const int r = (me + i) % n;
      if constexpr (kByStores)
        ctx.copy(ctx.peer(out + std::size_t(me) * a.count, r), in, bytes);
      else
        ctx.copy(out + std::size_t(r) * a.count, ctx.peer(in, r), bytes);
    }
    barrier(ctx, kBarrierAcqRel);
  }
};
using AllGatherSt = AllGatherT<true>;
using AllGatherLd = AllGatherT<false>;

}  // namespace symm
