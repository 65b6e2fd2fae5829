// push_to_peers: a plan's kernel, not a collective of its own. The blocks store `count`
// elements of `in` (local) at the same offset of `out` in every peer's symmetric memory:
//
//   peer(out, q)[i] = in[i]    for every rank q != me, peers in rank-swizzled order (me+1, ...)
//
// No signal, no wait: the plan orders it after its entry handshake and publishes it with the
// data flags it writes on the same stream once the kernel has ended (core/plan.h: a launch is
// done when its stores have landed; write_flag releases them).
#pragma once

#include "core/coll_args.h"
#include "core/partition.h"
#include "core/verbs.h"

namespace symm {

// Blocks as all_gather.st's stores (its push bandwidth saturates near 64 blocks on H200).
struct PushToPeers : PlanKernel<64, (8 << 10)> {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world();
    const Range piece = split_aligned<T>(a.count, ctx.blocks(), ctx.block());
    if (!piece.count) return;
    const T* in = static_cast<const T*>(a.in) + piece.begin;
    T* out = static_cast<T*>(a.out) + piece.begin;
    for (int i = 1; i < n; ++i) ctx.copy(ctx.peer(out, (me + i) % n), in, piece.count * sizeof(T));
  }
};

}  // namespace symm
