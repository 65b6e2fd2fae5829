// tile_gemm: the matmul alone as a device program on the verb mma_tile (core/verbs.h): C = A @ B,
// persistent over C's kTileM x kTileN output tiles. The fused device programs (ag_mm_ce_tile_gemm.h,
// mm_rs_tile_reduce.h) walk their tiles the same way; this one is their "matmul alone" baseline
// (core/fused.h fused_baselines: tile_gemm).
//
//   1. block b takes tiles b, b + blocks, b + 2 blocks, ... in TileGrid's grouped order (the tiles
//      running at once share a few row bands of A and column bands of B)
//   2. each tile: mma_tile over the whole depth K, the epilogue stores it into C
//
// Operands (CollArgs::mat): a (m x k), b (k x n), c (m x n), all this rank's, dense row-major.
// No flag, no peer: nothing to order. Blocks: one per SM (FusedArgs::sms), at most the tile count.
#pragma once

#include "core/coll_args.h"
#include "core/verbs.h"

namespace symm {

// The tile grid of an m x n product (tiles of kTileM x bn, the last row / column shorter) and the
// order a persistent grid visits it: tile t sits in group t / (group * tn) of `group` tile rows,
// column-major inside the group, so the tiles that run at once share a few row bands of A and a
// few column bands of B, which stay in L2 while every block walks down K (row-major order, the
// order of group 1, runs a tile wave across all of B). bn is kTileN for the verb mma_tile; the
// CUDA backend's wgmma kernel, which runs these programs' tile walks and flag protocols on wider
// tiles (backends/cuda/tile_fused.cu), passes its own width: every walk, flag slot and flag value
// below is a function of the grid.
inline constexpr uint32_t kTileGroup = 16;  // tile rows per group (the CUDA tile GEMM's default too)

// Tile t of a tm x tn grid of tiles visited in groups of `group` tile rows, column-major inside
// each group: its tile row and tile column. The one definition of the order, for TileGrid below
// and the CUDA tile GEMMs' own grids (backends/cuda/tile_sched.h, whose tiles may be 64 rows).
SYMM_HD void grouped_tile(uint32_t t, uint32_t tm, uint32_t tn, uint32_t group, uint32_t& row, uint32_t& col) {
  const uint32_t per = group * tn, first = t / per * group;
  const uint32_t rows = tm - first < group ? tm - first : group, r = t - t / per * per;
  row = first + r % rows;
  col = r / rows;
}

struct TileGrid {
  uint32_t m = 0, n = 0, bn = kTileN, tm = 0, tn = 0, group = kTileGroup;
  // Tile rows per band of a program that walks the grid band by band (whole groups; 0: no bands).
  // Only the mm_rs tile programs use it (core/algos/mm_rs_tile_reduce.h MmRsTileLayout::grid).
  uint32_t band = 0;
  SYMM_HD TileGrid(uint32_t rows, uint32_t cols, uint32_t tile_n = kTileN, uint32_t rows_per_group = kTileGroup)
      : m(rows),
        n(cols),
        bn(tile_n),
        tm((rows + kTileM - 1) / kTileM),
        tn((cols + tile_n - 1) / tile_n),
        group(rows_per_group ? rows_per_group : 1) {}
  SYMM_HD uint32_t tiles() const { return tm * tn; }
  // Tile t's tile row and tile column.
  SYMM_HD uint32_t trow(uint32_t t) const {
    uint32_t r, c;
    grouped_tile(t, tm, tn, group, r, c);
    return r;
  }
  SYMM_HD uint32_t tcol(uint32_t t) const {
    uint32_t r, c;
    grouped_tile(t, tm, tn, group, r, c);
    return c;
  }
  // The index of the tile at (tile row tr, tile column tc): trow / tcol's inverse.
  SYMM_HD uint32_t index(uint32_t tr, uint32_t tc) const {
    const uint32_t first = tr / group * group;
    return first * tn + tc * (tm - first < group ? tm - first : group) + (tr - first);
  }
  SYMM_HD uint32_t row0(uint32_t t) const { return trow(t) * kTileM; }
  SYMM_HD uint32_t col0(uint32_t t) const { return tcol(t) * bn; }
  SYMM_HD int rows(uint32_t t) const { return int(m - row0(t) < uint32_t(kTileM) ? m - row0(t) : kTileM); }
  SYMM_HD int cols(uint32_t t) const { return int(n - col0(t) < bn ? n - col0(t) : bn); }
};

// Tile t of grid g: C[row0 + ..] = A[row0 + .., :] @ B[:, col0 + ..], leading dimensions lda, n, ldc.
template <class T, class Ctx>
SYMM_HD void gemm_tile(Ctx& ctx, const TileGrid& g, uint32_t t, T* c, std::size_t ldc, const T* a, std::size_t lda,
                       const T* b, uint32_t k) {
  const std::size_t r0 = g.row0(t), c0 = g.col0(t);
  ctx.template mma_tile<T>(c + r0 * ldc + c0, ldc, a + r0 * lda, lda, b + c0, g.n, g.rows(t), g.cols(t), int(k));
}

// Blocks of a persistent tile program: `sms` (0: kResidentBlocks), at most `tiles`, at least 1.
SYMM_HD constexpr int tile_blocks(int sms, uint32_t tiles) {
  const int want = sms > 0 ? sms : kResidentBlocks;
  return tiles == 0 ? 1 : (uint32_t(want) < tiles ? want : int(tiles));
}

struct TileGemm {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& ca) {
    const MatArgs& p = ca.mat;
    const TileGrid g(p.m, p.n);
    for (uint32_t t = uint32_t(ctx.block()); t < g.tiles(); t += uint32_t(ctx.blocks()))
      gemm_tile<T>(ctx, g, t, static_cast<T*>(p.c), p.n, static_cast<const T*>(p.a), p.k, static_cast<const T*>(p.b),
                   p.k);
  }
};

}  // namespace symm
