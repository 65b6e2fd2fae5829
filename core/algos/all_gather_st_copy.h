// all_gather.st_copy ("push_copy"): every rank pushes its input into every peer's scratch, then
// each copies the pieces it received into its output, locally: all_gather.st without its entry
// barrier, as all_reduce.st_reduce is an all-reduce without one.
//
//   1. e = advance(counter[block][1])               this block's epoch (st_reduce's counter)
//   2. peer(slot(e, me), r) = in[piece] for every peer r (stores, posted)
//      out[me * count + piece] = in[piece]          my own part, locally
//   3. signal every peer flags[1][block][me] := e    (release: the stores above land first)
//   4. wait my flags[1][block][r] >= e for every peer (acquire)
//   5. out[r * count + piece] = slot(e, r) for every peer r (local loads and stores)
//
// all_gather.st stores straight into the peers' outputs, so it must first know that every peer
// has entered the call (no longer reads the `out` it had): a barrier, whose release fence is the
// most expensive verb of a small call (experiments/tables/verbs_h100x4.md: two barriers were ~8 of
// its 11 us at 64K on 4x H100). Here the pushes land in core/algos/block_regions.h's fixed,
// double-buffered per-block regions, which says why a rank never overwrites a half a peer is still
// reading, so one flag trip is enough; the price is a local copy of what arrived. The regions are
// its own (core/heap_layout.cpp: a fixed scratch region per program); it shares st_reduce's
// counter and flag channel, so the values on that channel only grow whichever of the two runs,
// and the regions' argument (a peer's flag of the call before, epoch e-1 on this counter) holds
// across both. Each block carries at most BlockRegions::kSlotBytes of a rank's input (2 MiB per
// rank at 64 blocks).
//
// Bytes over NVLink per rank: (world-1)/world * bytes (bytes = the whole output), as all_gather.st.
#pragma once

#include "core/algos/all_reduce_st_reduce.h"
#include "core/algos/block_regions.h"
#include "core/partition.h"

namespace symm {

struct AllGatherStCopy {
  static constexpr Descriptor kDescriptor{
      .op = Op::kAllGather,
      .name = "st_copy",
      .alias = "push_copy",
      .summary = "push input into every peer's scratch (release), copy the received pieces into out locally"};
  // st_reduce's regions, block limit, counter and flag channel; all_gather.st's blocks per size.
  struct Config : AllReduceStReduce::Config {
    static constexpr int kDefaultBlockCap = 64;
    static constexpr std::size_t kBytesPerBlock = 8 << 10;
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world(), b = ctx.block();
    const Range piece = split_aligned<T>(a.count, ctx.blocks(), b);
    const uint32_t e = ctx.advance(pad::counter(b, Config::kCounter));
    const T* in = static_cast<const T*>(a.in) + piece.begin;
    T* out = static_cast<T*>(a.out) + piece.begin;
    char* mine = BlockRegions::slot(a.scratch, n, b, e, me);

    const std::size_t bytes = piece.count * sizeof(T);
    for (int i = 1; i < n && bytes; ++i) ctx.copy(ctx.peer(mine, (me + i) % n), in, bytes);
    if (bytes) ctx.copy(out + std::size_t(me) * a.count, in, bytes);
    for (int i = 1; i < n; ++i) ctx.signal((me + i) % n, pad::flag(Config::kChannel, b, me), e, MemOrder::kRelease);
    for (int i = 1; i < n; ++i)
      ctx.wait(pad::flag(Config::kChannel, b, signal_order_peer(me, i, n)), e, MemOrder::kAcquire);
    for (int i = 1; i < n && bytes; ++i) {
      const int r = (me + i) % n;
      ctx.copy(out + std::size_t(r) * a.count, BlockRegions::slot(a.scratch, n, b, e, r), bytes);
    }
  }
};

}  // namespace symm
