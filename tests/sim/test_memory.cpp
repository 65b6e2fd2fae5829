// Host memory of a data-mode run: the heaps hold the pages a run uses, never the whole
// symmetric heap (a flagged-packet program's fixed regions are 32 MiB per rank on 8 ranks);
// and HeapBytes, the lazily materialised bytes behind them, reads 0xFF where nothing wrote.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/sim/memory.h"
#include "backends/sim/sim.h"
#include "core/heap_layout.h"

namespace symm::sim {
namespace {

RunSpec h200x8_spec(const char* algo, std::size_t bytes) {
  RunSpec s;
  s.machine = Machine::by_name("h200x8");
  s.world = 8;
  s.algo = &find_algo(algo);
  s.bytes = bytes;
  return s;
}

// Every rank's `in` and `out`, plus the packets each rank receives: every peer's data (the
// whole `in` of an all_reduce, one rank's share of an all_gather) at twice its size (each
// 4-byte word travels with its epoch). Flagged-packet programs touch nothing else.
std::size_t ll_need(const RunSpec& s) {
  const AlgoInfo& a = *s.algo;
  const std::size_t in = a.in_bytes(s.bytes, s.world), out = a.out_bytes(s.bytes, s.world);
  return std::size_t(s.world) * (in + out + std::size_t(s.world) * 2 * in);
}

std::size_t whole_heaps(const RunSpec& s) {
  return std::size_t(s.world) * heap_layout(*s.algo, s.bytes, s.world, HeapUse::kOneProgram).total;
}

TEST(HostMemory, LlAllReduceHoldsTheBytesItMoves) {
  const RunSpec s = h200x8_spec("all_reduce.one_shot_ll", 1 << 20);
  const RunResult r = run(s);
  ASSERT_LE(r.max_rel_err, r.err_bound);
  // 8 x 1 MiB: 144 MiB of in, out and packets, of 272 MiB of heaps.
  EXPECT_LE(r.heap_bytes, ll_need(s));
  EXPECT_GE(r.heap_bytes, std::size_t(s.world) * 2 * s.bytes);  // at least every in and out
  EXPECT_LT(r.heap_bytes, whole_heaps(s) * 6 / 10);
}

TEST(HostMemory, LlAllGatherHoldsTheBytesItMoves) {
  RunSpec s = h200x8_spec("all_gather.push_ll", 1 << 20);
  s.calls = 2;  // the second call's packets go to the other half of every region
  const RunResult r = run(s);
  ASSERT_LE(r.max_rel_err, r.err_bound);
  EXPECT_LE(r.heap_bytes, std::size_t(s.calls) * ll_need(s));
  EXPECT_LT(r.heap_bytes, whole_heaps(s) / 4);
}

TEST(HostMemory, TimingOnlyHoldsNoHeap) {
  RunSpec s = h200x8_spec("all_reduce.one_shot_ll", 1 << 20);
  s.timing_only = true;
  EXPECT_EQ(run(s).heap_bytes, 0u);
}

TEST(HeapBytes, UnwrittenBytesRead0xFF) {
  HeapBytes h;
  h.reset(4 * HeapBytes::kPage);
  EXPECT_EQ(h.pages_materialised(), 0u);
  EXPECT_TRUE(h.unwritten_page(HeapBytes::kPage));
  const uint8_t* p = h.read(HeapBytes::kPage + 16, 32);
  for (int i = 0; i < 32; ++i) ASSERT_EQ(p[i], 0xFF) << i;
  EXPECT_EQ(h.pages_materialised(), 1u);
  EXPECT_FALSE(h.unwritten_page(HeapBytes::kPage));
}

TEST(HeapBytes, APartialWriteKeepsTheRestOfItsPages) {
  HeapBytes h;
  h.reset(4 * HeapBytes::kPage);
  // Pages 1 and 2 written whole, pages 0 and 3 in part: their other bytes still read 0xFF.
  const std::size_t lo = HeapBytes::kPage - 64, n = 2 * HeapBytes::kPage + 128;
  std::memset(h.write(lo, n), 7, n);
  EXPECT_EQ(h.pages_materialised(), 4u);
  const uint8_t* all = h.read(0, 4 * HeapBytes::kPage);
  for (std::size_t i = 0; i < 4 * HeapBytes::kPage; ++i) ASSERT_EQ(all[i], (i >= lo && i < lo + n) ? 7 : 0xFF) << i;
}

TEST(HeapBytes, PoisonMakesBytesUnwrittenAgain) {
  HeapBytes h;
  h.reset(3 * HeapBytes::kPage);
  std::memset(h.write(0, 3 * HeapBytes::kPage), 1, 3 * HeapBytes::kPage);
  // Page 1 whole (marked, not written), 32 bytes of page 2 (written).
  h.poison(HeapBytes::kPage, HeapBytes::kPage + 32);
  EXPECT_TRUE(h.unwritten_page(HeapBytes::kPage));
  EXPECT_FALSE(h.unwritten_page(2 * HeapBytes::kPage));
  const uint8_t* all = h.read(0, 3 * HeapBytes::kPage);
  for (std::size_t i = 0; i < 3 * HeapBytes::kPage; ++i)
    ASSERT_EQ(all[i], (i >= HeapBytes::kPage && i < 2 * HeapBytes::kPage + 32) ? 0xFF : 1) << i;
}

TEST(HeapBytes, RecycledStorageStartsUnwritten) {
  {
    HeapBytes h;
    h.reset(2 * HeapBytes::kPage);
    std::memset(h.write(0, 2 * HeapBytes::kPage), 0, 2 * HeapBytes::kPage);
  }  // back to the pool, holding zeros
  HeapBytes h;
  h.reset(2 * HeapBytes::kPage);
  const uint8_t* p = h.read(0, 2 * HeapBytes::kPage);
  for (std::size_t i = 0; i < 2 * HeapBytes::kPage; ++i) ASSERT_EQ(p[i], 0xFF) << i;
}

}  // namespace
}  // namespace symm::sim
