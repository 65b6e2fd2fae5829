// core/plan.h's CheckedHost: the host verbs' contract every executor runs plans through. A valid
// verb reaches the host unchanged; each kind of violation is refused in one line naming the rank,
// the stream and the verb, before the host sees it.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/algos/local_reduce_ring.h"
#include "core/plan.h"
#include "tests/core/thrown.h"

namespace symm {
namespace {

// Records what reaches it.
struct RecordingHost {
  std::vector<std::string> calls;
  int rank() const { return 1; }
  int world() const { return 4; }
  int streams() const { return 3; }
  template <class T>
  T* peer(T* p, int) const {
    return p;
  }
  template <class Program, class T>
  void launch(int s, const CollArgs&, int blocks) {
    calls.push_back("launch " + std::to_string(s) + " " + std::to_string(blocks));
  }
  void copy_engine(int s, void*, const void*, std::size_t n) {
    calls.push_back("copy " + std::to_string(s) + " " + std::to_string(n));
  }
  void write_flag(int s, int p, uint32_t, uint32_t v) {
    calls.push_back("write " + std::to_string(s) + " " + std::to_string(p) + " " + std::to_string(v));
  }
  void wait_flag(int s, uint32_t, uint32_t v) {
    calls.push_back("wait " + std::to_string(s) + " " + std::to_string(v));
  }
  void record(int s, int e) { calls.push_back("record " + std::to_string(s) + " " + std::to_string(e)); }
  void wait_event(int s, int e) { calls.push_back("wait_event " + std::to_string(s) + " " + std::to_string(e)); }
  void gemm(int s, const GemmArgs& g) { calls.push_back("gemm " + std::to_string(s) + " " + std::to_string(g.m)); }
};
static_assert(HostCtx<CheckedHost<RecordingHost>>);

std::string refusal(const std::function<void()>& f) { return testing::thrown(f, ErrorCode::kInvalidArgument); }

TEST(HostContract, ValidVerbsReachTheHost) {
  RecordingHost h;
  CheckedHost<RecordingHost> c(h);
  char buf[64] = {};
  const uint32_t flag = pad::plan_flag(pad::kPlanData, 0, 2);
  c.template launch<LocalReduceRing, float>(2, CollArgs{}, 4);
  c.copy_engine(1, buf, buf + 16, 16);
  c.write_flag(1, 3, flag, 1);
  c.wait_flag(0, flag, 1);
  c.record(0, kMaxEvents - 1);
  c.wait_event(2, kMaxEvents - 1);
  c.gemm(0, gemm_args(buf, buf, buf, 8, 8, 8, DType::kBF16));
  EXPECT_EQ(c.peer(buf, 3), buf);
  EXPECT_EQ(h.calls, (std::vector<std::string>{"launch 2 4", "copy 1 16", "write 1 3 1", "wait 0 1", "record 0 63",
                                               "wait_event 2 63", "gemm 0 8"}));
}

TEST(HostContract, EveryViolationIsOneLineNamingRankStreamAndVerb) {
  RecordingHost h;
  CheckedHost<RecordingHost> c(h);
  char buf[64] = {};
  const uint32_t flag = pad::plan_flag(pad::kPlanData, 0, 2);
  GemmArgs bad_ldc = gemm_args(buf, buf, buf, 8, 8, 8, DType::kBF16);
  bad_ldc.ldc = 4;
  const std::pair<std::string, std::string> cases[] = {
      {refusal([&] { c.record(3, 0); }), "rank 1: record on stream 3 needs a stream of the plan's 3"},
      {refusal([&] { c.wait_event(-1, 0); }), "wait_event on stream -1"},
      {refusal([&] { c.record(0, kMaxEvents); }), "rank 1 stream 0: record(event 64) needs an event in 0..63"},
      {refusal([&] { c.write_flag(1, 4, flag, 1); }), "rank 1 stream 1: write_flag(peer=4"},
      {refusal([&] { c.write_flag(1, 0, 5, 1); }), "a plan flag (pad::plan_flag)"},
      {refusal([&] { c.wait_flag(2, flag, 0); }), "rank 1 stream 2: wait_flag("},
      {refusal([&] { c.template launch<LocalReduceRing, float>(0, CollArgs{}, 0); }), "launch(blocks=0)"},
      {refusal([&] { c.copy_engine(0, nullptr, buf, 16); }), "copy_engine needs addresses"},
      {refusal([&] { c.gemm(1, bad_ldc); }), "rank 1 stream 1: gemm(m=8, n=8, k=8) needs"},
      {refusal([&] { (void)c.peer(buf, 7); }), "peer(rank 7)"},
  };
  for (const auto& [got, want] : cases) {
    EXPECT_NE(got.find(want), std::string::npos) << "got: '" << got << "', want: '" << want << "'";
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;
  }
  EXPECT_TRUE(h.calls.empty()) << "a refused verb reached the host";
}

// The end of a call: every side stream with work is joined into the main stream, directly or
// through another stream the main stream waits for; an unjoined one is refused naming rank and
// stream, how many of its items nothing waits for and the last of them.
// One call of `plan` through the contract; its refusal ("" if none).
std::string end_of(const std::function<void(CheckedHost<RecordingHost>&)>& plan) {
  return refusal([&] {
    RecordingHost h;
    checked_call(h, [&](CheckedHost<RecordingHost>& c) { plan(c); });
  });
}

TEST(HostContract, EveryUsedSideStreamIsJoinedAtTheEndOfTheCall) {
  char buf[64] = {};
  const uint32_t flag = pad::plan_flag(pad::kPlanData, 0, 2);
  // Joined: directly; through stream 1 (2 -> 1 -> main); an unused stream needs nothing.
  EXPECT_EQ(end_of([&](auto& c) {
              c.record(0, 0);
              c.wait_event(1, 0);
              c.copy_engine(1, buf, buf + 16, 16);
              c.record(1, 1);
              c.wait_event(0, 1);
            }),
            "");
  EXPECT_EQ(end_of([&](auto& c) {
              c.write_flag(2, 3, flag, 1);
              c.record(2, 2);
              c.wait_event(1, 2);
              c.copy_engine(1, buf, buf + 16, 16);
              c.record(1, 1);
              c.wait_event(0, 1);
            }),
            "");
  // Not joined: no wait on the main stream; the wait bound to an earlier record of the event (CUDA:
  // the latest record enqueued before it), so the copy after it is not waited for.
  EXPECT_EQ(end_of([&](auto& c) {
              c.copy_engine(1, buf, buf + 16, 16);
              c.write_flag(1, 3, flag, 1);
            }),
            "rank 1 stream 1: side stream not joined at the end of the call (its last 2 of 2 items, up to a "
            "write_flag, are not waited for by stream 0) needs a record after its last item that stream 0 waits for "
            "(wait_event)");
  const std::string late = end_of([&](auto& c) {
    c.record(2, 5);
    c.wait_event(0, 5);
    c.copy_engine(2, buf, buf + 16, 16);
    c.record(2, 5);
  });
  EXPECT_NE(late.find("rank 1 stream 2: side stream not joined"), std::string::npos) << late;
  EXPECT_NE(late.find("its last 2 of 3 items, up to a record"), std::string::npos) << late;
  // A stream whose only item is a wait has joined the call: it must be joined back too (CUDA
  // graph capture refuses it otherwise).
  EXPECT_NE(end_of([&](auto& c) {
              c.record(0, 0);
              c.wait_event(2, 0);
            }).find("rank 1 stream 2: side stream not joined"),
            std::string::npos);
  // A wait for an event never recorded in the call binds to nothing: refused where it is enqueued.
  EXPECT_NE(end_of([&](auto& c) {
              c.wait_event(0, 3);
            }).find("rank 1 stream 0: wait_event(event 3) needs a record of that event earlier in the call"),
            std::string::npos);
}

// A side stream forked and joined with nothing but events between (record / wait_event) is refused:
// in a CUDA graph of many calls its capture dependencies pile up call after call (2x H100: 100
// captured calls of reduce_scatter ce 64K took 93 us each, 28.5 us with the idle stream left out).
TEST(HostContract, ASideStreamWithEventsOnlyIsRefused) {
  char buf[64] = {};
  const uint32_t flag = pad::plan_flag(pad::kPlanData, 0, 2);
  const std::string idle = end_of([&](auto& c) {
    c.record(0, 0);
    c.wait_event(1, 0);
    c.copy_engine(1, buf, buf + 16, 16);
    c.wait_event(2, 0);  // forked ...
    c.record(1, 1);
    c.record(2, 2);  // ... and joined, nothing between
    c.wait_event(0, 1);
    c.wait_event(0, 2);
  });
  EXPECT_EQ(idle,
            "rank 1 stream 2: side stream with events only (2 record / wait_event items and no work: in a CUDA "
            "graph its capture dependencies pile up call after call) needs work between its fork and its join, or "
            "no use at all (fork only the side streams the plan uses: side_streams)");
  // A relay (2 -> 1 -> main) with no work of its own on stream 1: the same.
  EXPECT_NE(end_of([&](auto& c) {
              c.write_flag(2, 3, flag, 1);
              c.record(2, 2);
              c.wait_event(1, 2);
              c.record(1, 1);
              c.wait_event(0, 1);
            }).find("rank 1 stream 1: side stream with events only"),
            std::string::npos);
}

}  // namespace
}  // namespace symm
