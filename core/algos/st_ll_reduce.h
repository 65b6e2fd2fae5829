// The flagged-packet (LL) reduction shared by all_reduce.st_ll_reduce and
// reduce_scatter.st_ll_reduce: push packets to every peer, reduce the `world - 1` packet buffers
// received with this rank's own part, with no barrier at all.
//
//   1. e = advance(counter[block][2])                 this block's epoch (core/algos/ll_layout.h)
//   2. put_ll(peer(slot(e, me), q), src(q)[piece], e) for every peer q
//        all_reduce (kScatter false): src(q) = in, the whole input to every rank
//        reduce_scatter (kScatter true): src(q) = in + q * count, slice q to rank q
//   3. out[piece] = reduce_ll over r of slot(e, r)    spins until each packet carries e; rank
//                   (r = me: src(me)[piece] as plain)  order, so every rank sums alike
//
// One one-way trip of data+flag, no fence, no end barrier: the latency floor for small
// messages. Costs twice the bytes on the wire (half of each packet is the epoch), so each block
// carries at most LlLayout::kPieceBytes. The own part is read as it is, not sent to itself as
// packets: world - 1 transfers and packet buffers per block, not world.
// kWaitAhead is for tests: a receive that waits for a later epoch than it sent (a deadlock the
// simulator must name).
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
    ll_send(ctx, a.scratch, e, piece.count * sizeof(T), src);
    const void* srcs[Ctx::kWorldLimit];
    ll_received(ctx, a.scratch, e, src(ctx.rank()), srcs);
    ctx.template reduce_ll<T>(static_cast<T*>(a.out) + piece.begin, srcs, ctx.world(), piece.count, e + kWaitAhead,
                              a.op, ctx.rank());
  }
};

}  // namespace symm
