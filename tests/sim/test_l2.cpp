// The L2 model (backends/sim/l2.h): which bytes one GPU's L2 holds, and what a transfer pays for
// them (transfers.cpp l2_miss). Golden times on tests/sim/tiny.ini made a team machine (one GPU):
// launch 1 us in a graph, load round trip 2 us, 1 GB/s per block (1000 B/us), HBM 8 GB/s read +
// write unless set.
#include <gtest/gtest.h>

#include "backends/sim/flow_net.h"
#include "backends/sim/l2.h"
#include "backends/sim/testing.h"
#include "tests/sim/peer_programs.h"

namespace symm::sim {
namespace {

constexpr auto kNone = [](uint32_t) { return 0.0; };  // no active read has anything left
constexpr auto kAll = [](uint32_t) { return 1.0; };   // every active read has all of it left

TEST(L2, HoldsTheLastTouchedBytesUpToItsCapacity) {
  L2 c(1000);
  c.touch(0, 600);
  EXPECT_EQ(c.held(0, 600, 0, kNone), 600u);
  EXPECT_EQ(c.held(500, 700, 0, kNone), 100u);
  c.touch(2000, 2600);  // 1200 touched: the oldest 200 bytes go
  EXPECT_EQ(c.resident_bytes(), 1000u);
  EXPECT_EQ(c.held(0, 600, 0, kNone), 400u);
  EXPECT_EQ(c.held(0, 200, 0, kNone), 0u);
  c.touch(300, 400);  // refreshed: now the newest, split out of the oldest range
  c.touch(5000, 5300);
  EXPECT_EQ(c.resident_bytes(), 1000u);
  EXPECT_EQ(c.held(300, 400, 0, kNone), 100u);  // kept: touched after [2000, 2600)
  EXPECT_EQ(c.held(200, 300, 0, kNone), 0u);    // evicted: the oldest
  EXPECT_EQ(c.held(0, 10000, 0, kNone), 1000u);
}

TEST(L2, KeepsOnlyTheTailOfARangeLargerThanItself) {
  L2 c(100);
  c.touch(0, 1000);
  EXPECT_EQ(c.resident_bytes(), 100u);
  EXPECT_EQ(c.held(900, 1000, 0, kNone), 100u);
  EXPECT_EQ(c.held(0, 900, 0, kNone), 0u);
  L2 off(0);  // no L2: nothing is ever held
  off.touch(0, 10);
  EXPECT_EQ(off.held(0, 10, 0, kNone), 0u);
}

TEST(L2, AnotherActiveReadHoldsWhatItHasLeftToRead) {
  L2 c(10);  // too small to keep anything of these ranges
  c.begin_read(7, 0, 1000);
  EXPECT_EQ(c.held(0, 1000, 8, kAll), 1000u);  // a reader just started: it brings every byte
  EXPECT_EQ(c.held(0, 1000, 8, [](uint32_t) { return 0.25; }), 250u);
  EXPECT_EQ(c.held(500, 1500, 8, kAll), 500u);
  EXPECT_EQ(c.held(0, 1000, 7, kAll), 0u);  // its own read holds nothing for itself
  c.end_reads(7);
  EXPECT_EQ(c.held(0, 1000, 8, kAll), 0u);
}

TEST(L2, AFlowSaysHowMuchOfItIsStillToCome) {
  // held()'s share of another read: one flow of 1000 bytes at 1 byte/ps on a resource of 4 bytes/ps,
  // alone, half done at 500 ps; a second flow at once on the same resource halves both rates.
  FlowNet net({4.0});
  net.track_progress();
  std::vector<uint64_t> done;
  net.start(0, {Use{0, 1.0f}}, 1.0, 1000, 3);
  net.resolve(0, done);
  EXPECT_DOUBLE_EQ(net.remaining(3, 0), 1.0);
  EXPECT_DOUBLE_EQ(net.remaining(3, 500), 0.5);
  EXPECT_DOUBLE_EQ(net.remaining(7, 500), 0.0);  // no such flow
  FlowNet shared({1.0});
  shared.track_progress();
  shared.start(0, {Use{0, 1.0f}}, 1.0, 1000, 0);
  shared.start(0, {Use{0, 1.0f}}, 1.0, 1000, 1);
  shared.resolve(0, done);
  EXPECT_DOUBLE_EQ(shared.remaining(0, 1000), 0.5);
  EXPECT_EQ(shared.resolve(2000, done), -1);  // both done at 2000 ps
  EXPECT_DOUBLE_EQ(shared.remaining(0, 2000), 0.0);
}

TEST(FlowNet, ALatencyBoundFlowSlowsWithTheLoadOnItsResource) {
  // Two flows capped at 1 unit/ps on a resource of 10 (no capacity limit binds), each putting 1 on
  // it; slowed by k = 0.25 a unit/ps of that load: each at 1 / (1 + 0.25 x 2) = 2/3, so that at the
  // rate the load (4/3) leaves 1 - 0.25 x 4/3 = 2/3 of the cap, as load_slowdown reads.
  FlowNet net({10.0, 10.0});
  net.set_slowdown(0, 0.25);
  std::vector<uint64_t> done;
  net.start(0, {Use{0, 1.0f}}, 1.0, 2000, 0, /*slow=*/0);
  net.start(0, {Use{0, 1.0f}}, 1.0, 2000, 1, /*slow=*/0);
  EXPECT_EQ(net.resolve(0, done), 3000);
  EXPECT_NEAR(net.load()[0], 4.0 / 3.0, 1e-12);
  // Not slowed: a flow started without a slow resource, or on one with k = 0.
  FlowNet plain({10.0, 10.0});
  plain.set_slowdown(0, 0.25);
  plain.start(0, {Use{0, 1.0f}}, 1.0, 2000, 0);
  plain.start(0, {Use{0, 1.0f}}, 1.0, 2000, 1, /*slow=*/1);
  EXPECT_EQ(plain.resolve(0, done), 2000);
}

// A team machine's block copies under load (sim.h load_slowdown): with every rank copying at once
// the GPU's memory is busier and each block slower; with the key 0 the copies keep their pace.
TEST(L2, BlocksSlowAsTheGpusMemoryGetsBusier) {
  Machine m = Machine::load(SYMM_TEST_DIR "/tiny.ini");
  m.team = 1;
  m.gpus = 1;
  m.l2_MB = 1e-3;  // an L2 model whose capacity holds nothing: every byte also goes to HBM
  m.l2_GBps = 1000;
  m.hbm_GBps = 1000;
  const double plain = run_program<Ring>(timing_spec(m, 4, 4000, 8)).time_us;
  m.load_slowdown = 20;  // tiny.ini's blocks move a few GB/s: a large share a TB/s
  const double slowed = run_program<Ring>(timing_spec(m, 4, 4000, 8)).time_us;
  EXPECT_GT(slowed, plain * 1.05);
}

Machine tiny_team_l2(double l2_MB, double l2_GBps, double hbm_GBps) {
  Machine m = Machine::load(SYMM_TEST_DIR "/tiny.ini");
  m.team = 1;
  m.gpus = 1;
  m.hbm_GBps = hbm_GBps;
  m.l2_MB = l2_MB;
  m.l2_GBps = l2_GBps;
  return m;
}

double time_us(const Machine& m, int world) { return run_program<Ring>(timing_spec(m, world, 4000, 8)).time_us; }

TEST(L2, WarmBuffersRunFromTheL2) {
  // Without an L2 a team of 4's 32 blocks each read and write 4000 B of the 2 GB/s HBM: 64 us.
  // With one that holds the call's buffers (the previous call's, as the bench finds them) they
  // run at their 1 GB/s caps: 4 us; at the L2's own 2 GB/s: 64 us again.
  EXPECT_DOUBLE_EQ(time_us(tiny_team_l2(0, 0, 2), 4), 1 + 64 + 2);
  EXPECT_DOUBLE_EQ(time_us(tiny_team_l2(1, 1e6, 2), 4), 1 + 4 + 2);
  EXPECT_DOUBLE_EQ(time_us(tiny_team_l2(1, 2, 2), 4), 1 + 64 + 2);
}

TEST(L2, ConcurrentReadersOfTheSameBytesFetchThemOnce) {
  // An L2 too small to keep anything (1 byte): rank 0's 8 blocks read the same 4000 B at once.
  // Without the L2 model each pays the read and the write (weight 1 on the 2 GB/s HBM): 16 us.
  // With it the first block's read brings the bytes and the other 7 find them streaming: they
  // pay their writes only, 1 + 7 x 0.5 = 4.5 per unit of the common rate: 2 / 4.5 GB/s, 9 us.
  const auto t = [](const Machine& m) { return run_program<LoadFromPeer>(timing_spec(m, 2, 4000, 8)).time_us; };
  EXPECT_DOUBLE_EQ(t(tiny_team_l2(0, 0, 2)), 1 + 16 + 2);
  EXPECT_NEAR(t(tiny_team_l2(1e-6, 1e6, 2)), 1 + 9 + 2, 1e-6);
}

}  // namespace
}  // namespace symm::sim
