// The tile programs' walks and flag protocol (core/algos/ag_mm_ce_tile_gemm.h AgMmTileWalk,
// core/algos/mm_rs_tile_reduce.h MmRsTileLayout) at the verb's tile width and at the CUDA wgmma
// kernel's wider ones (backends/cuda/tile_fused.cu runs the same helpers on 128 x 256 tiles): every
// element of C is computed once, and every reduce wait names the flag value its tile's signal writes.
// MmRsAccPushLayout (core/algos/mm_rs_tile_acc.h): its merged walk is a bijection, each block's flag
// values only grow, and every peer's tile of my rows comes before my own, by about a wave.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/algos/ag_mm_ce_tile_gemm.h"
#include "core/algos/mm_rs_tile_acc.h"
#include "core/algos/mm_rs_tile_reduce.h"

namespace symm {
namespace {

TEST(TileWalks, AgMmCoversEveryElementOnceAtEveryWidth) {
  for (uint32_t bn : {128u, 256u})
    for (int w : {1, 2, 4})
      for (uint32_t nb : {1u, 3u, 7u}) {
        MatArgs p;
        p.m = uint32_t(w) * 700, p.n = 520, p.chunk_rows = 256;  // a short last chunk, a short last column
        std::vector<int> hits(std::size_t(p.m) * p.n, 0);
        for (int me = 0; me < w; ++me) {
          std::fill(hits.begin(), hits.end(), 0);
          for (uint32_t b = 0; b < nb; ++b) {
            AgMmTileWalk walk(p, me, w, bn);
            for (uint32_t t = b; walk.seek(t); t += nb) {
              const TileGrid g = walk.grid();
              const uint32_t j = walk.local(t);
              if (walk.seg) {
                EXPECT_EQ(walk.flag_slot(), pad::plan_flag(pad::kPlanData, int(walk.chunk()), walk.peer()));
              }
              EXPECT_NE(walk.seg == 0, walk.peer() != me);
              for (int r = 0; r < g.rows(j); ++r)
                for (int c = 0; c < g.cols(j); ++c)
                  ++hits[(walk.row0() + g.row0(j) + uint32_t(r)) * p.n + g.col0(j) + uint32_t(c)];
            }
          }
          for (int h : hits) ASSERT_EQ(h, 1) << "bn " << bn << " world " << w << " blocks " << nb;
        }
      }
}

TEST(TileWalks, MmRsWaitsMatchTheSignalsAtEveryWidth) {
  using L = MmRsTileLayout;
  for (uint32_t bn : {128u, 256u})
    for (uint32_t band_rows : {0u, 128u, 100000u})
      for (int w : {2, 3, 4})
        for (uint32_t nc : {1u, 5u, 66u, 132u}) {
          const uint32_t rows = 300, n = 1792;
          const TileGrid g = L::grid(rows, n, band_rows, bn);
          const uint32_t base = L::base(3);
          // Every producer r's walk, as the program runs it: block b takes every nc-th position of
          // each band's walk and signals owner o with its count of o's tiles so far; the owner's
          // wait for that tile names the same slot and value.
          for (int r = 0; r < w; ++r) {
            std::vector<int> hits(std::size_t(w) * g.tiles(), 0);
            std::vector<uint32_t> per_block(nc, 0);
            for (uint32_t b = 0; b < nc; ++b) {
              std::vector<uint32_t> count(std::size_t(w) + 1, 0), last(std::size_t(w) + 1, 0);
              for (uint32_t s = 0; s < L::bands(g); ++s)
                for (uint32_t t = L::first_of(L::walk_begin(g, w, s), b, nc); t < L::walk_end(g, w, s); t += nc) {
                  int i;
                  uint32_t j;
                  L::at(g, w, s, t, i, j);
                  ASSERT_GE(i, 1);
                  ASSERT_LE(i, w);
                  ASSERT_EQ(L::band_of(g, j), s);
                  ASSERT_EQ(L::position(g, w, i, j), t);
                  const int o = L::owner(r, w, i);
                  ASSERT_EQ(L::round_of(r, o, w), i);
                  if (count[std::size_t(i)]) {
                    EXPECT_GT(j, last[std::size_t(i)]) << "an owner's tiles in index order";
                  }
                  last[std::size_t(i)] = j;
                  ++count[std::size_t(i)], ++per_block[b];
                  ++hits[std::size_t(o) * g.tiles() + j];
                  EXPECT_EQ(L::wait_slot(g, w, nc, o, r, j), L::signal_slot(int(b), r));
                  EXPECT_EQ(L::wait_value(base, g, w, nc, o, r, j), L::signal_value(base, count[std::size_t(i)]));
                }
              for (int i = 1; i <= w; ++i) EXPECT_LE(count[std::size_t(i)], L::most_per_owner(g, nc));
            }
            for (int h : hits) ASSERT_EQ(h, 1) << "every owner's tile once: bn " << bn << " world " << w;
            // One numbering over every owner: the blocks' shares differ by at most one tile.
            const auto [lo, hi] = std::minmax_element(per_block.begin(), per_block.end());
            EXPECT_LE(*hi - *lo, 1u) << "bn " << bn << " world " << w << " blocks " << nc;
          }
          // Every task's waits cover every tile that holds one of its rows, and only those.
          for (uint32_t u = 0; u < L::tasks(rows); ++u)
            for (uint32_t col = 0; col < g.tn; ++col) {
              const uint32_t j = L::task_tile(g, u, col);
              EXPECT_EQ(g.row0(j), L::task_row0(u) / uint32_t(kTileM) * uint32_t(kTileM));
              EXPECT_EQ(g.col0(j), col * bn);
            }
        }
}

// The bands of the mm_rs tile programs: their tile ranges partition the grid in order, their
// reduce tasks partition my rows, a band's tasks wait only on that band's tiles, and the default
// cuts an owner's rows into at least kMinBands bands of at most kTileGroup tile rows.
TEST(TileWalks, MmRsBandsPartitionTilesAndTasks) {
  using L = MmRsTileLayout;
  for (uint32_t rows : {1u, 100u, 128u, 300u, 1024u, 2048u, 8192u, 12000u})
    for (uint32_t band_rows : {0u, 1u, 128u, 300u, 512u, 2048u, 100000u})
      for (uint32_t bn : {128u, 256u}) {
        const TileGrid g = L::grid(rows, 1792, band_rows, bn);
        ASSERT_GE(L::bands(g), 1u);
        EXPECT_LE(g.group, kTileGroup);
        EXPECT_EQ(g.band % g.group, 0u) << "a band is whole groups";
        if (band_rows == 0) {
          EXPECT_LE(g.band, kTileGroup);
          if (g.tm >= L::kMinBands) {
            EXPECT_GE(L::bands(g), L::kMinBands) << rows;
          } else {
            EXPECT_EQ(g.band, 1u);
          }
        } else {
          EXPECT_EQ(g.band, band_rows >= rows ? g.tm : std::min(std::max(band_rows / uint32_t(kTileM), 1u), g.tm));
        }
        if (band_rows >= rows && g.tm % kTileGroup == 0) {
          EXPECT_EQ(g.group, kTileGroup) << "one band: the usual groups";
        }
        uint32_t next_tile = 0, next_task = 0;
        for (uint32_t s = 0; s < L::bands(g); ++s) {
          ASSERT_EQ(L::band_begin(g, s), next_tile);
          ASSERT_EQ(L::task_begin(g, s), next_task);
          ASSERT_LT(L::band_begin(g, s), L::band_end(g, s));
          for (uint32_t j = L::band_begin(g, s); j < L::band_end(g, s); ++j) EXPECT_EQ(g.trow(j) / g.band, s);
          for (uint32_t u = L::task_begin(g, s); u < L::task_end(g, s); ++u)
            for (uint32_t col = 0; col < g.tn; ++col) {
              const uint32_t j = L::task_tile(g, u, col);
              EXPECT_GE(j, L::band_begin(g, s));
              EXPECT_LT(j, L::band_end(g, s));
            }
          next_tile = L::band_end(g, s), next_task = L::task_end(g, s);
        }
        EXPECT_EQ(next_tile, g.tiles());
        EXPECT_EQ(next_task, L::tasks(rows));
      }
}

// The default of the mm_rs tile programs: bands of kBandWaves waves of tiles over every owner (at most kBandCap tile
// rows, evened out) and no reduce blocks (the side tasks), where that leaves two bands; one band otherwise. On 132
// blocks: 70B (N 3584) M 16384 at world 2 in bands of 1024 rows, at world 4 of 512 (the fastest measured on 4x H100),
// M 4096 at world 4 in 2 bands; 8B (N 1792) M 4096 in one, M 16384 in bands of 1024 rows. Given bands without --blocks
// take no reduce blocks, --blocks takes them, never more than half the grid.
TEST(TileWalks, MmRsDefaultReduceBlocks) {
  using L = MmRsTileLayout;
  auto nr = [](uint32_t m, uint32_t n, int w, uint32_t want = 0, uint32_t band_rows = 0) {
    const uint32_t rows = m / uint32_t(w), nb = 132;
    const uint32_t br = band_rows ? band_rows : (want ? 0 : L::default_band_rows(rows, n, nb, w));
    return L::reduce_blocks(want, nb, L::bands(L::grid(rows, n, br)));
  };
  auto band_rows = [](uint32_t m, uint32_t n, int w, uint32_t nb = 132) {
    return L::default_band_rows(m / uint32_t(w), n, nb, w);
  };
  EXPECT_EQ(band_rows(16384, 3584, 2), 1024u);
  EXPECT_EQ(band_rows(16384, 3584, 4), 512u);
  EXPECT_EQ(band_rows(4096, 3584, 4), 512u) << "two bands of 4 tile rows";
  EXPECT_EQ(band_rows(4096, 1792, 4), 1024u) << "one band: rows";
  EXPECT_EQ(band_rows(16384, 1792, 2), 1024u) << "15 tile rows a band, capped at 8";
  EXPECT_EQ(band_rows(4096, 1792, 2), 2048u) << "one band: under two bands' worth of waves";
  EXPECT_EQ(band_rows(4096, 3584, 2), 1024u);
  EXPECT_EQ(band_rows(16384, 3584, 8), 256u);
  EXPECT_EQ(band_rows(16384, 3584, 2, 66), 512u) << "fewer blocks (a team of 2 on one GPU): smaller bands";
  for (int w : {2, 3, 4, 5, 8})
    for (uint32_t m : {128u * 8, 4096u, 16384u, 12000u * 8})
      for (uint32_t n : {256u, 1792u, 3584u}) {
        const uint32_t rows = m / uint32_t(w), br = band_rows(m, n, w);
        const TileGrid g = L::grid(rows, n, br);
        if (br >= rows) continue;  // one band
        EXPECT_GE(L::bands(g), 2u) << w << " " << m << " " << n;
        EXPECT_LE(g.band, L::kBandCap);
        EXPECT_TRUE(g.band == L::kBandCap || uint64_t(w) * g.band * g.tn >= uint64_t(L::kBandWaves) * 132)
            << "a band holds kBandWaves waves unless capped: " << w << " " << m << " " << n;
      }
  EXPECT_EQ(nr(16384, 3584, 2), 0u);
  EXPECT_EQ(nr(16384, 1792, 2), 0u);
  EXPECT_EQ(nr(4096, 3584, 2), 0u);
  EXPECT_TRUE(L::side_tasks(L::grid(8192, 3584, 0), 0));
  EXPECT_FALSE(L::side_tasks(L::grid(8192, 3584, 0), 16)) << "reduce blocks take the early tasks";
  EXPECT_FALSE(L::side_tasks(L::grid(8192, 3584, 8192), 0)) << "one band: nothing beside the compute";
  EXPECT_EQ(nr(4096, 1792, 2), 0u);
  EXPECT_EQ(L::bands(L::grid(2048, 1792, L::default_band_rows(2048, 1792, 132, 2))), 1u);
  for (int w : {3, 4, 8}) EXPECT_EQ(nr(16384, 3584, w), 0u) << w;  // 16384 / 3 rows: not whole tile rows
  EXPECT_TRUE(L::side_tasks(L::grid(4096, 3584, band_rows(16384, 3584, 4)), 0)) << "bands at world 4 too";
  EXPECT_EQ(L::bands(L::grid(5461, 3584, 5461)), 1u) << "rows or more: one band, a short last tile row included";
  EXPECT_EQ(nr(16384, 3584, 2, 0, 1024), 0u);
  EXPECT_EQ(nr(16384, 3584, 2, 24), 24u);
  EXPECT_EQ(nr(16384, 3584, 2, 500), 66u);
  EXPECT_EQ(nr(16384, 3584, 2, 24, 100000), 0u) << "one band: nothing to reduce beside the compute";
}

// The grouped order covers every tile once at every group size, and the tiles that run at once
// (consecutive indices) stay within `group` tile rows.
TEST(TileWalks, GroupedGridCoversEveryTileOnce) {
  for (uint32_t group : {1u, 3u, 16u, 100u})
    for (uint32_t rows : {1u, 128u, 300u, 2100u})
      for (uint32_t bn : {128u, 256u}) {
        const TileGrid g(rows, 1000, bn, group);
        std::vector<int> hits(std::size_t(g.tm) * g.tn, 0);
        for (uint32_t t = 0; t < g.tiles(); ++t) {
          ASSERT_LT(g.trow(t), g.tm);
          ASSERT_LT(g.tcol(t), g.tn);
          ++hits[std::size_t(g.trow(t)) * g.tn + g.tcol(t)];
          EXPECT_EQ(g.trow(t) / group, t / (group * g.tn)) << "tile " << t << " leaves its group";
          EXPECT_EQ(g.row0(t), g.trow(t) * uint32_t(kTileM));
          EXPECT_EQ(g.col0(t), g.tcol(t) * bn);
          EXPECT_EQ(g.index(g.trow(t), g.tcol(t)), t);
        }
        for (int h : hits) ASSERT_EQ(h, 1) << "group " << group << " rows " << rows << " bn " << bn;
      }
  // Group 1 is row-major.
  const TileGrid r(1000, 1000, 128, 1);
  for (uint32_t t = 0; t < r.tiles(); ++t) EXPECT_EQ(r.trow(t) * r.tn + r.tcol(t), t);
}

// The walk of mm_rs.tile_st_peer_acc at worlds 2..8, tile counts below and above a wave, block counts
// that do and do not divide them: position and at are inverse, every (round, tile) has one position;
// a block's releases at an owner carry growing values (the waiter's >= is right); and for every
// rank's own tile j the position of every peer's tile j (on the peer, same walk) comes earlier, by at
// least T positions, and its wait names that block's slot and that position's value.
TEST(TileWalks, MmRsAccPushWalkIsABijectionAndPeersComeFirst) {
  using P = MmRsAccPushLayout;
  for (int w : {2, 3, 4, 8})
    for (uint32_t tiles : {1u, 5u, 66u, 67u, 300u, 896u})
      for (uint32_t nb : {1u, 7u, 132u}) {
        const std::string at =
            "world " + std::to_string(w) + " tiles " + std::to_string(tiles) + " blocks " + std::to_string(nb);
        std::vector<int> seen(std::size_t(w) * tiles, 0);
        for (uint32_t t = 0; t < P::positions(tiles, w); ++t) {
          int i;
          uint32_t j;
          P::at(tiles, w, t, i, j);
          ASSERT_TRUE(i >= 1 && i <= w && j < tiles) << at << " position " << t;
          ASSERT_EQ(P::position(tiles, w, i, j), t) << at;
          ++seen[std::size_t(i - 1) * tiles + j];
        }
        for (int v : seen) ASSERT_EQ(v, 1) << at;
        // A block's values at one owner (round i) grow with its positions.
        for (uint32_t b = 0; b < nb; ++b)
          for (int i = 1; i < w; ++i) {
            uint32_t last = 0;
            for (uint32_t t = b; t < P::positions(tiles, w); t += nb) {
              int ti;
              uint32_t j;
              P::at(tiles, w, t, ti, j);
              if (ti != i) continue;
              ASSERT_GT(P::signal_value(0, t, nb), last) << at;
              last = P::signal_value(0, t, nb);
            }
          }
        for (int me = 0; me < w; ++me)
          for (uint32_t j = 0; j < tiles; ++j) {
            const uint32_t mine = P::position(tiles, w, w, j);
            for (int r = 0; r < w; ++r) {
              if (r == me) continue;
              const uint32_t theirs = P::position(tiles, w, MmRsTileLayout::round_of(r, me, w), j);
              ASSERT_GE(mine, theirs + uint32_t(w - 1) * (tiles - j - 1) + j + 1)
                  << at << " rank " << me << " tile " << j << " from " << r;
              EXPECT_EQ(P::wait_slot(tiles, nb, w, me, r, j), MmRsTileLayout::signal_slot(int(theirs % nb), r)) << at;
              EXPECT_EQ(P::wait_value(1024, tiles, nb, w, me, r, j), P::signal_value(1024, theirs, nb)) << at;
            }
          }
        EXPECT_EQ(P::waves(tiles, nb, w), (uint32_t(w) * tiles + nb - 1) / nb) << at;
      }
}

}  // namespace
}  // namespace symm
