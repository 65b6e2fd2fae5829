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
  using Config = LlConfig;

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const Range piece = split_vec<T>(a.count, ctx.blocks(), ctx.block());
    const uint32_t e = ll_epoch(ctx);
    const T* in = static_cast<const T*>(a.in) + piece.begin;
    ll_send(ctx, a.scratch, e, piece.count * sizeof(T), [&](int q) { return in + std::size_t(q) * a.count; });
    const void* srcs[Ctx::kMaxWorld];
    ll_received(ctx, a.scratch, e, srcs);
    ctx.template reduce_ll<T>(static_cast<T*>(a.out) + piece.begin, srcs, ctx.world(), piece.count, e, a.op);
  }
};

}  // namespace symm
