// The tile GEMM's plain decisions (backends/cuda/tile_gemm.h), kept free of CUDA so that the CPU
// tests check them: the tiles of a product, the order in which a persistent grid visits them, the
// tile width that suits a shape, and the operands the kernel refuses.
#pragma once

#include <cstdint>
#include <string>

#include "core/common.h"
#include "core/plan.h"

namespace symm::cuda::tile {

inline constexpr int kTileM = 128;  // two consumer warpgroups of 64 rows each
inline constexpr int kTileK = 64;   // one 128-byte swizzle row of 16-bit elements
// The tile widths compiled (tile_gemm.cu); each is a wgmma N (a multiple of 8, at most 256).
inline constexpr int kTileNs[] = {256, 224, 192, 128};
inline constexpr int kDefaultGroup = 16;  // tile rows per rasterisation group

// The tiles of an m x n product and the order a persistent grid visits them: block b takes
// tiles b, b + grid, b + 2 grid, ...; tile t sits in group t / (group * tiles_n) of `group` tile
// rows, column-major inside it. Consecutive tiles (those running at once) then share a few
// tile rows of A and a few tile columns of B, which stay in L2 while the grid walks down K.
struct TileGrid {
  int tiles_m = 0, tiles_n = 0, group = kDefaultGroup;

  SYMM_HD int tiles() const { return tiles_m * tiles_n; }
  SYMM_HD void coords(int t, int& tm, int& tn) const {
    const int per_group = group * tiles_n;
    const int g = t / per_group;
    const int first = g * group;
    const int rows = tiles_m - first < group ? tiles_m - first : group;
    const int r = t - g * per_group;
    tm = first + r % rows;
    tn = r / rows;
  }
};

// The kernel's parameters besides the two tensor maps (tile_gemm.cu).
struct TileGemmParams {
  void* c = nullptr;
  const void* c_in = nullptr;
  std::size_t ldc = 0;
  int m = 0, n = 0, k = 0;
  TileGrid grid;
};

inline TileGrid tile_grid(int m, int n, int tile_n, int group) {
  TileGrid g;
  g.tiles_m = (m + kTileM - 1) / kTileM;
  g.tiles_n = (n + tile_n - 1) / tile_n;
  g.group = group;
  return g;
}

// Whether `tile_n` is one of the compiled widths.
inline bool is_tile_n(int tile_n) {
  for (int t : kTileNs)
    if (t == tile_n) return true;
  return false;
}

// The width with the least predicted time for m x n on `blocks` persistent blocks: every block
// runs ceil(tiles / blocks) tiles (the last wave counts whole), a tile costs its area over the
// width's relative speed (wide tiles reuse A more; 224 also loads 32 columns of B it drops).
inline int choose_tile_n(int m, int n, int blocks) {
  auto speed = [](int tn) { return tn == 256 ? 1.0 : tn == 224 ? 0.98 : tn == 192 ? 0.95 : 0.88; };
  int best = kTileNs[0];
  double best_cost = 0;
  for (int tn : kTileNs) {
    const TileGrid g = tile_grid(m, n, tn, kDefaultGroup);
    const double waves = double((g.tiles() + blocks - 1) / blocks);
    const double cost = waves * tn / speed(tn);
    if (best_cost == 0 || cost < best_cost) best = tn, best_cost = cost;
  }
  return best;
}

// Why the tile GEMM cannot take g ("" when it can). The kernel reads A and B through tensor maps
// (16-byte aligned bases, row strides a multiple of 16 bytes) and stores C in 4-byte pairs.
inline std::string refusal(const GemmArgs& g) {
  auto shape = [&] {
    return " (m " + std::to_string(g.m) + " n " + std::to_string(g.n) + " k " + std::to_string(g.k) + " lda " +
           std::to_string(g.lda) + " ldb " + std::to_string(g.ldb) + " ldc " + std::to_string(g.ldc) + ")";
  };
  if (g.dtype != DType::kBF16 && g.dtype != DType::kFP16) return "tile gemm: bf16 and fp16 only";
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return "tile gemm: empty product" + shape();
  if (g.lda < std::size_t(g.k) || g.ldb < std::size_t(g.n) || g.ldc < std::size_t(g.n))
    return "tile gemm: a leading dimension is shorter than its row" + shape();
  if (g.lda % 8 || g.ldb % 8 || g.ldc % 8)
    return "tile gemm: leading dimensions must be multiples of 8 elements (16 bytes, TMA)" + shape();
  for (const void* p : {g.a, g.b, static_cast<const void*>(g.c), g.c_in})
    if (reinterpret_cast<std::uintptr_t>(p) % 16) return "tile gemm: an operand is not 16-byte aligned" + shape();
  if (!g.a || !g.b || !g.c) return "tile gemm: a null operand" + shape();
  return "";
}

}  // namespace symm::cuda::tile
