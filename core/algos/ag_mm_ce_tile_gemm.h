// ag_mm.ce_tile_gemm ("tiles", seed 002): the copy-engine all-gather's pushes plus ONE persistent
// GEMM device program on the main stream whose tiles acquire the progress flag of the chunk of A
// they read, instead of a cuBLASLt GEMM per chunk.
//
//   1. entry handshake and the copy-engine pushes of all_gather.ce_st (AllGatherCeSt::push, my
//      own slot not copied): for every chunk k of my shard and every peer q in rank-swizzled
//      order, a copy into q's gathered A, then write_flag(q, data flag (k, me))
//   2. main stream: one launch of AgMmTiles on one block per SM. Its tiles, in the order chunks
//      arrive: my own rows first (read from my shard `a`, no wait), then for every chunk k, for
//      every peer q in rank-rotated order (me-1, me-2, ...: the order the swizzled pushes reach
//      me), the tiles of q's chunk k (read from the gathered A) — each block takes every
//      blocks()-th tile of that list and, before a tile of a chunk it has not acquired yet,
//      waits (acquire, bounded) until data flag (k, q) is set: the copy has landed
//   3. main stream, after the kernel: wait_flag on every data flag (k, q), which are all set by
//      then: it consumes them (core/plan.h's flags go back to 0), so the next call's pushes can
//      write them again; the kernel only read them
//   4. the side streams join the main stream
//
// Tiles never straddle two chunks (a chunk's last tile row is shorter when chunk rows are not a
// multiple of kTileM). Bytes over NVLink per rank: (world-1)/world * M x K elements, by copy
// engines; FLOPs 2 M N K on the SMs, in tiles (core/algos/tile_gemm.h).
#pragma once

#include <algorithm>

#include "core/algos/all_gather_ce_st.h"
#include "core/algos/tile_gemm.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/plan.h"
#include "core/signal_pad.h"

namespace symm {

// The tile list of AgMmTiles in the order chunks arrive, and the flag each segment of it waits
// on: the one description of the walk, shared by the device program below and the CUDA backend's
// wgmma kernel (backends/cuda/tile_fused.cu), which runs this program's protocol on its own tiles.
// Segment 0: my rows (read from my shard, no wait); segment 1 + k * (w-1) + (i-1): chunk k of peer
// (me - i) mod w (read from the gathered A, after acquiring data flag (k, that peer)).
struct AgMmTileWalk {
  uint32_t rows = 0, cr = 0, n = 0, bn = kTileN, segments = 0;
  int me = 0, w = 1;
  uint32_t seg = 0, seg_first = 0, seg_rows = 0;  // t's segment, its first tile, its rows (seek)

  SYMM_HD AgMmTileWalk(const MatArgs& p, int rank, int world, uint32_t tile_n = kTileN)
      : rows(p.m / uint32_t(world)), cr(p.chunk_rows), n(p.n), bn(tile_n), me(rank), w(world) {
    const uint32_t chunks = (rows + cr - 1) / cr;
    segments = 1 + chunks * uint32_t(w - 1);
  }
  // Walks forward to tile t's segment (t only grows between calls); false when t is past the end.
  SYMM_HD bool seek(uint32_t t) {
    for (;;) {
      if (seg >= segments) return false;
      const uint32_t k = chunk();
      seg_rows = seg ? (rows - k * cr < cr ? rows - k * cr : cr) : rows;
      const uint32_t tiles = TileGrid(seg_rows, n, bn).tiles();
      if (t < seg_first + tiles) return true;
      seg_first += tiles;
      ++seg;
    }
  }
  SYMM_HD TileGrid grid() const { return TileGrid(seg_rows, n, bn); }
  SYMM_HD uint32_t local(uint32_t t) const { return t - seg_first; }  // t's index in its segment's grid
  SYMM_HD uint32_t chunk() const { return seg ? (seg - 1) / uint32_t(w - 1) : 0; }
  SYMM_HD int peer() const { return seg ? (me + w - int(1 + (seg - 1) % uint32_t(w - 1))) % w : me; }
  // The data flag segment seg > 0 acquires.
  SYMM_HD uint32_t flag_slot() const { return pad::plan_flag(pad::kPlanData, int(chunk()), peer()); }
  // The segment's first row of C, and of the gathered A (segment 0: of C only; A is the shard).
  SYMM_HD std::size_t row0() const { return std::size_t(peer()) * rows + std::size_t(chunk()) * cr; }
};

// The device program. CollArgs::mat: a = my shard (rows x k), a2 = the gathered A (m x k,
// symmetric), b (k x n), c (m x n), chunk_rows = rows per progress flag.
// kFault (tests only): kNoWait, a peer chunk's tiles are computed without acquiring its flag.
template <PlanFault kFault = PlanFault::kNone>
struct AgMmTiles {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& ca) {
    const MatArgs& p = ca.mat;
    const T* a = static_cast<const T*>(p.a);
    const T* gathered = static_cast<const T*>(p.a2);
    const T* b = static_cast<const T*>(p.b);
    T* c = static_cast<T*>(p.c);
    AgMmTileWalk walk(p, ctx.rank(), ctx.world());
    uint32_t acquired = 0;  // the last segment whose flag this block acquired (0: none needed)
    for (uint32_t t = uint32_t(ctx.block()); walk.seek(t); t += uint32_t(ctx.blocks())) {
      const TileGrid g = walk.grid();
      const std::size_t row0 = walk.row0();
      if (walk.seg == 0) {  // my own rows: C[me's rows] from my shard
        gemm_tile<T>(ctx, g, walk.local(t), c + row0 * p.n, p.n, a, p.k, b, p.k);
        continue;
      }
      if (kFault != PlanFault::kNoWait && acquired != walk.seg) {
        ctx.wait(walk.flag_slot(), 1, MemOrder::kAcquire);
        acquired = walk.seg;
      }
      gemm_tile<T>(ctx, g, walk.local(t), c + row0 * p.n, p.n, gathered + row0 * p.k, p.k, b, p.k);
    }
  }
};

// kFault (tests only, core/plan.h's PlanFault): kNoWait (in the kernel), kNoJoin, kNoEntry.
template <PlanFault kFault = PlanFault::kNone>
struct AgMmCeTileGemmT {
  using Push = AllGatherCeT<kFault == PlanFault::kNoEntry || kFault == PlanFault::kNoJoin ? kFault : PlanFault::kNone>;
  static constexpr Descriptor kDescriptor{
      .kind = EntryKind::kFusedPlan,
      .name = "ce_tile_gemm",
      .alias = "tiles",
      .summary =
          "copy-engine all-gather + one persistent tile GEMM kernel whose tiles acquire their chunk's flag (seed 002)",
      .fused_op = FusedOp::kAgMm,
      .kernel_spins_on_copies = true};
  struct Config {
    // Rows per progress flag: half a shard, at least kMinChunkRows (16 tile rows). Each chunk pays
    // a copy launch and a flag; tiles of a later chunk wait for it. Measured (median us, graph):
    // 2x H100 (experiments/results/h100x2/chunks_c84b44c) 8B M 16384 373 at half a shard against
    // 436 at 512 rows (the old default) and 390 at one chunk; M 4096 121 / 422 (8B / 70B, one
    // 2048-row chunk) against 150 / 446 at 512; 4x H100 (experiments/results/h100x4/chunks_c105723)
    // 8B M 16384 466-467 at half a shard against 514-518 at one chunk and 536-544 at 1024 rows.
    static constexpr std::size_t kMinChunkRows = 2048;
    static std::size_t chunk_rows(std::size_t rows) { return std::max(kMinChunkRows, (rows + 1) / 2); }
  };

  template <class T, class Host>
  static void run(Host& h, const FusedArgs& f) {
    const int n = h.world();
    const std::size_t rows = f.m / std::size_t(n), row_bytes = f.k * sizeof(T);
    const std::size_t chunk_rows = chunk_rows_for(rows, f.chunk_rows, Config::chunk_rows(rows), pad::kPlanChunks);
    PlanArgs p;
    p.coll.in = f.a;
    p.coll.out = f.work;
    p.coll.count = rows * f.k;
    p.chunk_bytes = chunk_rows * row_bytes;
    const Chunks ch = Push::template push<T>(h, p, /*own_copy=*/false);  // step 1

    CollArgs c;
    c.mat.a = f.a;
    c.mat.a2 = f.work;
    c.mat.b = f.b;
    c.mat.c = f.c;
    c.mat.m = uint32_t(f.m), c.mat.n = uint32_t(f.n), c.mat.k = uint32_t(f.k);
    c.mat.chunk_rows = uint32_t(ch.chunk / row_bytes);
    const uint32_t tiles = TileGrid(uint32_t(f.m), uint32_t(f.n)).tiles();
    h.template launch<AgMmTiles<kFault>, T>(kMainStream, c, tile_blocks(f.sms, tiles));  // step 2
    for (int k = 0; k < ch.count; ++k) Push::wait_chunk(h, kMainStream, k);              // step 3
    Push::join(h);                                                                       // step 4
  }
};
using AgMmCeTileGemm = AgMmCeTileGemmT<>;

}  // namespace symm
