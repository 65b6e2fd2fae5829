// mm_rs.tile_st_ld_reduce ("tiles", seed 000) and mm_rs.tile_st_peer_reduce ("tiles_push"): matmul +
// reduce-scatter as ONE persistent device program on the verb mma_tile, after the plan's entry
// handshake (plan_entry: every peer has finished the previous call, so its tiles and slots may be
// overwritten).
//
//   1. compute: for every owner o in rank-rotated order (me+1, me+2, ..., my own rows last), block
//      b takes every blocks()-th output tile of o's rows (M/world x N, kTileM x kTileN tiles) and
//      computes partial = A[o's rows] @ B over this rank's K/world, then stores the tile
//        pull ("tiles"):       into my own symmetric buffer `work`, at o's rows (work is M x N)
//        push ("tiles_push"):  into owner o's `work`, slot me (o's scratch: world slots of
//                              M/world x N), over NVLink
//      and signals o's flag (channel kChannel, block b, from me) with the count of its tiles for o
//      so far in this call, RELEASE: the tile's stores are published with it
//   2. reduce: my rows in sub-bands of kReduceRows rows, every blocks()-th to block b. For a
//      sub-band, for every rank r (me included: my tiles came from other blocks), for every tile
//      of its band: wait (ACQUIRE, bounded) until the flag of the block that computed it on rank r
//      holds that tile's count; then C[sub-band] = sum over r, in fp32, of
//        pull: rank r's `work` at my rows (peer loads)    push: my `work` slot r (local)
//
// Flag values: (epoch - 1) * kTileStride + count, the epoch from this block's counter kCounter
// (advance: +1 per call), so values only grow across calls whatever the shape, as long as a
// block has fewer than kTileStride tiles per owner (the plan refuses more) and the epoch times
// kTileStride stays below 2^32 (2^22 calls). Every block runs in every call, and tile j of an
// owner is always block j % blocks()'s (j / blocks() + 1)-th tile for that owner: the waiter
// computes the count it needs without asking.
//
// Bytes over NVLink per rank: (world-1)/world * M x N elements (reduce_scatter's): pulled by the
// owner (pull) or stored by the producer (push, which spares the producer's own HBM write and
// the owner's remote loads). FLOPs 2 M N K / world per rank, in tiles.
#pragma once

#include "core/algos/tile_gemm.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/plan.h"
#include "core/signal_pad.h"

namespace symm {

struct MmRsTileLayout {
  static constexpr int kChannel = 2;  // pad::flag channel of the tile signals
  static constexpr int kCounter = 1;  // pad::counter of the per-call epoch
  static constexpr uint32_t kTileStride = 1u << 10;
  static constexpr uint32_t kReduceRows = 16;  // rows per reduce task (a sub-band of a tile row)
};

// CollArgs::mat: a (M x K/world), b (K/world x N), c (M/world x N), work (symmetric, M x N),
// m = M, n = N, k = K/world. kFault (tests only, core/plan.h's PlanFault): kNoWait, the reduce
// skips its waits.
template <bool kPush, PlanFault kFault = PlanFault::kNone>
struct MmRsTiles {
  using L = MmRsTileLayout;
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& ca) {
    const MatArgs& p = ca.mat;
    const int me = ctx.rank(), w = ctx.world();
    const uint32_t bk = uint32_t(ctx.block()), nb = uint32_t(ctx.blocks());
    const uint32_t rows = p.m / uint32_t(w);
    const TileGrid g(rows, p.n);
    const T* a = static_cast<const T*>(p.a);
    const T* b = static_cast<const T*>(p.b);
    T* work = static_cast<T*>(p.work);
    const uint32_t base = (ctx.advance(pad::counter(int(bk), L::kCounter)) - 1) * L::kTileStride;

    for (int i = 1; i <= w; ++i) {  // 1. compute, owners rotated, my own rows last
      const int o = (me + i) % w;
      T* dst = kPush ? ctx.peer(work, o) + std::size_t(me) * rows * p.n : work + std::size_t(o) * rows * p.n;
      uint32_t count = 0;
      for (uint32_t j = bk; j < g.tiles(); j += nb) {
        gemm_tile<T>(ctx, g, j, dst, p.n, a + std::size_t(o) * rows * p.k, p.k, b, p.k);
        ctx.signal(o, pad::flag(L::kChannel, int(bk), me), base + ++count, MemOrder::kRelease);
      }
    }

    const T* srcs[Ctx::kWorldLimit];
    const uint32_t tasks = (rows + L::kReduceRows - 1) / L::kReduceRows;
    for (uint32_t u = bk; u < tasks; u += nb) {  // 2. reduce my rows, a sub-band at a time
      const uint32_t r0 = u * L::kReduceRows, nr = rows - r0 < L::kReduceRows ? rows - r0 : L::kReduceRows;
      const uint32_t band = r0 / uint32_t(kTileM);
      for (int r = 0; r < w; ++r) {
        for (uint32_t col = 0; col < g.tn && kFault != PlanFault::kNoWait; ++col) {
          const uint32_t j = band * g.tn + col;
          ctx.wait(pad::flag(L::kChannel, int(j % nb), r), base + j / nb + 1, MemOrder::kAcquire);
        }
        srcs[r] =
            kPush ? work + (std::size_t(r) * rows + r0) * p.n : ctx.peer(work, r) + (std::size_t(me) * rows + r0) * p.n;
      }
      ctx.template reduce<T>(static_cast<T*>(p.c) + std::size_t(r0) * p.n, srcs, w, std::size_t(nr) * p.n,
                             ReduceOp::kSum);
    }
  }
};

// kFault (tests only): kNoWait (in the kernel), kNoEntry (the plan's handshake left out).
template <bool kPush, PlanFault kFault = PlanFault::kNone>
struct MmRsTileReduceT {
  static constexpr Descriptor kDescriptor{
      .kind = EntryKind::kFusedPlan,
      .name = kPush ? "tile_st_peer_reduce" : "tile_st_ld_reduce",
      .alias = kPush ? "tiles_push" : "tiles",
      .summary = kPush ? "one persistent tile kernel: tiles stored into the owner's slot (NVLink), per-tile release "
                         "signal, the owner reduces its slots"
                       : "one persistent tile kernel: tiles stored locally, per-tile release signal, the owner pulls "
                         "every rank's tile and reduces (seed 000)",
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
    const uint32_t tiles = TileGrid(uint32_t(f.m / std::size_t(n)), uint32_t(f.n)).tiles();
    const int blocks = tile_blocks(f.sms, tiles);
#if !defined(__CUDA_ARCH__)
    if ((tiles + uint32_t(blocks) - 1) / uint32_t(blocks) >= MmRsTileLayout::kTileStride)
      fail(ErrorCode::kInvalidArgument, std::string("mm_rs.") + kDescriptor.name + ": " + std::to_string(tiles) +
                                            " tiles per owner on " + std::to_string(blocks) +
                                            " blocks exceed the flag encoding's " +
                                            std::to_string(MmRsTileLayout::kTileStride - 1) + " per block");
#endif
    plan_entry<kFault>(h);
    h.template launch<MmRsTiles<kPush, kFault>, T>(kMainStream, c, blocks);
  }
};
using MmRsTileStLdReduce = MmRsTileReduceT<false>;
using MmRsTileStPeerReduce = MmRsTileReduceT<true>;

}  // namespace symm
