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
  using Config = LlConfig;

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const Range piece = split_vec<T>(a.count, ctx.blocks(), ctx.block());
    const uint32_t e = ll_epoch(ctx);
    const T* in = static_cast<const T*>(a.in) + piece.begin;
    ll_send(ctx, a.scratch, e, piece.count * sizeof(T), [&](int) { return in; });
    const void* srcs[Ctx::kMaxWorld];
    ll_received(ctx, a.scratch, e, srcs);
    ctx.template reduce_ll<T>(static_cast<T*>(a.out) + piece.begin, srcs, ctx.world(), piece.count, e, a.op);
  }
};

}  // namespace symm
