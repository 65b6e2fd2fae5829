// tile_gemm: the matmul alone as a device program on the verb mma_tile (core/verbs.h): C = A @ B,
// persistent over C's kTileM x kTileN output tiles. The fused device programs (ag_mm_ce_tile_gemm.h,
// mm_rs_tile_reduce.h) walk their tiles the same way; this one is their "matmul alone" baseline
// (core/fused.h fused_baselines: tile_gemm).
//
//   1. block b takes tiles b, b + blocks, b + 2 blocks, ... in row-major tile order (the tiles of
//      one row band run side by side: they share A's rows, consecutive bands share B)
//   2. each tile: mma_tile over the whole depth K, the epilogue stores it into C
//
// Operands (CollArgs::mat): a (m x k), b (k x n), c (m x n), all this rank's, dense row-major.
// No flag, no peer: nothing to order. Blocks: one per SM (FusedArgs::sms), at most the tile count.
#pragma once

#include "core/coll_args.h"
#include "core/verbs.h"

namespace symm {

// The tile grid of an m x n product (tiles of kTileM x bn, the last row / column shorter), tiles
// numbered row-major. bn is kTileN for the verb mma_tile; the CUDA backend's wgmma kernel, which
// runs these programs' tile walks and flag protocols on wider tiles (backends/cuda/tile_fused.cu),
// passes its own width: every walk, flag slot and flag value below is a function of the grid.
struct TileGrid {
  uint32_t m = 0, n = 0, bn = kTileN, tm = 0, tn = 0;
  SYMM_HD TileGrid(uint32_t rows, uint32_t cols, uint32_t tile_n = kTileN)
      : m(rows), n(cols), bn(tile_n), tm((rows + kTileM - 1) / kTileM), tn((cols + tile_n - 1) / tile_n) {}
  SYMM_HD uint32_t tiles() const { return tm * tn; }
  SYMM_HD uint32_t row0(uint32_t t) const { return t / tn * kTileM; }
  SYMM_HD uint32_t col0(uint32_t t) const { return t % tn * bn; }
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
