// The team graph's flag edges (backends/cuda/flag_edges.h) without a GPU: the k-th write into
// (target, slot) pairs with the target's k-th wait; disagreements fail in one line naming them.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/flag_edges.h"
#include "core/common.h"
#include "core/signal_pad.h"

namespace symm::cuda {
namespace {

void* node(int i) { return reinterpret_cast<void*>(std::uintptr_t(0x1000 + 16 * i)); }

std::string error_of(const FlagEdges& t) {
  try {
    t.match();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(FlagEdges, KthWritePairsWithKthWaitWhateverTheRecordingOrder) {
  FlagEdges t;
  const uint32_t from0 = pad::plan_flag(pad::kPlanReady, 0, 0), from1 = pad::plan_flag(pad::kPlanReady, 0, 1);
  // Rank 1 records its waits before rank 0 records its writes (captures go rank by rank).
  t.add_wait(1, from0, 1, node(10));
  t.add_wait(1, from0, 1, node(11));
  t.add_write(1, 0, from1, 1, node(20));
  t.add_write(0, 1, from0, 1, node(1));
  t.add_write(0, 1, from0, 1, node(2));
  t.add_wait(0, from1, 1, node(3));
  EXPECT_EQ(t.writes(), 3u);
  EXPECT_EQ(t.waits(), 3u);
  const std::vector<FlagEdges::Edge> e = t.match();
  ASSERT_EQ(e.size(), 3u);
  auto has = [&](void* a, void* b) {
    for (const auto& x : e)
      if (x.from == a && x.to == b) return true;
    return false;
  };
  EXPECT_TRUE(has(node(1), node(10)));
  EXPECT_TRUE(has(node(2), node(11)));
  EXPECT_TRUE(has(node(20), node(3)));
  t.reset();
  EXPECT_EQ(t.writes() + t.waits(), 0u);
  EXPECT_TRUE(t.match().empty());
}

TEST(FlagEdges, AWaitNoRankWritesIsNamed) {
  FlagEdges t;
  const uint32_t s = pad::plan_flag(pad::kPlanData, 3, 2);
  t.add_write(2, 1, s, 1, node(1));
  t.add_wait(1, s, 1, node(2));
  t.add_wait(1, s, 1, node(3));
  const std::string m = error_of(t);
  EXPECT_NE(m.find("do not pair up"), std::string::npos) << m;
  EXPECT_NE(m.find("rank 1's " + pad::describe_plan_slot(s) + ", occurrence 2 wait (for 1) has no write by any rank"),
            std::string::npos)
      << m;
}

TEST(FlagEdges, AWriteNoWaitConsumesIsNamed) {
  FlagEdges t;
  const uint32_t s = pad::plan_flag(pad::kPlanData, 0, 0);
  t.add_write(0, 3, s, 1, node(1));
  const std::string m = error_of(t);
  EXPECT_NE(m.find("rank 3's " + pad::describe_plan_slot(s) + ", occurrence 1 write by rank 0 is never waited for"),
            std::string::npos)
      << m;
}

TEST(FlagEdges, ValuesAndWritersMustAgree) {
  FlagEdges t;
  const uint32_t s = pad::plan_flag(pad::kPlanData, 1, 0);
  t.add_write(0, 1, s, 2, node(1));
  t.add_wait(1, s, 1, node(2));
  EXPECT_NE(error_of(t).find("wait expects 1 but rank 0 writes 2"), std::string::npos);
  t.reset();
  t.add_write(0, 1, s, 1, node(1));
  t.add_write(2, 1, s, 1, node(2));
  t.add_wait(1, s, 1, node(3));
  t.add_wait(1, s, 1, node(4));
  EXPECT_NE(error_of(t).find("is written by rank 0 and by rank 2"), std::string::npos);
}

TEST(FlagEdges, NamesTheFirstFewAndCountsTheRest) {
  FlagEdges t;
  for (int k = 0; k < 10; ++k) t.add_wait(0, pad::plan_flag(pad::kPlanData, k, 1), 1, node(k));
  EXPECT_NE(error_of(t).find("; and 6 more"), std::string::npos);
}

TEST(FlagEdges, RanksRecordFromTheirOwnThreads) {
  FlagEdges t;
  constexpr int kRanks = 4, kCalls = 200;
  std::vector<std::thread> th;
  for (int r = 0; r < kRanks; ++r)
    th.emplace_back([&t, r]() {
      for (int c = 0; c < kCalls; ++c)
        for (int i = 1; i < kRanks; ++i) {
          const int q = (r + i) % kRanks;
          t.add_write(r, q, pad::plan_flag(pad::kPlanReady, 0, r), 1, node(r));
          t.add_wait(r, pad::plan_flag(pad::kPlanReady, 0, q), 1, node(100 + r));
        }
    });
  for (auto& x : th) x.join();
  EXPECT_EQ(t.match().size(), std::size_t(kRanks * (kRanks - 1) * kCalls));
}

}  // namespace
}  // namespace symm::cuda
