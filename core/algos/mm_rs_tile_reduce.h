// mm_rs.tile_st_ld_reduce ("tiles", seed 000) and mm_rs.tile_st_peer_reduce ("tiles_push"): matmul +
// reduce-scatter as ONE persistent device program on the verb mma_tile, after the plan's entry
// handshake (plan_entry: every peer has finished the previous call, so its tiles and slots may be
// overwritten).
//
// Every owner's rows (M/world x N, kTileM x kTileN tiles) are cut into the same bands: a band is
// whole groups of TileGrid's grouped order (band_rows rows: `--chunk-rows`, else the plan's
// default, MmRsTileLayout::default_band_rows), so a band's tiles are one contiguous
// range of tile indices. Of the blocks() blocks, the last nr = reduce_blocks reduce while the other
// nc = blocks() - nr compute (none with one band: then every block computes, and reduces after):
//
//   1. a compute block b, band by band, takes every nc-th tile of the band's walk (every owner o's
//      tiles of the band, owners in rank-rotated order me+1, me+2, ..., my own rows last, numbered
//      across owners: MmRsTileLayout::walk_begin) and computes partial = A[o's rows] @ B over
//      this rank's K/world, then stores the tile
//        pull ("tiles"):       into my own symmetric buffer `work`, at o's rows (work is M x N)
//        push ("tiles_push"):  into owner o's `work`, slot me (o's scratch: world slots of
//                              M/world x N), over NVLink
//      and signals o's flag (channel kChannel, block b, from me) with the count of its tiles for o
//      so far in this call, RELEASE: the tile's stores are published with it
//   2. a reduce block takes every nr-th reduce task of my rows in every band but the last, in row
//      order, while the compute blocks go on; the last band's tasks go to every block (every
//      nb-th), after its tiles (a compute block) or its earlier tasks (a reduce block). With no
//      reduce blocks (the default) and bands, a block's side lane (core/verbs.h lane(): the CUDA
//      kernel's spare warps, a fiber of its own in the simulator's fused runs) takes every nb-th
//      task of every band but the last, in row order, beside the block's tiles (without a lane,
//      the block takes band s - 1's after its tiles of band s), and the block the last band's
//      after its tiles; with one band, every nb-th task after its tiles. A task is
//      a sub-band of kReduceRows of my rows: for every rank r (me included: my tiles came from
//      other blocks), for every tile of its tile row: wait (ACQUIRE, bounded) until the flag of
//      the block that computed it on rank r holds that tile's count; then C[sub-band] = sum over
//      r, in fp32, of
//        pull: rank r's `work` at my rows (peer loads)    push: my `work` slot r (local)
//
// (The CUDA kernel's reduce blocks pull their tasks' sources by bulk copies into their idle
// shared-memory ring, the same flags acquired first; with bands and no reduce blocks, the default,
// each computing block's spare warps reduce every band but the last while its consumers compute:
// backends/cuda/tile_fused.cu.)
// With bands only the last band's reduce is left after the last tile (with one band, the
// whole reduce: the program as it was before bands, measured 1.20x the matmul alone at 70B
// M 16384 on 2x H100, 1.33x on 2x H200; with 16 reduce blocks, the default until 16740f0, 1.175x
// and 1.135x). Deadlock-free: every wait is on a tile; a reduce block or a side lane computes none, a
// compute block waits on band s - 1's tiles only after its own of band s, and every block computes band
// s - 1 before it waits on band s - 2's, so the tiles of the earliest band anyone waits on are
// computed by blocks that wait on nothing before them (all blocks resident: the persistent grid).
//
// Flag values: (epoch - 1) * kTileStride + count, the epoch from this block's counter kCounter
// (advance: +1 per call), so values only grow across calls whatever the shape, as long as a
// block has fewer than kTileStride tiles per owner (the plan refuses more) and the epoch times
// kTileStride stays below 2^32 (2^22 calls). Every block runs in every call, and a compute block
// visits an owner's tiles in increasing index (band by band), so which block computes tile j of
// an owner and its count for that owner are functions of the grid (block_of, count_at): the
// waiter computes the count it needs without asking.
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
  static constexpr int kLaneCounter = 5;  // a side lane's epoch (MmRsTiles::run), where the backend runs one
  static constexpr uint32_t kTileStride = 1u << 10;
  // Rows per reduce task (a sub-band of a tile row). Measured on 4x H100 against 16 and 4
  // (experiments/results/h100x4/mmrs_rows_17b4f7d, two passes each, graph): at world 4 8 rows took
  // 70B M 4096 183 -> 170 us (pull) and 192 -> 165 (push), 8B M 16384 207 -> 199 and 202 -> 193, 70B
  // M 16384 push 502 -> 484 (pull within its spread); at world 2 every row within the runs' spread.
  // More tasks spread a band's reduce over more blocks; 4 rows gained no more at world 4.
  static constexpr uint32_t kReduceRows = 8;
  static_assert(kTileM % kReduceRows == 0, "a band's rows are whole reduce tasks");
  static constexpr uint32_t kMinBands = 8;  // default bands per owner's rows (fewer if it has fewer tile rows)

  // The grid of an owner's rows (rows x n, tiles kTileM x bn) and its bands (TileGrid::band tile
  // rows each, whole groups of the grid's order, so a band's tiles are one contiguous range of
  // indices): band_rows rows per band (rounded down to whole tile rows, at least one; rows or more:
  // one band; 0: the default, the most tile rows up to kTileGroup that still give kMinBands bands); groups of
  // the band's tile rows up to kTileGroup (the largest that divides the band).
  SYMM_HD static TileGrid grid(uint32_t rows, uint32_t n, uint32_t band_rows, uint32_t bn = kTileN) {
    const uint32_t tm = (rows + kTileM - 1) / kTileM;
    uint32_t band = band_rows >= rows ? tm : band_rows ? band_rows / uint32_t(kTileM) : tm / kMinBands;
    if (!band_rows && band > kTileGroup) band = kTileGroup;
    if (band > tm) band = tm;
    if (band < 1) band = 1;
    uint32_t group = band < kTileGroup ? band : kTileGroup;
    while (band % group) --group;
    TileGrid g(rows, n, bn, group);
    g.band = band;
    return g;
  }
  SYMM_HD static uint32_t bands(const TileGrid& g) { return (g.tm + g.band - 1) / g.band; }
  // Band s's tiles: indices [band_begin, band_end) of the grid.
  SYMM_HD static uint32_t band_begin(const TileGrid& g, uint32_t s) { return s * g.band * g.tn; }
  SYMM_HD static uint32_t band_end(const TileGrid& g, uint32_t s) {
    const uint32_t e = (s + 1) * g.band * g.tn;
    return e < g.tiles() ? e : g.tiles();
  }
  // Every band's tasks but the last's, [0, early_tasks): the reduce blocks' or, with none, the
  // side tasks (side_tasks); after them, every block takes the last band's (with one band: all).
  SYMM_HD static uint32_t early_tasks(const TileGrid& g) { return task_begin(g, bands(g) - 1); }
  // With bands and no reduce blocks: the computing blocks take the early tasks too (every nc-th),
  // the CUDA kernel in each block's spare warps beside its tiles, MmRsTiles::run between its bands.
  SYMM_HD static bool side_tasks(const TileGrid& g, uint32_t nr) { return nr == 0 && bands(g) > 1; }
  // Band s's reduce tasks: [task_begin, task_end) of tasks(rows).
  SYMM_HD static uint32_t task_begin(const TileGrid& g, uint32_t s) { return s * g.band * (kTileM / kReduceRows); }
  SYMM_HD static uint32_t task_end(const TileGrid& g, uint32_t s) {
    const uint32_t e = (s + 1) * g.band * (kTileM / kReduceRows);
    return e < tasks(g.m) ? e : tasks(g.m);
  }
  // Blocks that reduce while the others compute, of nb (at most half; none with one band or one
  // block): `want`, given by --blocks; else none. With bands and no reduce
  // blocks the compute goes band by band and the CUDA kernel reduces every band but the last in
  // each computing block's spare warps meanwhile (backends/cuda/tile_fused.cu, side_reduce: the
  // compute keeps every SM), the last band after the tiles; this program, whose blocks have no
  // spare warps, takes the same tasks between its bands (MmRsTiles::run).
  // The default bands (default_band_rows), at every world: a band is the fewest tile rows whose
  // tiles over every owner's rows (world x band x tn of kTileM x kTileN) make kBandWaves waves of
  // the nb blocks (1.5 waves of the CUDA kernel's 128 x 256 tiles), at most kBandCap tile rows,
  // the bands then evened out; one band where that leaves fewer than two or the whole product
  // holds fewer than two bands' worth of waves. Measured (scripts/gpu/tile_bands.sh): 16 reduce
  // blocks on 2x H200 (experiments/results/h200x2/tile_bands/), then the side reduce on 2x H100
  // (experiments/results/h100x2/tile_bands_8_side/), then the band rows on 4x H100
  // (experiments/results/h100x4/bands_529f156/ and bands_e29fa5c/: at world 4, 70B M 16384 fastest
  // in 512-row bands, 23 % under one band; M 4096 in two bands; 8B M 4096 in one; at world 2 on the
  // same host, 8B M 16384 3 % slower in 2048-row bands than in 1024, two bands of 8B M 4096 up to
  // 9 % slower than one).
  static constexpr uint32_t kBandWaves = 3;
  static constexpr uint32_t kBandCap = 8;
  SYMM_HD static uint32_t default_band_rows(uint32_t rows, uint32_t n, uint32_t nb, int w) {
    const TileGrid g(rows, n);
    const uint32_t per = uint32_t(w > 0 ? w : 1) * g.tn, waves = kBandWaves * (nb > 0 ? nb : 1);
    if (uint64_t(per) * g.tm < 2ull * waves) return rows;  // under two bands' worth: one band
    uint32_t band = (waves + per - 1) / per;               // per: tiles of one tile row of every owner's rows
    if (band > kBandCap) band = kBandCap;
    const uint32_t bands = g.tm / band;
    if (bands < 2) return rows;
    const uint32_t even = (g.tm + bands - 1) / bands;  // the same tile rows in every band (the last: fewer)
    return (even < kBandCap ? even : kBandCap) * uint32_t(kTileM);
  }
  SYMM_HD static uint32_t reduce_blocks(uint32_t want, uint32_t nb, uint32_t bands) {
    if (bands < 2 || nb < 2) return 0;
    return want < nb / 2 ? want : nb / 2;
  }
  // The first index >= first that is block b's of nb (index % nb == b).
  SYMM_HD static uint32_t first_of(uint32_t first, uint32_t b, uint32_t nb) {
    return first + (b + nb - first % nb) % nb;
  }

  // Blocks of every call: the persistent grid, whatever the shape (`sms` 0: kResidentBlocks); a
  // block with no tile of its own still advances the epoch and takes its reduce tasks.
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
  // Reduce tasks of my rows, and task u's first row and row count.
  SYMM_HD static uint32_t tasks(uint32_t rows) { return (rows + kReduceRows - 1) / kReduceRows; }
  SYMM_HD static uint32_t task_row0(uint32_t u) { return u * kReduceRows; }
  SYMM_HD static uint32_t task_rows(uint32_t rows, uint32_t u) {
    return rows - u * kReduceRows < kReduceRows ? rows - u * kReduceRows : kReduceRows;
  }
  // The compute walk: every owner's band s, one after another (owners rotated, round i = 1 .. w,
  // my own rows last), each in tile index order, numbered across owners and bands: position
  //   t = w * band_begin(s) + (i - 1) * (band_end(s) - band_begin(s)) + (j - band_begin(s))
  // for tile j of band s in round i; compute block b takes the positions t % nc == b of every band
  // in turn. One numbering over every owner, not one per owner: per owner, an owner's band of
  // fewer tiles than blocks left the same blocks the extra tile of every owner (70B M 16384 at
  // world 4: 448 tiles per owner on 132 blocks, 16 tiles on some blocks against 13.6 on average;
  // the CUDA kernel without its reduce and signals 447 us against 367 for the GEMM alone,
  // experiments/results/h100x4/mmrs_diag_f3cd675).
  SYMM_HD static uint32_t walk_begin(const TileGrid& g, int w, uint32_t s) { return uint32_t(w) * band_begin(g, s); }
  SYMM_HD static uint32_t walk_end(const TileGrid& g, int w, uint32_t s) { return uint32_t(w) * band_end(g, s); }
  // Position t (of band s's [walk_begin, walk_end)): its round i (1 .. w) and tile j.
  SYMM_HD static void at(const TileGrid& g, int w, uint32_t s, uint32_t t, int& i, uint32_t& j) {
    const uint32_t b0 = band_begin(g, s), len = band_end(g, s) - b0, r = t - walk_begin(g, w, s);
    i = int(r / len) + 1;
    j = b0 + r % len;
  }
  SYMM_HD static uint32_t band_of(const TileGrid& g, uint32_t j) { return j / (g.band * g.tn); }
  SYMM_HD static uint32_t position(const TileGrid& g, int w, int i, uint32_t j) {
    const uint32_t s = band_of(g, j), b0 = band_begin(g, s);
    return walk_begin(g, w, s) + uint32_t(i - 1) * (band_end(g, s) - b0) + (j - b0);
  }
  // The round in which `producer` computes owner o's tiles.
  SYMM_HD static int round_of(int producer, int o, int w) {
    const int i = ((o - producer) % w + w) % w;
    return i ? i : w;
  }
  // Positions p < x with p % nc == b.
  SYMM_HD static uint32_t below(uint32_t x, uint32_t b, uint32_t nc) { return x > b ? (x - b - 1) / nc + 1 : 0; }
  // Tile j of round i: its block's count of round-i tiles up to it (its signal's count): the block's
  // positions in round i's range of every earlier band, and of band s up to j's.
  SYMM_HD static uint32_t count_at(const TileGrid& g, int w, uint32_t nc, int i, uint32_t j) {
    const uint32_t s = band_of(g, j), t = position(g, w, i, j), b = t % nc;
    uint32_t count = 0;
    for (uint32_t q = 0; q <= s; ++q) {
      const uint32_t lo = position(g, w, i, band_begin(g, q));
      const uint32_t hi = q < s ? lo + (band_end(g, q) - band_begin(g, q)) : t + 1;
      count += below(hi, b, nc) - below(lo, b, nc);
    }
    return count;
  }
  // The compute block of tile j of round i.
  SYMM_HD static uint32_t block_of(const TileGrid& g, int w, uint32_t nc, int i, uint32_t j) {
    return position(g, w, i, j) % nc;
  }
  // The wait before reducing rank r's tile j of my rows (grid g, nc compute blocks): the signal of
  // the block that computed it on rank r, with that tile's count.
  SYMM_HD static uint32_t wait_slot(const TileGrid& g, int w, uint32_t nc, int me, int r, uint32_t j) {
    return pad::flag(kChannel, int(block_of(g, w, nc, round_of(r, me, w), j)), r);
  }
  SYMM_HD static uint32_t wait_value(uint32_t base, const TileGrid& g, int w, uint32_t nc, int me, int r, uint32_t j) {
    return base + count_at(g, w, nc, round_of(r, me, w), j);
  }
  // The most tiles of one owner a block computes: at most one more per band than its share.
  SYMM_HD static uint32_t most_per_owner(const TileGrid& g, uint32_t nc) {
    uint32_t most = 0;
    for (uint32_t s = 0; s < bands(g); ++s) most += (band_end(g, s) - band_begin(g, s) + nc - 1) / nc;
    return most;
  }
  // The tiles task u waits for on each rank: those of its rows' tile row, one per tile column c.
  SYMM_HD static uint32_t task_tile(const TileGrid& g, uint32_t u, uint32_t c) {
    return g.index(task_row0(u) / uint32_t(kTileM), c);
  }
  // Where task u reads rank r's partial rows, in elements from the start of `work` of the rank
  // that holds them (push: my slot r; pull: rank r's buffer at my rows).
  SYMM_HD static std::size_t src_offset(bool push, int r, int me, uint32_t rows, uint32_t n, uint32_t u) {
    return (std::size_t(push ? r : me) * rows + task_row0(u)) * n;
  }
};

// CollArgs::mat: a (M x K/world), b (K/world x N), c (M/world x N), work (symmetric, M x N),
// m = M, n = N, k = K/world, chunk_rows = rows per band (0: the default), reduce_blocks (set by
// the plan: MmRsTileLayout::reduce_blocks). kFault (tests only, core/plan.h's PlanFault): kNoWait,
// the reduce skips its waits.
template <bool kPush, PlanFault kFault = PlanFault::kNone>
struct MmRsTiles {
  using L = MmRsTileLayout;
  // Every block has a side lane (core/verbs.h lane()): the side tasks run there, beside the
  // block's tiles, where the backend runs one (the CUDA kernel's spare warps, the simulator's fused
  // runs); with lanes() == 1 the block takes them between its bands.
  static constexpr bool kSideLane = true;
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& ca) {
    const MatArgs& p = ca.mat;
    const int me = ctx.rank(), w = ctx.world();
    const uint32_t bk = uint32_t(ctx.block()), nb = uint32_t(ctx.blocks());
    const uint32_t nr = p.reduce_blocks, nc = nb - nr;
    const uint32_t rows = p.m / uint32_t(w);
    const TileGrid g = L::grid(rows, p.n, p.chunk_rows);
    const uint32_t last = L::bands(g) - 1;
    const T* a = static_cast<const T*>(p.a);
    const T* b = static_cast<const T*>(p.b);
    T* work = static_cast<T*>(p.work);
    // A side lane's epoch from a counter of its own (kLaneCounter), advanced once a call like its
    // block's: the same value.
    const bool in_lane = ctx.lane() == 1;
    const uint32_t base = L::base(ctx.advance(pad::counter(int(bk), in_lane ? L::kLaneCounter : L::kCounter)));

    const T* srcs[Ctx::kWorldLimit];
    auto task = [&](uint32_t u) {  // 2. reduce task u: wait for its tiles, then sum
      for (int r = 0; r < w; ++r) {
        for (uint32_t col = 0; col < g.tn && kFault != PlanFault::kNoWait; ++col) {
          const uint32_t j = L::task_tile(g, u, col);
          ctx.wait(L::wait_slot(g, w, nc, me, r, j), L::wait_value(base, g, w, nc, me, r, j), MemOrder::kAcquire);
        }
        srcs[r] = (kPush ? work : ctx.peer(work, r)) + L::src_offset(kPush, r, me, rows, p.n, u);
      }
      ctx.template reduce<T>(static_cast<T*>(p.c) + std::size_t(L::task_row0(u)) * p.n, srcs, w,
                             std::size_t(L::task_rows(rows, u)) * p.n, ReduceOp::kSum);
    };
    // With bands and no reduce blocks (the default): a computing block's tasks of every band but
    // the last (every nc-th), the side tasks. In its side lane (lanes() == 2), in row order beside
    // the block's tiles, as the CUDA kernel's spare warps take them; without one, band s - 1's
    // after the block's tiles of band s. Deadlock-free: a block (not its lane) waits on band s - 1's
    // tiles only after its own of band s, and every block computes band s - 1 before waiting on
    // band s - 2's; a lane waits only, on tiles its block and the others compute without waiting.
    const bool side = L::side_tasks(g, nr);
    const bool lane_side = side && ctx.lanes() == 2;
    if (in_lane) {
      if (lane_side)  // side tasks only without reduce blocks: every block computes
        for (uint32_t u = L::first_of(0, bk, nc); u < L::early_tasks(g); u += nc) task(u);
      return;
    }
    if (bk < nc) {
      uint32_t count[Ctx::kWorldLimit] = {};  // my tiles of round i so far: count[i - 1]
      for (uint32_t s = 0; s <= last; ++s) {
        // 1. compute band s: every nc-th position of its walk (owners rotated, my own rows last)
        for (uint32_t t = L::first_of(L::walk_begin(g, w, s), bk, nc); t < L::walk_end(g, w, s); t += nc) {
          int i;
          uint32_t j;
          L::at(g, w, s, t, i, j);
          const int o = L::owner(me, w, i);
          T* dst = (kPush ? ctx.peer(work, o) : work) + L::dst_offset(kPush, o, me, rows, p.n);
          gemm_tile<T>(ctx, g, j, dst, p.n, a + std::size_t(o) * rows * p.k, p.k, b, p.k);
          ctx.signal(o, L::signal_slot(int(bk), me), L::signal_value(base, ++count[i - 1]), MemOrder::kRelease);
        }
        if (side && !lane_side && s > 0)  // 2. band s - 1's side tasks, without a side lane
          for (uint32_t u = L::first_of(L::task_begin(g, s - 1), bk, nc); u < L::task_end(g, s - 1); u += nc) task(u);
      }
    } else {  // every band but the last, beside the compute: every nr-th task, in row order
      for (uint32_t u = bk - nc; u < L::early_tasks(g); u += nr) task(u);
    }
    for (uint32_t u = L::first_of(L::early_tasks(g), bk, nb); u < L::tasks(rows); u += nb)
      task(u);  // the rest (the last band; one band: every task), every block
  }
};

// The mm_rs tile programs' arguments from the plan's (CollArgs::mat: a, b, c, work; M, N, K / world).
inline CollArgs mm_rs_tile_args(const FusedArgs& f, int world) {
  CollArgs c;
  c.mat.a = f.a;
  c.mat.b = f.b;
  c.mat.c = f.c;
  c.mat.work = f.work;
  c.mat.m = uint32_t(f.m), c.mat.n = uint32_t(f.n), c.mat.k = uint32_t(f.k / std::size_t(world));
  return c;
}

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
    CollArgs c = mm_rs_tile_args(f, n);
    using L = MmRsTileLayout;
    const uint32_t rows = uint32_t(f.m / std::size_t(n));
    const int blocks = L::blocks_of(f.sms);
    // Band rows: --chunk-rows's; with --blocks alone grid()'s default bands; else the default's.
    c.mat.chunk_rows = f.chunk_rows ? uint32_t(f.chunk_rows < f.m ? f.chunk_rows : f.m)
                       : f.blocks   ? 0
                                    : L::default_band_rows(rows, uint32_t(f.n), uint32_t(blocks), n);
    const TileGrid g = L::grid(rows, uint32_t(f.n), c.mat.chunk_rows);
    c.mat.reduce_blocks = L::reduce_blocks(uint32_t(f.blocks), uint32_t(blocks), L::bands(g));
#if !defined(__CUDA_ARCH__)
    const uint32_t nc = uint32_t(blocks) - c.mat.reduce_blocks;
    if (L::most_per_owner(g, nc) >= L::kTileStride)
      fail(ErrorCode::kInvalidArgument, std::string("mm_rs.") + kDescriptor.name + ": " + std::to_string(g.tiles()) +
                                            " tiles per owner on " + std::to_string(nc) +
                                            " compute blocks exceed the flag encoding's " +
                                            std::to_string(L::kTileStride - 1) + " per block");
#endif
    plan_entry<kFault>(h);
    h.template launch<MmRsTiles<kPush, kFault>, T>(kMainStream, c, blocks);
  }
};
using MmRsTileStLdReduce = MmRsTileReduceT<false>;
using MmRsTileStPeerReduce = MmRsTileReduceT<true>;

}  // namespace symm
