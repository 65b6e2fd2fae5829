// all_gather.st_ll ("push_ll"): blocks are dealt to peers; each block sends one piece of the
// input to one rank as flagged packets and unpacks the piece it receives from another. No barrier.
//
//   0. block b serves offset k = b % world: it sends to rank me+k and receives from rank me-k;
//      the blocks of one offset split the input into pieces (piece j = b / world)
//   1. e = advance(counter[block][2])
//   2. put_ll(peer(slot(e, me), me+k), in[piece], e)
//   3. out[(me-k) * count + piece] = reduce_ll(slot(e, me-k)) (nsrc 1: unpack)
//
// Why per-peer blocks: every block waits on exactly one packet buffer, so all the polling of a
// call happens in parallel, where one block unpacking `world` buffers in turn would wait for
// them one after another. Block b of the sender and of the receiver agree on k and j, and each
// offset k has at least one block (blocks >= world, AlgoInfo::blocks_per_peer), so every rank
// still receives from every peer in every call (the condition core/algos/ll_layout.h relies on).
// Small messages only (LlLayout::kPieceBytes per block of the per-rank input).
#pragma once

#include "core/algos/ll_layout.h"
#include "core/coll_args.h"
#include "core/descriptor.h"
#include "core/partition.h"

namespace symm {

struct AllGatherStLl {
  static constexpr Descriptor kDescriptor{
      .op = Op::kAllGather,
      .name = "st_ll",
      .alias = "push_ll",
      .summary = "push input as flagged packets to every rank, unpack the packets received"};
  struct Config : LlConfig {
    static constexpr bool kBlocksPerPeer = true;
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world(), b = ctx.block(), nb = ctx.blocks();
    const int k = b % n;
    const int pieces = nb / n + (k < nb % n ? 1 : 0);
    const Range piece = split_vec<T>(a.count, pieces, b / n);
    const int to = (me + k) % n, from = (me - k + n) % n;
    const uint32_t e = ll_epoch(ctx);

    void* dst = ctx.peer(LlLayout::slot(a.scratch, n, b, e, me), to);
    const void* in = static_cast<const T*>(a.in) + piece.begin;
    ctx.put_ll(&dst, &in, 1, piece.count * sizeof(T), e);
    const void* src = LlLayout::slot(a.scratch, n, b, e, from);
    ctx.template reduce_ll<T>(static_cast<T*>(a.out) + std::size_t(from) * a.count + piece.begin, &src, 1, piece.count,
                              e, a.op);
  }
};

}  // namespace symm
