// all_reduce.st_ll_reduce ("one_shot_ll"): push the input as flagged packets into every
// rank's scratch, then reduce the `world` packet buffers received, with no barrier at all.
//
//   1. e = advance(counter[block][2])                 this block's epoch (core/algos/ll_layout.h)
//   2. put_ll(peer(slot(e, me), r), in[piece], e)     for every rank r, itself included
//   3. out[piece] = reduce_ll over r of slot(e, r)    spins until each packet carries e
//
// One one-way trip of data+flag, no fence, no end barrier: the latency floor for small
// messages. Costs twice the bytes on the wire (half of each packet is the epoch), so it is
// limited to LlLayout::kPieceBytes per block (1 MiB at 64 blocks).
#pragma once

#include "core/algos/ll_layout.h"
#include "core/coll_args.h"
#include "core/partition.h"

namespace symm {

struct AllReduceStLlReduce {
  struct Config {
    static constexpr int kMaxBlocks = LlLayout::kMaxBlocks;
    static constexpr int kDefaultMaxBlocks = LlLayout::kMaxBlocks;
    static constexpr std::size_t kBytesPerBlock = 8 << 10;
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world(), b = ctx.block();
    const Range piece = split_vec<T>(a.count, ctx.blocks(), b);
    const uint32_t e = ctx.advance(pad::counter(b, LlLayout::kCounter));
    const std::size_t bytes = piece.count * sizeof(T);
    const T* in = static_cast<const T*>(a.in) + piece.begin;

    for (int i = 0; i < n; ++i) {
      const int r = (me + i) % n;
      ctx.put_ll(ctx.peer(LlLayout::slot(a.scratch, n, b, e, me), r), in, bytes, e);
    }
    const void* srcs[kMaxWorld];
    for (int r = 0; r < n; ++r) srcs[r] = LlLayout::slot(a.scratch, n, b, e, r);
    ctx.template reduce_ll<T>(static_cast<T*>(a.out) + piece.begin, srcs, n, piece.count, e, a.op);
  }
};

}  // namespace symm
