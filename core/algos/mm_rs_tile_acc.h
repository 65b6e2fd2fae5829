// mm_rs.tile_st_peer_acc ("tiles_acc"): matmul + reduce-scatter as ONE persistent device program on
// the verb mma_tile with no reduce pass: the peers' tiles are stored straight into their owner's
// scratch, and the owner adds them in the epilogue of its own tiles, computed last. After the plan's
// entry handshake (plan_entry: every peer has finished the previous call, so its slots may be
// overwritten):
//
//   the walk: every owner's rows (M/world x N) in tiles of one TileGrid (MmRsTileLayout::grid with
//   one band), rounds i = 1 .. world of owner o = me + i (rank-rotated, my own rows last), numbered
//   across rounds (MmRsTileLayout::walk_begin / at); block b takes every blocks()-th position:
//     round i < world (owner o a peer):
//        partial = A[o's rows] @ B over this rank's K/world, stored into o's scratch, slot
//        MmRsAccLayout::slot(me, o, world) (over NVLink), then
//        signal o's flag (channel kChannel, block b, from me) with the count of the block's tiles
//        for o so far in this call, RELEASE: the tile's stores are published with it
//     round world (my own rows), tile j:
//        wait (ACQUIRE, bounded) for every peer r's tile j: the flag of the block that computed it
//        on r, at that tile's count (MmRsTileLayout::wait_slot / wait_value), then
//        C[tile j] = A[my rows] @ B  + my scratch's world - 1 slots at the tile
//        in mma_tile's epilogue (fp32, my partial then the slots in ring order me+1, me+2, ...;
//        one rounding)
//
// Against mm_rs.tile_st_*_reduce (mm_rs_tile_reduce.h): no reduce tasks, no bands, no side lanes,
// no tail after the last tile: the reduce is the own tiles' epilogue reading world - 1 local slots,
// and every byte crosses NVLink once, as the producer's stores. (On 2x H200 the pull program's
// side reduce and tail cost ~60 us of its 833 sustained over a 730-us tile GEMM:
// experiments/results/h200x2/mmrs_walk_689d689.)
//
// Deadlock-free: a block waits only in round world, on tiles of rounds < world, which every rank's
// blocks compute before any wait of theirs (all blocks resident: the persistent grid). The slack: a
// peer computes my rows in round round_of(peer, me) < world, at least one round's tiles ahead of
// the position where I need them, so ranks in step never wait.
//
// Flag values: as MmRsTiles' (epoch from pad::counter(b, kCounter), advanced once a call by every
// block; values (epoch - 1) * kTileStride + count only grow across calls, whichever of the
// programs sharing the counter ran: every one of them runs every block of blocks_of(sms) and
// advances each once). Scratch: world - 1 slots of M/world x N per rank. Bytes over NVLink per rank:
// (world-1)/world * M x N elements, stored by the producer; FLOPs 2 M N K / world.
#pragma once

#include <string>

#include "core/algos/mm_rs_gemm_ce_tile_acc.h"
#include "core/algos/mm_rs_tile_reduce.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/plan.h"

namespace symm {

// CollArgs::mat: a (M x K/world), b (K/world x N), c (M/world x N), work (symmetric scratch: world - 1
// slots of M/world x N), m = M, n = N, k = K/world. kFault (tests only, core/plan.h's PlanFault):
// kNoWait, the own tiles' epilogue reads the slots without acquiring the peers' tiles.
template <PlanFault kFault = PlanFault::kNone>
struct MmRsAccPushTiles {
  using L = MmRsTileLayout;
  // The walk's grid: every owner's rows in one band (bn: the tile width, the CUDA kernel's own).
  SYMM_HD static TileGrid grid(uint32_t rows, uint32_t n, uint32_t bn = kTileN) { return L::grid(rows, n, rows, bn); }

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& ca) {
    const MatArgs& p = ca.mat;
    const int me = ctx.rank(), w = ctx.world();
    const uint32_t bk = uint32_t(ctx.block()), nb = uint32_t(ctx.blocks());
    const uint32_t rows = p.m / uint32_t(w);
    const TileGrid g = grid(rows, p.n);
    const T* a = static_cast<const T*>(p.a);
    const T* b = static_cast<const T*>(p.b);
    T* work = static_cast<T*>(p.work);
    const std::size_t slot = std::size_t(rows) * p.n;
    const uint32_t base = L::base(ctx.advance(pad::counter(int(bk), L::kCounter)));
    for (uint32_t t = bk; t < L::walk_end(g, w, 0); t += nb) {
      int i;
      uint32_t j;
      L::at(g, w, 0, t, i, j);
      const int o = L::owner(me, w, i);
      if (i < w) {  // a peer's tile, into its slot of mine at the owner; then its release
        T* dst = ctx.peer(work, o) + std::size_t(MmRsAccLayout::slot(me, o, w)) * slot;
        gemm_tile<T>(ctx, g, j, dst, p.n, a + std::size_t(o) * rows * p.k, p.k, b, p.k);
        ctx.signal(o, L::signal_slot(int(bk), me), L::signal_value(base, L::count_at(g, w, nb, i, j)),
                   MemOrder::kRelease);
        continue;
      }
      for (int q = 1; q < w && kFault != PlanFault::kNoWait; ++q) {  // my tile: every peer's of it first
        const int r = (me + q) % w;
        ctx.wait(L::wait_slot(g, w, nb, me, r, j), L::wait_value(base, g, w, nb, me, r, j), MemOrder::kAcquire);
      }
      const std::size_t r0 = g.row0(j), c0 = g.col0(j);
      ctx.template mma_tile<T>(static_cast<T*>(p.c) + r0 * p.n + c0, p.n, a + (std::size_t(me) * rows + r0) * p.k, p.k,
                               b + c0, p.n, g.rows(j), g.cols(j), int(p.k), work + r0 * p.n + c0, w - 1, slot);
    }
  }
};

// kFault (tests only): kNoWait (in the kernel), kNoEntry (the plan's handshake left out).
template <PlanFault kFault = PlanFault::kNone>
struct MmRsTileStPeerAccT {
  static constexpr Descriptor kDescriptor{
      .kind = EntryKind::kFusedPlan,
      .name = "tile_st_peer_acc",
      .alias = "tiles_acc",
      .summary =
          "one persistent tile kernel: peers' tiles stored into the owner's slot (NVLink) with a per-tile "
          "release; the owner's own tiles, last, acquire them and add them in the epilogue (no reduce pass)",
      .fused_op = FusedOp::kMmRs};

  template <class T, class Host>
  static void run(Host& h, const FusedArgs& f) {
    const int n = h.world();
    CollArgs c;
    c.mat.a = f.a;
    c.mat.b = f.b;
    c.mat.c = f.c;
    c.mat.work = f.work;
    c.mat.m = uint32_t(f.m), c.mat.n = uint32_t(f.n), c.mat.k = uint32_t(f.k / std::size_t(n));
    using L = MmRsTileLayout;
    const uint32_t rows = uint32_t(f.m / std::size_t(n));
    const int blocks = L::blocks_of(f.sms);
    c.mat.chunk_rows = rows;  // one band
#if !defined(__CUDA_ARCH__)
    const TileGrid g = MmRsAccPushTiles<>::grid(rows, uint32_t(f.n));
    if (L::most_per_owner(g, uint32_t(blocks)) >= L::kTileStride)
      fail(ErrorCode::kInvalidArgument, std::string("mm_rs.") + kDescriptor.name + ": " + std::to_string(g.tiles()) +
                                            " tiles per owner on " + std::to_string(blocks) +
                                            " blocks exceed the flag encoding's " + std::to_string(L::kTileStride - 1) +
                                            " per block");
#endif
    plan_entry<kFault>(h);
    h.template launch<MmRsAccPushTiles<kFault>, T>(kMainStream, c, blocks);
  }
};
using MmRsTileStPeerAcc = MmRsTileStPeerAccT<>;

}  // namespace symm
