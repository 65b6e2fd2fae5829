// mm_rs.tile_st_peer_acc ("tiles_acc"): matmul + reduce-scatter as ONE persistent device program on
// the verb mma_tile with no reduce pass: the peers' tiles are stored straight into their owner's
// scratch, and the owner adds them in the epilogue of its own tiles, computed last. After the plan's
// entry handshake (plan_entry: every peer has finished the previous call, so its slots may be
// overwritten):
//
//   the walk (MmRsAccPushLayout below): every owner's rows (M/world x N) in tiles of one TileGrid,
//   the peers' tiles first (rounds i = 1 .. world-1, owner o = me + i, tile by tile), then my own
//   (round world); block b takes every blocks()-th position:
//     a peer's tile (round i < world):
//        partial = A[o's rows] @ B over this rank's K/world, stored into o's scratch, slot
//        MmRsAccLayout::slot(me, o, world) (over NVLink), then
//        signal o's flag (channel kChannel, block b, from me) with the tile's wave, RELEASE: the
//        tile's stores are published with it
//     my own tile j (round world):
//        wait (ACQUIRE, bounded) for every peer r's tile j: the flag of the block that computed it
//        on r, at that tile's wave (MmRsAccPushLayout::wait_slot / wait_value), then
//        C[tile j] = A[my rows] @ B  + my scratch's world - 1 slots at the tile
//        in mma_tile's epilogue (fp32, my partial then the slots in ring order me+1, me+2, ...;
//        one rounding)
//
// Against mm_rs.tile_st_*_reduce (mm_rs_tile_reduce.h): no reduce tasks, no bands, no side lanes,
// no tail after the last tile: the reduce is the own tiles' epilogue reading world - 1 local slots,
// and every byte crosses NVLink once, as the producer's stores. (On 2x H200 the pull program's
// side reduce and tail cost ~60 us of its 833 sustained over a 730-us tile GEMM:
// experiments/results/h200x2/mmrs_walk_689d689.) Measured, it is not faster there: 865 us sustained
// against the pull program's 833 at 70B M 16384, its NVLink stores alone 834 (experiments/results/
// h200x2/mmrs_acc_070d6a0): a tile the epilogue stores to a peer holds the MMA warpgroups longer than
// a local one (the simulator's mma_peer_store_GBps). At 8B M 4096 it is the fastest tile program.
//
// Deadlock-free: a block waits only before its own tiles, on peers' tiles, which every block computes
// before any wait of its own (all blocks resident: the persistent grid). Ranks in step seldom wait:
// a peer's tile j of my rows comes T positions or more before my tile j (MmRsAccPushLayout).
//
// Flag values: (epoch - 1) * kTileStride + wave + 1 (MmRsAccPushLayout::signal_value), the epoch from
// pad::counter(b, kCounter), advanced once a call by every block, as MmRsTiles' (the same counter
// and channel: both programs run every block of blocks_of(sms), advance each once a call and keep
// their values of a call in [base + 1, base + kTileStride), so values only grow across calls,
// whichever of them ran). Scratch: world - 1 slots of M/world x N per rank. Bytes over NVLink per rank:
// (world-1)/world * M x N elements, stored by the producer; FLOPs 2 M N K / world.
#pragma once

#include <string>

#include "core/algos/mm_rs_gemm_ce_tile_acc.h"
#include "core/algos/mm_rs_tile_reduce.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/plan.h"

namespace symm {

// The walk and the flags of MmRsAccPushTiles as plain functions, shared by the device program below
// and the CUDA backend's wgmma kernel (backends/cuda/tile_fused.cu), which runs it on its own
// (wider) tiles: everything is a function of the number T of tiles of one owner's rows (its grid),
// the world w and the blocks nb.
//
// The walk: every peer's tiles first, tile by tile (tile j of rounds i = 1 .. w-1, owner me + i, one
// after the other, so every owner receives alike), then my own tiles in order:
//   tile j of round i < w at (w-1) j + i - 1;   my own tile j at (w-1) T + j.
// Block b takes the positions t % nb == b. A peer computes my tile j at least (w-1) (T-j-1) + j + 1 >= T
// positions before I need it. (Tried on 2x H200 and not kept: my own tiles merged with the peers' a wave
// behind, so that every wave stores (w-1)/w of its tiles over NVLink rather than every block at once
// for the first (w-1)/w of the run: no faster at 70B M 16384 and 6-10 % slower at M 4096;
// experiments/results/h200x2/mmrs_acc_91ec059, mmrs_acc_diag_9a85573.)
//
// A tile's release carries its wave: base + t / nb + 1 for position t (base: the epoch's, as
// MmRsTiles'), into the owner's flag of (kChannel, block t % nb, from me). A block's positions only
// grow, so its flag at an owner only grows within a call: the waiter for rank r's tile j of my rows
// waits until the flag of the block of r's position of it holds at least that position's value.
// Values stay below kTileStride (the plan refuses shapes with more waves: waves()).
struct MmRsAccPushLayout {
  using L = MmRsTileLayout;
  // The walk's grid of one owner's rows (bn: the tile width, the CUDA kernel's own).
  SYMM_HD static TileGrid grid(uint32_t rows, uint32_t n, uint32_t bn = kTileN) { return L::grid(rows, n, rows, bn); }
  // The position of tile j of round i (1 .. w; w: my own rows).
  SYMM_HD static uint32_t position(uint32_t tiles, int w, int i, uint32_t j) {
    return i < w ? uint32_t(w - 1) * j + uint32_t(i - 1) : uint32_t(w - 1) * tiles + j;
  }
  // Position t's round i and tile j (position's inverse).
  SYMM_HD static void at(uint32_t tiles, int w, uint32_t t, int& i, uint32_t& j) {
    const uint32_t peers = uint32_t(w - 1) * tiles;
    if (t < peers)
      i = int(t % uint32_t(w - 1)) + 1, j = t / uint32_t(w - 1);
    else
      i = w, j = t - peers;
  }
  SYMM_HD static uint32_t positions(uint32_t tiles, int w) { return uint32_t(w) * tiles; }
  // The waves of nb blocks over the walk (the largest flag value is base + waves).
  SYMM_HD static uint32_t waves(uint32_t tiles, uint32_t nb, int w) { return (positions(tiles, w) + nb - 1) / nb; }
  // Position t's release: its block's flag at the owner (slot in the owner's pad, from `me`), value.
  SYMM_HD static uint32_t signal_slot(uint32_t t, uint32_t nb, int me) { return L::signal_slot(int(t % nb), me); }
  SYMM_HD static uint32_t signal_value(uint32_t base, uint32_t t, uint32_t nb) { return base + t / nb + 1; }
  // Before my own tile j: rank r's position of it (round L::round_of(r, me, w)), its slot and value.
  SYMM_HD static uint32_t wait_slot(uint32_t tiles, uint32_t nb, int w, int me, int r, uint32_t j) {
    return L::signal_slot(int(position(tiles, w, L::round_of(r, me, w), j) % nb), r);
  }
  SYMM_HD static uint32_t wait_value(uint32_t base, uint32_t tiles, uint32_t nb, int w, int me, int r, uint32_t j) {
    return signal_value(base, position(tiles, w, L::round_of(r, me, w), j), nb);
  }
};

// CollArgs::mat: a (M x K/world), b (K/world x N), c (M/world x N), work (symmetric scratch: world - 1
// slots of M/world x N), m = M, n = N, k = K/world. kFault (tests only, core/plan.h's PlanFault):
// kNoWait, the own tiles' epilogue reads the slots without acquiring the peers' tiles.
template <PlanFault kFault = PlanFault::kNone>
struct MmRsAccPushTiles {
  using L = MmRsTileLayout;
  using P = MmRsAccPushLayout;

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& ca) {
    const MatArgs& p = ca.mat;
    const int me = ctx.rank(), w = ctx.world();
    const uint32_t bk = uint32_t(ctx.block()), nb = uint32_t(ctx.blocks());
    const uint32_t rows = p.m / uint32_t(w);
    const TileGrid g = P::grid(rows, p.n);
    const uint32_t tiles = g.tiles();
    const T* a = static_cast<const T*>(p.a);
    const T* b = static_cast<const T*>(p.b);
    T* work = static_cast<T*>(p.work);
    const std::size_t slot = std::size_t(rows) * p.n;
    const uint32_t base = L::base(ctx.advance(pad::counter(int(bk), L::kCounter)));
    for (uint32_t t = bk; t < P::positions(tiles, w); t += nb) {
      int i;
      uint32_t j;
      P::at(tiles, w, t, i, j);
      const int o = L::owner(me, w, i);
      if (i < w) {  // a peer's tile, into my slot at the owner; then its release
        T* dst = ctx.peer(work, o) + std::size_t(MmRsAccLayout::slot(me, o, w)) * slot;
        gemm_tile<T>(ctx, g, j, dst, p.n, a + std::size_t(o) * rows * p.k, p.k, b, p.k);
        ctx.signal(o, P::signal_slot(t, nb, me), P::signal_value(base, t, nb), MemOrder::kRelease);
        continue;
      }
      for (int q = 1; q < w && kFault != PlanFault::kNoWait; ++q) {  // my tile: every peer's of it first
        const int r = (me + q) % w;
        ctx.wait(P::wait_slot(tiles, nb, w, me, r, j), P::wait_value(base, tiles, nb, w, me, r, j), MemOrder::kAcquire);
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
    const CollArgs c = mm_rs_tile_args(f, n);
    using L = MmRsTileLayout;
    const uint32_t rows = uint32_t(f.m / std::size_t(n));
    const int blocks = L::blocks_of(f.sms);
#if !defined(__CUDA_ARCH__)
    const uint32_t waves =
        MmRsAccPushLayout::waves(MmRsAccPushLayout::grid(rows, uint32_t(f.n)).tiles(), uint32_t(blocks), n);
    if (waves >= L::kTileStride)
      fail(ErrorCode::kInvalidArgument, std::string("mm_rs.") + kDescriptor.name + ": " + std::to_string(waves) +
                                            " waves of tiles on " + std::to_string(blocks) +
                                            " blocks exceed the flag encoding's " + std::to_string(L::kTileStride - 1));
#endif
    plan_entry<kFault>(h);
    h.template launch<MmRsAccPushTiles<kFault>, T>(kMainStream, c, blocks);
  }
};
using MmRsTileStPeerAcc = MmRsTileStPeerAccT<>;

}  // namespace symm
