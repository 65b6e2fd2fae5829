// all_gather.st_ll ("push_ll"): send the input to every rank as flagged packets; each rank
// unpacks the `world` packet buffers it received into its output. No barrier.
//
//   1. e = advance(counter[block][2])
//   2. put_ll(peer(slot(e, me), q), in[piece], e)              for every rank q
//   3. out[r * count + piece] = reduce_ll(slot(e, r)) (nsrc 1)  for every rank r
//
// Small messages only (LlLayout::kPieceBytes per block of the per-rank input).
#pragma once

#include "core/algos/ll_layout.h"
#include "core/coll_args.h"
#include "core/partition.h"

namespace symm {

struct AllGatherStLl {
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
      ctx.put_ll(ctx.peer(LlLayout::slot(a.scratch, n, b, e, me), q), in, bytes, e);
    }
    for (int i = 0; i < n; ++i) {
      const int r = (me + i) % n;
      const void* src = LlLayout::slot(a.scratch, n, b, e, r);
      ctx.template reduce_ll<T>(static_cast<T*>(a.out) + std::size_t(r) * a.count + piece.begin, &src, 1,
                                piece.count, e, a.op);
    }
  }
};

}  // namespace symm
