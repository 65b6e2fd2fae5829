// mm_rs.gemm_ce_tile_acc ("tiles_ce"): matmul + reduce-scatter whose owner adds the peers' partial
// products in the epilogue of ONE persistent tile program over its own rows, each tile acquiring
// the copy-engine pushes of its chunk first: seed 000's per-tile wait, fed by copy engines rather
// than SM stores (the SMs' NVLink stores and the reduce pass after the matmul were what the tile
// programs mm_rs.tile_st_*_reduce lost: experiments/results/h200x2/round_91f28e9/mmrs_diag).
//
//   1. entry handshake (main stream): every peer's scratch is free (plan_entry)
//   2. for every peer q in rank-rotated order (me+1, me+2, ...: at each step every rank works for a
//      different owner, so every link is busy), two GEMMs on the main stream, each followed by an
//      event: partial[q's rows] = a[q's rows] @ B for q's first chunk, then for the rest of its
//      rows (the first chunk's copy then runs beside the second GEMM; the rest stays one GEMM, so
//      few chunk boundaries cost it partial waves); for every chunk k of q's rows, the copy stream
//      (mm_rs_ce_push.h: the first side stream), after the event of the GEMM that computed it:
//          copy_engine(peer(scratch, q)[slot of me at q, chunk k], partial[q's rows, chunk k])
//          write_flag(q, data flag (k, me))          it publishes the copy
//   3. main stream: one launch of MmRsAccTiles over my rows (TileGrid's grouped order with a chunk's
//      tile rows per group, so a block's tiles come chunk by chunk; blocks persistent): before a
//      tile of chunk k, a block acquires data flag (k, q) of every peer q (once per run of tiles of
//      one chunk), then
//        c[tile] = a[my rows] @ B (over this rank's K / world)  + the peers' slots at the tile
//      in mma_tile's epilogue (fp32, slots in ring order: me+1, me+2, ...; one rounding)
//   4. main stream: wait_flag on every data flag (k, q), all set by then: it consumes them, so the
//      next call's pushes can write them again (the kernel only read them)
//   5. the side streams join the main stream (they read `partial` until then)
//
// My own rows are computed last, while the peers' pushes of them land: the first chunk's long
// before, the others' from when the peer's GEMM for my rows ends, about when my tile program
// starts, each ahead of the tiles that read it (a chunk's copy takes less time than its tiles'
// products; on CUDA the acquire sits before the epilogue, tile_fused.cu).
//
// Scratch: world - 1 slots of M/world x N per rank; sender q's slot at owner o is
// (q - o - 1) mod world, so an owner's slots 0 .. world-2 hold the peers o+1, o+2, ... one stride
// apart (mma_tile's epilogue inputs). Chunk rows are a multiple of kTileM (a tile never straddles
// two chunks) or all the rows. Bytes over NVLink per rank: (world-1)/world * M x N elements (by
// copy engines); FLOPs 2 M N K / world (peers' rows by the GEMM, mine in tiles).
#pragma once

#include "core/algos/fused_gemm.h"
#include "core/algos/mm_rs_ce_push.h"
#include "core/algos/tile_gemm.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/plan.h"
#include "core/signal_pad.h"

namespace symm {

struct MmRsAccLayout {
  // Sender q's slot in owner o's scratch (0 .. world-2).
  SYMM_HD static int slot(int q, int o, int w) { return (q - o - 1 + w) % w; }
  // Rows per chunk: a multiple of kTileM, or all the rows.
  static std::size_t chunk_rows(std::size_t rows, std::size_t want, std::size_t dflt) {
    std::size_t c = chunk_rows_for(rows, want, dflt, pad::kPlanChunks);
    c = (c + std::size_t(kTileM) - 1) / std::size_t(kTileM) * std::size_t(kTileM);
    return c < rows ? c : rows;
  }
  // The tile grid of my rows: groups of one chunk's tile rows (at most kTileGroup), so a block's
  // tiles come chunk by chunk. tile_n: the tile width (the CUDA kernel's own).
  SYMM_HD static TileGrid grid(uint32_t rows, uint32_t n, uint32_t chunk_rows, uint32_t tile_n = kTileN) {
    const uint32_t g = chunk_rows / uint32_t(kTileM);
    return TileGrid(rows, n, tile_n, chunk_rows >= rows || g == 0 || g > kTileGroup ? kTileGroup : g);
  }
};

// The device program. CollArgs::mat: a (M x K/world, every row of this rank's A), b, c (M/world x
// N: my rows), work (my scratch: world - 1 slots of M/world x N), m = M, n = N, k = K/world,
// chunk_rows (a multiple of kTileM, or M/world). kFault (tests only): kNoWait, a tile's epilogue
// reads the slots without acquiring its chunk's flags.
template <PlanFault kFault = PlanFault::kNone>
struct MmRsAccTiles {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& ca) {
    const MatArgs& p = ca.mat;
    const int me = ctx.rank(), w = ctx.world();
    const uint32_t rows = p.m / uint32_t(w);
    const TileGrid g = MmRsAccLayout::grid(rows, p.n, p.chunk_rows);
    const T* a = static_cast<const T*>(p.a) + std::size_t(me) * rows * p.k;
    const T* b = static_cast<const T*>(p.b);
    T* c = static_cast<T*>(p.c);
    const T* slots = static_cast<const T*>(p.work);
    uint32_t acquired = ~0u;  // the chunk whose flags this block acquired last
    for (uint32_t t = uint32_t(ctx.block()); t < g.tiles(); t += uint32_t(ctx.blocks())) {
      const std::size_t r0 = g.row0(t), c0 = g.col0(t);
      const uint32_t k = uint32_t(r0) / p.chunk_rows;
      if (kFault != PlanFault::kNoWait && k != acquired) {
        for (int i = 1; i < w; ++i)
          ctx.wait(pad::plan_flag(pad::kPlanData, int(k), (me + i) % w), 1, MemOrder::kAcquire);
        acquired = k;
      }
      ctx.template mma_tile<T>(c + r0 * p.n + c0, p.n, a + r0 * p.k, p.k, b + c0, p.n, g.rows(t), g.cols(t), int(p.k),
                               slots + r0 * p.n + c0, w - 1, std::size_t(rows) * p.n);
    }
  }
};

// kFault (tests only, core/plan.h's PlanFault): kNoWait (in the kernel), kNoJoin, kNoEntry.
template <PlanFault kFault = PlanFault::kNone>
struct MmRsGemmCeTileAccT {
  static constexpr Descriptor kDescriptor{
      .kind = EntryKind::kFusedPlan,
      .name = "gemm_ce_tile_acc",
      .alias = "tiles_ce",
      .summary =
          "GEMM per peer's rows, copy engines push them in chunks; my rows in one persistent tile kernel "
          "whose tiles acquire their chunk and add the peers' partials in the epilogue",
      .fused_op = FusedOp::kMmRs,
      .kernel_spins_on_copies = true};
  struct Config {
    // Rows per progress flag (32 tile rows). Shorter chunks start the owner's tiles earlier but
    // pay a copy launch and a flag each and leave the peers' GEMMs a wave's tail: on 2x H100
    // (experiments/results/h100x2/chunks_c84b44c) 4096 ran 8B M 16384 in 263-265 us against 282-285
    // at 1024, and M 4096 (2048 rows, one chunk) 113-115 / 255 against 121 / 259 (8B / 70B); on
    // 4x H100 (experiments/results/h100x4/chunks_c105723, 4096 rows per owner at M 16384) one chunk
    // 315 / 588-590 against 377-378 / 628-631 at 1024 (8B / 70B; 2048: 345-348 / 571-577).
    static constexpr std::size_t kChunkRows = 4096;
  };

  template <class T, class Host>
  static void run(Host& h, const FusedArgs& f) {
    const int me = h.rank(), n = h.world();
    const std::size_t rows = f.m / std::size_t(n), kl = f.k / std::size_t(n), row_bytes = f.n * sizeof(T);
    const std::size_t slot_bytes = rows * row_bytes;
    const std::size_t cr = MmRsAccLayout::chunk_rows(rows, f.chunk_rows, Config::kChunkRows);
    const Chunks ch(slot_bytes, cr * row_bytes);
    const T* a = static_cast<const T*>(f.a);
    char* partial = static_cast<char*>(f.partial);
    char* scratch = static_cast<char*>(f.work);

    plan_entry<kFault>(h);  // step 1
    int ev = 1;
    for (int i = 1; i < n; ++i) {  // step 2
      const int q = (me + i) % n;
      char* mine = partial + std::size_t(q) * slot_bytes;
      char* dst = h.peer(scratch, q) + std::size_t(MmRsAccLayout::slot(me, q, n)) * slot_bytes;
      const T* aq = a + std::size_t(q) * rows * kl;
      // Chunks [k0, k1) of q's rows: their GEMM, its event, their copies.
      auto part = [&](int k0, int k1) {
        const std::size_t r0 = ch.begin(k0) / row_bytes, r1 = (ch.begin(k1 - 1) + ch.size(k1 - 1)) / row_bytes;
        if (r1 > r0) main_gemm<T>(h, aq + r0 * kl, f.b, mine + r0 * row_bytes, r1 - r0, f.n, kl);
        h.record(kMainStream, ev);
        for (int k = k0; k < k1; ++k) {
          const int s = mm_rs_copy_stream(h);
          h.wait_event(s, ev);
          if (ch.size(k)) h.copy_engine(s, dst + ch.begin(k), mine + ch.begin(k), ch.size(k));
          h.write_flag(s, q, pad::plan_flag(pad::kPlanData, k, me), 1);
        }
        ++ev;
      };
      part(0, 1);
      if (ch.count > 1) part(1, ch.count);
    }
    CollArgs c;  // step 3
    c.mat.a = f.a;
    c.mat.b = f.b;
    c.mat.c = f.c;
    c.mat.work = f.work;
    c.mat.m = uint32_t(f.m), c.mat.n = uint32_t(f.n), c.mat.k = uint32_t(kl);
    c.mat.chunk_rows = uint32_t(cr ? cr : 1);
    const uint32_t tiles = TileGrid(uint32_t(rows), uint32_t(f.n)).tiles();
    h.template launch<MmRsAccTiles<kFault>, T>(kMainStream, c, tile_blocks(f.sms, tiles));
    for (int k = 0; k < ch.count; ++k)  // step 4
      for (int i = 1; i < n; ++i) h.wait_flag(kMainStream, pad::plan_flag(pad::kPlanData, k, (me + n - i) % n), 1);
    join_side_streams<kFault>(h, ev, side_streams(h, 1));  // step 5: the copies' stream
  }
};
using MmRsGemmCeTileAcc = MmRsGemmCeTileAccT<>;

}  // namespace symm
