// The tile GEMM's plain decisions (backends/cuda/tile_sched.h): every tile visited once, in
// groups; the tile width per shape; the operands refused, each in one line.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "backends/cuda/tile_sched.h"

namespace symm::cuda::tile {
namespace {

TEST(TileSched, EveryTileOnceForAnyGroup) {
  for (int m : {1, 127, 128, 129, 4096, 16384 + 5})
    for (int n : {8, 224, 1792, 3584, 1000})
      for (int tn : kTileNs)
        for (int group : {1, 3, 16, 1000}) {
          const TileGrid g = tile_grid(m, n, tn, group);
          std::set<std::pair<int, int>> seen;
          for (int t = 0; t < g.tiles(); ++t) {
            int tm = -1, tc = -1;
            g.coords(t, tm, tc);
            ASSERT_GE(tm, 0);
            ASSERT_LT(tm, g.tiles_m);
            ASSERT_GE(tc, 0);
            ASSERT_LT(tc, g.tiles_n);
            seen.insert({tm, tc});
          }
          EXPECT_EQ(int(seen.size()), g.tiles()) << m << " " << n << " " << tn << " " << group;
        }
}

TEST(TileSched, ConsecutiveTilesStayInTheirGroup) {
  // 70B, M 16384, tile 128 x 256: 128 x 14 tiles; with groups of 16 rows, the first 132 tiles (a
  // wave on an H200) touch 16 tile rows and 9 tile columns instead of 1 row and all 14 columns.
  const TileGrid g = tile_grid(16384, 3584, 256, 16);
  std::set<int> rows, cols;
  for (int t = 0; t < 132; ++t) {
    int tm, tn;
    g.coords(t, tm, tn);
    rows.insert(tm), cols.insert(tn);
  }
  EXPECT_EQ(rows.size(), 16u);
  EXPECT_EQ(cols.size(), 9u);
  int tm, tn;
  g.coords(16, tm, tn);  // column-major inside the group
  EXPECT_EQ(tm, 0);
  EXPECT_EQ(tn, 1);
}

TEST(TileSched, WidthFillsTheLastWave) {
  // 8B, M 4096 on 132 SMs: 128 x 256 gives 224 tiles (2 waves, the second 70 % full); 128 x 224
  // gives 256 (2 waves, 97 % full) and each wave is 7/8 as long.
  EXPECT_EQ(choose_tile_n(4096, 1792, 132), 224);
  EXPECT_EQ(choose_tile_n(16384, 3584, 132), 256);  // 1792 tiles: 14 waves, 97 % full
  for (int m : {4096, 8192, 16384})
    for (int n : {1792, 3584}) EXPECT_TRUE(is_tile_n(choose_tile_n(m, n, 132)));
}

TEST(TileSched, Refusals) {
  alignas(16) static uint16_t buf[64];
  GemmArgs g = gemm_args(buf, buf, buf, 1024, 1024, 1024, DType::kBF16);
  EXPECT_EQ(refusal(g), "");
  g.dtype = DType::kFP16;
  EXPECT_EQ(refusal(g), "");
  g.dtype = DType::kFP32;
  EXPECT_EQ(refusal(g), "tile gemm: bf16 and fp16 only");
  g = gemm_args(buf, buf, buf, 1000, 1000, 1000, DType::kBF16);
  EXPECT_EQ(refusal(g), "") << "edges are taken";
  g = gemm_args(buf, buf, buf, 64, 100, 64, DType::kBF16);
  EXPECT_NE(refusal(g).find("multiples of 8"), std::string::npos);
  g = gemm_args(buf + 1, buf, buf, 64, 64, 64, DType::kBF16);
  EXPECT_NE(refusal(g).find("not 16-byte aligned"), std::string::npos);
  g = gemm_args(buf, buf, buf, 0, 64, 64, DType::kBF16);
  EXPECT_NE(refusal(g).find("empty product"), std::string::npos);
  g = gemm_args(buf, buf, buf, 64, 64, 64, DType::kBF16);
  g.lda = 32;
  EXPECT_NE(refusal(g).find("shorter than its row"), std::string::npos);
  EXPECT_EQ(refusal(g).find('\n'), std::string::npos);
}

}  // namespace
}  // namespace symm::cuda::tile
