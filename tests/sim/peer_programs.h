// Device programs the team and L2 tests share (test_team.cpp, test_l2.cpp): every block of a rank
// copies the whole `in` of another rank (all blocks the same bytes) into its own `out`.
#pragma once

#include "core/coll_args.h"

namespace symm::sim {

// Rank 0's blocks each load `bytes` of in from rank 1 into their out; every other rank idles.
struct LoadFromPeer {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.rank() == 0) ctx.copy(a.out, ctx.peer(a.in, 1), a.count * sizeof(T));
  }
};

// Every rank's blocks each load `bytes` of in from the next rank.
struct Ring {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    ctx.copy(a.out, ctx.peer(a.in, (ctx.rank() + 1) % ctx.world()), a.count * sizeof(T));
  }
};

}  // namespace symm::sim
