// Helpers shared by the flagged-packet (LL) programs. Their scratch is core/algos/
// block_regions.h (a slot of BlockRegions::kSlotBytes holds ll_bytes(kPieceBytes) of packets);
// that header says why stale packets are never taken and why two halves suffice.
#pragma once

#include "core/algos/block_regions.h"
#include "core/signal_pad.h"
#include "core/verbs.h"

namespace symm {

struct LlLayout : BlockRegions {
  static constexpr std::size_t kPieceBytes = kSlotBytes / 2;  // data bytes per slot
  static constexpr int kCounter = 2;                          // pad::counter(block, kCounter) gives the epochs
  static_assert(ll_bytes(kPieceBytes) == kSlotBytes);
};

// The Config every LL program shares.
struct LlConfig {
  static constexpr int kBlockLimit = LlLayout::kRegions;
  static constexpr int kDefaultBlockCap = LlLayout::kRegions;
  // From the LL block-count sweep on 4x H200 (tune_h200x4.csv): 1 KiB per block (per
  // source piece) was at, or within ~0.1 us of, the best count at every size of all three ops.
  static constexpr std::size_t kBytesPerBlock = 1 << 10;
  static constexpr std::size_t kPieceBytes = LlLayout::kPieceBytes;
};

// Step 1 of every LL program: this block's epoch for this call.
template <class Ctx>
SYMM_HD uint32_t ll_epoch(Ctx& ctx) {
  return ctx.advance(pad::counter(ctx.block(), LlLayout::kCounter));
}

// Step 2: send this block's packets of epoch e to every peer q, starting with the next rank so no
// rank is everyone's first target, and to itself when `self` (else its own part enters its
// reduction as plain data, step 3); rank q gets src_for(q).
template <class Ctx, class SrcFor>
SYMM_HD void ll_send(Ctx& ctx, void* scratch, uint32_t e, std::size_t bytes, SrcFor src_for, bool self) {
  const int me = ctx.rank(), n = ctx.world();
  char* mine = LlLayout::slot(scratch, n, ctx.block(), e, me);
  void* dsts[Ctx::kWorldLimit];
  const void* srcs[Ctx::kWorldLimit];
  int m = 0;
  for (int i = self ? 0 : 1; i < n; ++i) {
    const int q = (me + i) % n;
    dsts[m] = ctx.peer(mine, q);
    srcs[m++] = src_for(q);
  }
  ctx.put_ll(dsts, srcs, m, bytes, e);
}

// Step 3's sources in rank order: srcs[r] the packet buffer of epoch e this block receives from
// rank r; srcs[me] = own (this rank's own part as plain data, reduce_ll's `plain` source) unless
// own is null (then its own packet buffer). Rank order on every rank: every rank sums the same
// values in the same order.
template <class Ctx>
SYMM_HD void ll_received(Ctx& ctx, void* scratch, uint32_t e, const void* own, const void** srcs) {
  for (int r = 0; r < ctx.world(); ++r)
    srcs[r] = r == ctx.rank() && own ? own : LlLayout::slot(scratch, ctx.world(), ctx.block(), e, r);
}

}  // namespace symm
