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
  using Config = LlConfig;

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const Range piece = split_vec<T>(a.count, ctx.blocks(), ctx.block());
    const uint32_t e = ll_epoch(ctx);
    const T* in = static_cast<const T*>(a.in) + piece.begin;
    ll_send(ctx, a.scratch, e, piece.count * sizeof(T), [&](int) { return in; });
    const void* srcs[kMaxWorld];
    ll_received(ctx, a.scratch, e, srcs);
    T* out = static_cast<T*>(a.out) + piece.begin;
    for (int i = 0; i < ctx.world(); ++i) {
      const int r = (ctx.rank() + i) % ctx.world();  // start with the next rank's packets, as sent
      ctx.template reduce_ll<T>(out + std::size_t(r) * a.count, &srcs[r], 1, piece.count, e, a.op);
    }
  }
};

}  // namespace symm
