// Scratch layout shared by the flagged-packet (LL) programs.
//
//   scratch = region[kMaxBlocks]        region b is written only by block b of every rank
//   region  = half[2]                   half e & 1 carries the call with epoch e
//   half    = slot[world]               slot r holds rank r's packets for this block
//   slot    = ll_bytes(kPieceBytes)     at most kPieceBytes of data per block and source
//
// Why per-block regions: epochs come from each block's own counter (advance), so a region
// only ever sees block b's epochs, which only grow; a stale packet can never carry the epoch
// being waited for, whatever block counts earlier calls used.
// Why two halves: a rank starts epoch e only after finishing e-1, which needed every peer's
// packets of e-1, which every peer sent after it had finished reading e-2, the last user of
// half e & 1. This holds only if every call exchanges packets with every peer on every block:
// LL programs therefore refuse block counts that would leave a block with nothing to send
// (AlgoInfo::ll_piece_bytes, check_args).
#pragma once

#include "core/signal_pad.h"
#include "core/verbs.h"

namespace symm {

struct LlLayout {
  static constexpr int kMaxBlocks = 64;
  static constexpr std::size_t kPieceBytes = 16 << 10;
  static constexpr int kCounter = 2;  // pad::counter(block, kCounter) gives the epochs

  SYMM_HD static constexpr std::size_t slot_bytes() { return ll_bytes(kPieceBytes); }
  SYMM_HD static constexpr std::size_t scratch_bytes(int world) {
    return std::size_t(kMaxBlocks) * 2 * std::size_t(world) * slot_bytes();
  }
  SYMM_HD static char* slot(void* scratch, int world, int block, uint32_t epoch, int from) {
    const std::size_t i = (std::size_t(block) * 2 + (epoch & 1)) * std::size_t(world) + std::size_t(from);
    return static_cast<char*>(scratch) + i * slot_bytes();
  }
};

// The Config every LL program shares.
struct LlConfig {
  static constexpr int kMaxBlocks = LlLayout::kMaxBlocks;
  static constexpr int kDefaultMaxBlocks = LlLayout::kMaxBlocks;
  // From the LL block-count sweep on 4x H200 (tune_h200x4.csv): 1 KiB per block (per
  // source piece) was at, or within ~0.1 us of, the best count at every size of all three ops.
  static constexpr std::size_t kBytesPerBlock = 1 << 10;
};

// Step 1 of every LL program: this block's epoch for this call.
template <class Ctx>
SYMM_HD uint32_t ll_epoch(Ctx& ctx) {
  return ctx.advance(pad::counter(ctx.block(), LlLayout::kCounter));
}

// Step 2: send this block's packets of epoch e to every rank q (itself included, starting
// with the next rank so no rank is everyone's first target); rank q gets src_for(q).
template <class Ctx, class SrcFor>
SYMM_HD void ll_send(Ctx& ctx, void* scratch, uint32_t e, std::size_t bytes, SrcFor src_for) {
  const int me = ctx.rank(), n = ctx.world();
  char* mine = LlLayout::slot(scratch, n, ctx.block(), e, me);
  void* dsts[kMaxWorld];
  const void* srcs[kMaxWorld];
  for (int i = 0; i < n; ++i) {
    const int q = (me + i) % n;
    dsts[i] = ctx.peer(mine, q);
    srcs[i] = src_for(q);
  }
  ctx.put_ll(dsts, srcs, n, bytes, e);
}

// The packet buffers of epoch e this block receives, srcs[r] from rank r.
template <class Ctx>
SYMM_HD void ll_received(Ctx& ctx, void* scratch, uint32_t e, const void** srcs) {
  for (int r = 0; r < ctx.world(); ++r) srcs[r] = LlLayout::slot(scratch, ctx.world(), ctx.block(), e, r);
}

}  // namespace symm
