// The flagged-packet (LL) reduction shared by all_reduce.st_ll_reduce and
// reduce_scatter.st_ll_reduce: push packets to every peer, reduce the packets received with this
// rank's own part, with no barrier at all.
//
//   1. e = advance(counter[block][2])                 this block's epoch (core/algos/ll_layout.h)
//   2. put_ll(peer(slot(e, me), q), src(q)[piece], e) for every peer q (and q = me when world > 2)
//        all_reduce (kScatter false): src(q) = in, the whole input to every rank
//        reduce_scatter (kScatter true): src(q) = in + q * count, slice q to rank q
//   3. out[piece] = reduce_ll over r of slot(e, r)    spins until each packet carries e; rank
//                                                     order, so every rank sums alike
//      world 2: r = me is src(me)[piece], plain data
//
// One one-way trip of data+flag, no fence, no end barrier: the latency floor for small
// messages. Costs twice the bytes on the wire (half of each packet is the epoch), so each block
// carries at most LlLayout::kPieceBytes. The own part: at world 2 read as it is (one transfer
// and one packet buffer per block instead of two); at more ranks sent to itself as packets like
// every other part. Measured both ways at worlds 2 and 4 (experiments/results/h100x2/
// ll_self_0b93303, h100x4/ll_self_0b93303, graph mode): reading it cut world 2 by 3-5 % at
// 4K-64K (2.93 -> 2.84 us at 4K) but slowed world 4 by up to 10 % below 1M (all-reduce 4K 3.27 ->
// 3.37 us, 256K 9.89 -> 10.90; reduce-scatter +3 to +7 % at 4K-64K).
#pragma once

#include "core/algos/ll_layout.h"
#include "core/coll_args.h"
#include "core/descriptor.h"
#include "core/partition.h"

namespace symm {

template <bool kScatter, uint32_t kWaitAhead = 0>
struct StLlReduceT {
  using Config = LlConfig;

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const Range piece = split_vec<T>(a.count, ctx.blocks(), ctx.block());
    const uint32_t e = ll_epoch(ctx);
    const T* in = static_cast<const T*>(a.in) + piece.begin;
    const auto src = [&](int q) { return kScatter ? in + std::size_t(q) * a.count : in; };
    const bool plain_own = ctx.world() == 2;
    ll_send(ctx, a.scratch, e, piece.count * sizeof(T), src, !plain_own);
    const void* srcs[Ctx::kWorldLimit];
    ll_received(ctx, a.scratch, e, plain_own ? src(ctx.rank()) : nullptr, srcs);
    ctx.template reduce_ll<T>(static_cast<T*>(a.out) + piece.begin, srcs, ctx.world(), piece.count, e + kWaitAhead,
                              a.op, plain_own ? ctx.rank() : -1);
  }
};

}  // namespace symm
