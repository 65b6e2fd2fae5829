// all_reduce.st_reduce ("one_shot_push"): every rank pushes its input into every peer's
// scratch, then each reduces the `world` copies it received from local memory.
//
//   1. e = advance(counter[block][1])               this block's epoch
//   2. peer(slot(e, me), r) = in[piece] for every rank r (stores, posted)
//   3. signal every peer flags[1][block][me] := e    (release: the stores above land first)
//   4. wait my flags[1][block][r] >= e for every peer (acquire)
//   5. out[piece] = reduce over r of slot(e, r)      (local loads)
//
// One flag trip and no end barrier: the scratch is core/algos/block_regions.h's fixed,
// double-buffered per-block regions, which says why a rank never overwrites a half a peer is
// still reading. Each block carries at most BlockRegions::kSlotBytes (2 MiB at 64 blocks).
// The template parameters are for tests, which instantiate broken variants: kSignal / kWait are
// the flags' orderings, kBothHalves false uses half 0 of the regions in every call.
#pragma once

#include "core/algos/barrier_signal_wait.h"
#include "core/algos/block_regions.h"
#include "core/partition.h"

namespace symm {

template <MemOrder kSignal = MemOrder::kRelease, MemOrder kWait = MemOrder::kAcquire, bool kBothHalves = true>
struct AllReduceStReduceT {
  static_assert(is_signal_order(kSignal) && is_wait_order(kWait), "outside the verb contract (core/verbs.h)");
  static constexpr Descriptor kDescriptor{
      .op = Op::kAllReduce,
      .name = "st_reduce",
      .alias = "one_shot_push",
      .summary = "push input into every peer's scratch (release), reduce the received copies locally"};
  struct Config {
    static constexpr int kBlockLimit = BlockRegions::kRegions;
    static constexpr int kDefaultBlockCap = 32;
    static constexpr std::size_t kBytesPerBlock = 2 << 10;
    static constexpr std::size_t kPieceBytes = BlockRegions::kSlotBytes;
    static constexpr int kChannel = 1;
    static constexpr int kCounter = 1;
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world(), b = ctx.block();
    const Range piece = split_aligned<T>(a.count, ctx.blocks(), b);
    const uint32_t e = ctx.advance(pad::counter(b, Config::kCounter));
    const uint32_t half = kBothHalves ? e : 0;  // BlockRegions::slot takes the half from e & 1
    const T* in = static_cast<const T*>(a.in) + piece.begin;
    char* mine = BlockRegions::slot(a.scratch, n, b, half, me);

    const std::size_t bytes = piece.count * sizeof(T);
    for (int i = 0; i < n; ++i) {
      const int r = (me + i) % n;
      if (bytes) ctx.copy(ctx.peer(mine, r), in, bytes);
    }
    for (int i = 1; i < n; ++i) ctx.signal((me + i) % n, pad::flag(Config::kChannel, b, me), e, kSignal);
    for (int i = 1; i < n; ++i) ctx.wait(pad::flag(Config::kChannel, b, signal_order_peer(me, i, n)), e, kWait);

    const T* srcs[Ctx::kWorldLimit];
    for (int r = 0; r < n; ++r) srcs[r] = reinterpret_cast<const T*>(BlockRegions::slot(a.scratch, n, b, half, r));
    if (piece.count) ctx.template reduce<T>(static_cast<T*>(a.out) + piece.begin, srcs, n, piece.count, a.op);
  }
};
using AllReduceStReduce = AllReduceStReduceT<>;

}  // namespace symm
