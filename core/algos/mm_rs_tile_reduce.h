// mm_rs.tile_st_ld_reduce ("tiles", seed 000) and mm_rs.tile_st_peer_reduce ("tiles_push"): matmul +
// reduce-scatter as ONE persistent device program on the verb mma_tile, after the plan's entry
// handshake (plan_entry: every peer has finished the previous call, so its tiles and slots may be
// overwritten). The reduction runs in the tiles' epilogue: no phase after the matmul.
//
//   for every owner o in rank-rotated order (me+1, me+2, ..., my own rows LAST), block b takes
//   every blocks()-th output tile of o's rows (M/world x N, in TileGrid's grouped order) and
//   computes partial = A[o's rows] @ B over this rank's K/world; then
//     o a peer:  stores the tile
//                  pull ("tiles"):       into my own symmetric buffer `work`, at o's rows (work
//                                        is M x N)
//                  push ("tiles_push"):  into owner o's `work`, slot me (o's scratch: world
//                                        slots of M/world x N), over NVLink
//                and signals o's flag (channel kChannel, block b, from me) with the count of its
//                tiles for o so far in this call, RELEASE: the tile's stores are published with it
//     o = me:    for every peer r, waits (ACQUIRE, bounded) until the flag of block b from r
//                holds this tile's count: r's partial of the tile is there (r's block b computed
//                the same tile of my rows in an earlier round: every rank walks the same tiles
//                per block); then computes the tile, and mma_tile's epilogue adds every peer's
//                partial of it in fp32 (rank order) before the one rounding and stores C, reading
//                  pull: rank r's `work` at my rows (peer loads)    push: my `work` slot r (local)
//                My own partial never goes through `work`.
//
// No wait comes before a rank's own round and every signal is sent before it, so no rank waits on
// a rank that waits on it. Flag values: (epoch - 1) * kTileStride + count, the epoch from this
// block's counter kCounter (advance: +1 per call), so values only grow across calls whatever the
// shape, as long as a block has fewer than kTileStride tiles per owner (the plan refuses more) and
// the epoch times kTileStride stays below 2^32 (2^22 calls). Every block runs in every call, and
// tile j of an owner is always block j % blocks()'s (j / blocks() + 1)-th tile for that owner: the
// waiter computes the count it needs without asking.
//
// Bytes over NVLink per rank: (world-1)/world * M x N elements (reduce_scatter's): pulled by the
// owner in its epilogue (pull) or stored by the producer (push, which spares the producer's own HBM
// write and the owner's remote loads). FLOPs 2 M N K / world per rank, in tiles.
#pragma once

#include "core/algos/tile_gemm.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/plan.h"
#include "core/signal_pad.h"

namespace symm {

// The protocol of MmRsTiles as plain functions: the one description of it, shared by the device
// program below and the CUDA backend's wgmma kernel (backends/cuda/tile_fused.cu), which runs it
// on its own (wider) tiles: grids are passed in, everything else is a function of them.
struct MmRsTileLayout {
  static constexpr int kChannel = 2;  // pad::flag channel of the tile signals
  // pad::counter of the per-call epoch: this program's alone. A tile's signal is written by one
  // block and awaited by another, so every block's epoch must be the same: no other program may
  // advance this counter, and every call runs the same number of blocks (blocks_of below): a block
  // that sat out a call would fall behind the others (seen on one H200: M 256 ran 4 blocks, then
  // M 1536 ran 24, and block 0 waited for epoch 203 from a block at epoch 1).
  static constexpr int kCounter = 4;
  static constexpr uint32_t kTileStride = 1u << 10;

  // Blocks of every call: the persistent grid, whatever the shape (`sms` 0: kResidentBlocks); a
  // block with no tile of its own still advances the epoch.
  SYMM_HD static int blocks_of(int sms) { return sms > 0 ? sms : kResidentBlocks; }

  // The owner of compute round i = 1 .. w: rotated, my own rows last.
  SYMM_HD static int owner(int me, int w, int i) { return (me + i) % w; }
  // The first flag value of this call from the block's epoch counter after its advance.
  SYMM_HD static uint32_t base(uint32_t epoch) { return (epoch - 1) * kTileStride; }
  // Where producer `me` stores its tiles of owner o's rows, in elements from the start of `work`
  // of the rank that holds them (push: owner o's slot me; pull: my own buffer at o's rows).
  SYMM_HD static std::size_t dst_offset(bool push, int o, int me, uint32_t rows, uint32_t n) {
    return std::size_t(push ? me : o) * rows * n;
  }
  // The signal of block b's count-th tile for owner o: slot in o's pad, value.
  SYMM_HD static uint32_t signal_slot(int block, int me) { return pad::flag(kChannel, block, me); }
  SYMM_HD static uint32_t signal_value(uint32_t base, uint32_t count) { return base + count; }
  // The wait before reducing rank r's partial of my tile j (of grid g over my rows) on nb blocks:
  // tile j is block j % nb's (j / nb + 1)-th tile for me on every rank.
  SYMM_HD static uint32_t wait_slot(uint32_t j, uint32_t nb, int r) { return pad::flag(kChannel, int(j % nb), r); }
  SYMM_HD static uint32_t wait_value(uint32_t base, uint32_t j, uint32_t nb) { return base + j / nb + 1; }
  // Where rank r's partial of my rows starts, in elements from the start of `work` of the rank
  // that holds it (push: my slot r; pull: rank r's buffer at my rows).
  SYMM_HD static std::size_t src_offset(bool push, int r, int me, uint32_t rows, uint32_t n) {
    return std::size_t(push ? r : me) * rows * n;
  }
};

// CollArgs::mat: a (M x K/world), b (K/world x N), c (M/world x N), work (symmetric, M x N),
// m = M, n = N, k = K/world. kFault (tests only, core/plan.h's PlanFault): kNoWait, my tiles are
// reduced without waiting for the peers' partials.
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
    T* c = static_cast<T*>(p.c);
    const uint32_t base = L::base(ctx.advance(pad::counter(int(bk), L::kCounter)));
    const T* peers[Ctx::kWorldLimit];  // the peers' partials of my rows, in rank order
    int npeers = 0;
    for (int r = 0; r < w; ++r)
      if (r != me) peers[npeers++] = (kPush ? work : ctx.peer(work, r)) + L::src_offset(kPush, r, me, rows, p.n);
    for (int i = 1; i <= w; ++i) {  // owners rotated, my own rows last
      const int o = L::owner(me, w, i);
      const T* ao = a + std::size_t(o) * rows * p.k;
      T* dst = (kPush ? ctx.peer(work, o) : work) + L::dst_offset(kPush, o, me, rows, p.n);
      uint32_t count = 0;
      for (uint32_t j = bk; j < g.tiles(); j += nb) {
        ++count;
        if (o != me) {
          gemm_tile<T>(ctx, g, j, dst, p.n, ao, p.k, b, p.k);
          ctx.signal(o, L::signal_slot(int(bk), me), L::signal_value(base, count), MemOrder::kRelease);
          continue;
        }
        // My tile: every peer's partial of it has landed, then the epilogue adds them into C.
        for (int r = 0; r < w && kFault != PlanFault::kNoWait; ++r)
          if (r != me) ctx.wait(L::wait_slot(j, nb, r), L::wait_value(base, j, nb), MemOrder::kAcquire);
        gemm_tile<T>(ctx, g, j, c, p.n, ao, p.k, b, p.k, peers, npeers);
      }
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
                         "signal; the owner's own tiles come last and add its slots in their epilogue"
                       : "one persistent tile kernel: tiles stored locally, per-tile release signal; the owner's own "
                         "tiles come last and pull every rank's tile in their epilogue (seed 000)",
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
    const int blocks = MmRsTileLayout::blocks_of(f.sms);
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
