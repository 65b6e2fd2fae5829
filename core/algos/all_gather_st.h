// all_gather.st ("push"): each rank stores its input into its slot of every rank's output.
//
//   1. barrier (release/acquire): every rank has entered the call, so it no longer reads
//      the `out` we are about to overwrite
//   2. peer(out, r)[me * count + piece] = in[piece] for every rank r (itself included)
//   3. barrier (release/acquire): every rank's stores into my `out` have landed
//
// Bytes over NVLink per rank: (world-1)/world * bytes (bytes = the whole output).
// AllGatherT is also all_gather.ld (all_gather_ld.h), which loads instead of storing. kOrder is
// the barriers' ordering: tests instantiate weaker ones to show the simulator catches them.
#pragma once

#include "core/algos/barrier_signal_wait.h"
#include "core/partition.h"

namespace symm {

template <bool kByStores, BarrierOrder kOrder = kBarrierAcqRel>
struct AllGatherT {
  struct Config {
    static constexpr int kBlockLimit = kResidentBlocks;
    static constexpr int kDefaultBlockCap = 64;
    static constexpr std::size_t kBytesPerBlock = 8 << 10;
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world();
    const Range piece = split_aligned<T>(a.count, ctx.blocks(), ctx.block());
    const std::size_t bytes = piece.count * sizeof(T);
    const T* in = static_cast<const T*>(a.in) + piece.begin;
    T* out = static_cast<T*>(a.out) + piece.begin;

    barrier(ctx, kOrder);
    for (int i = 0; i < n && bytes; ++i) {
      const int r = (me + i) % n;
      if constexpr (kByStores)
        ctx.copy(ctx.peer(out + std::size_t(me) * a.count, r), in, bytes);
      else
        ctx.copy(out + std::size_t(r) * a.count, ctx.peer(in, r), bytes);
    }
    barrier(ctx, kOrder);
  }
};

struct AllGatherSt : AllGatherT<true> {
  static constexpr Descriptor kDescriptor{.op = Op::kAllGather,
                                          .name = "st",
                                          .alias = "push",
                                          .summary = "each rank stores its input into every rank's output"};
};

}  // namespace symm
