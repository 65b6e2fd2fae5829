// reduce_scatter.st_ll_reduce ("push_ll"): send slice q of the input to rank q as flagged
// packets; each rank reduces the `world` packet buffers it received. No barrier.
//
//   1. e = advance(counter[block][2])
//   2. put_ll(peer(slot(e, me), q), in[q * count + piece], e)   for every rank q
//   3. out[piece] = reduce_ll over r of slot(e, r)               spins until each packet has e
//
// Small messages only (LlLayout::kPieceBytes per block of the per-rank output).
#pragma once

#include "core/algos/ll_layout.h"
#include "core/coll_args.h"
#include "core/partition.h"

namespace symm {

struct ReduceScatterStLlReduce {
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
      const int q = (me + i) % n;
      ctx.put_ll(ctx.peer(LlLayout::slot(a.scratch, n, b, e, me), q), in + std::size_t(q) * a.count, bytes, e);
    }
    const void* srcs[kMaxWorld];
    for (int r = 0; r < n; ++r) srcs[r] = LlLayout::slot(a.scratch, n, b, e, r);
    ctx.template reduce_ll<T>(static_cast<T*>(a.out) + piece.begin, srcs, n, piece.count, e, a.op);
  }
};

}  // namespace symm
