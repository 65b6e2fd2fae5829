// What the simulator must catch: missing release/acquire, deadlocks; and its trace.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/sim/testing.h"

namespace symm::sim {
namespace {

RunSpec h200x4_spec(const char* algo, std::size_t bytes, int world = 4) {
  RunSpec s;
  s.machine = Machine::by_name("h200x4");
  s.world = world;
  s.algo = &find_algo(algo);
  s.bytes = bytes;
  return s;
}

ErrorCode code_of(const std::function<void()>& f, std::string* msg = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (msg) *msg = e.what();
    return e.code();
  }
  return ErrorCode(0);
}

TEST(MemoryOrdering, RelaxedStartBarrierIsCaught) {
  RunSpec s = h200x4_spec("all_reduce.one_shot", 64 << 10);
  s.seed = 42;
  // The correct program passes on these inputs...
  const RunResult good = run_program<AllReduceLdReduce>(s);
  EXPECT_LE(good.max_rel_err, good.err_bound);
  // ...the one whose start barrier orders only execution reads peers' inputs that no release
  // published: the host wrote them, and nothing carries that to the reading rank.
  std::string msg;
  EXPECT_EQ(code_of([&] { run_program<AllReduceLdReduceT<kBarrierRelaxed>>(s); }, &msg), ErrorCode::kRace);
  EXPECT_NE(msg.find("race: rank "), std::string::npos) << msg;
  EXPECT_NE(msg.find("without a release/acquire chain"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'s in at byte"), std::string::npos) << msg;
  EXPECT_NE(msg.find("written by the host of rank"), std::string::npos) << msg;
}

// st_reduce with a relaxed signal after its pushes: the stores are not published.
struct PushThenRelaxedSignal {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world();
    T* mine = static_cast<T*>(a.scratch) + std::size_t(me) * a.count;
    for (int r = 0; r < n; ++r) ctx.copy(ctx.peer(mine, r), a.in, a.count * sizeof(T));
    for (int i = 1; i < n; ++i) ctx.signal((me + i) % n, pad::flag(1, 0, me), 1, MemOrder::kRelaxed);
    for (int i = 1; i < n; ++i) ctx.wait(pad::flag(1, 0, (me + i) % n), 1, MemOrder::kAcquire);
    const T* srcs[kMaxWorld];
    for (int r = 0; r < n; ++r) srcs[r] = static_cast<const T*>(a.scratch) + std::size_t(r) * a.count;
    ctx.template reduce<T>(static_cast<T*>(a.out), srcs, n, a.count, a.op);
  }
};

TEST(MemoryOrdering, RelaxedSignalAfterStoresIsCaught) {
  RunSpec s = h200x4_spec("all_reduce.one_shot_push", 4096);
  s.blocks = 1;
  EXPECT_LE(run(s).max_rel_err, run(s).err_bound);
  std::string msg;
  EXPECT_EQ(code_of([&] { run_program<PushThenRelaxedSignal>(s); }, &msg), ErrorCode::kRace);
  EXPECT_NE(msg.find("'s scratch"), std::string::npos) << msg;
}

// A barrier in which the last rank never signals rank 0.
struct BarrierMissingPeer {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs&) {
    const int me = ctx.rank(), n = ctx.world(), b = ctx.block();
    const uint32_t e = ctx.advance(pad::counter(b, 0));
    for (int i = 1; i < n; ++i) {
      const int r = (me + i) % n;
      if (me == n - 1 && r == 0) continue;
      ctx.signal(r, pad::flag(0, b, me), e, MemOrder::kRelease);
    }
    for (int i = 1; i < n; ++i) ctx.wait(pad::flag(0, b, (me + i) % n), e, MemOrder::kAcquire);
  }
};

TEST(Deadlock, MissingPeerIsNamed) {
  RunSpec s = h200x4_spec("barrier.acq_rel", 0);
  s.blocks = 2;
  std::string msg;
  EXPECT_EQ(code_of([&] { run_program<BarrierMissingPeer>(s); }, &msg), ErrorCode::kDeadlock);
  // Rank 0's block 0 waits on flags[0][0][3], written by nobody.
  EXPECT_NE(msg.find("rank 0 block 0 waits on slot " + std::to_string(pad::flag(0, 0, 3))), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("channel 0, block 0, from rank 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("value >= 1 but sees 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 other blocked wait"), std::string::npos) << msg;  // block 1 of rank 0
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(Trace, SameRunSameBytes) {
  const std::string dir = ::testing::TempDir();
  RunSpec s = h200x4_spec("all_reduce.two_shot", 256 << 10);
  s.trace_path = dir + "/sim_trace_a.json";
  run(s);
  s.trace_path = dir + "/sim_trace_b.json";
  run(s);
  const std::string a = slurp(dir + "/sim_trace_a.json"), b = slurp(dir + "/sim_trace_b.json");
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.rfind("{\"traceEvents\":[", 0), 0u);
  EXPECT_NE(a.find("\"ph\":\"s\""), std::string::npos);
  EXPECT_NE(a.find("\"ph\":\"f\""), std::string::npos);
  EXPECT_NE(a.find("\"ph\":\"C\""), std::string::npos);
  EXPECT_NE(a.find("\"name\":\"process_name\""), std::string::npos);
  EXPECT_NE(a.find("\"name\":\"reduce\""), std::string::npos);
  // Minimal structure check: brackets balance outside strings, and the file closes the object.
  int depth = 0;
  bool in_str = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char c = a[i];
    if (in_str) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_str = false;
      }
      continue;
    }
    if (c == '"') {
      in_str = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      ASSERT_GE(--depth, 0) << "at byte " << i;
    }
  }
  EXPECT_EQ(depth, 0);
  EXPECT_FALSE(in_str);
}

TEST(Trace, UnwritablePathFailsBeforeTheRun) {
  RunSpec s = h200x4_spec("all_reduce.one_shot", 4096);
  s.trace_path = "/nonexistent-dir/t.json";
  std::string msg;
  EXPECT_EQ(code_of([&] { run(s); }, &msg), ErrorCode::kIo);
  EXPECT_NE(msg.find("/nonexistent-dir/t.json"), std::string::npos) << msg;
}

TEST(Limits, WorldPastTheMachineNeedsTimingOnly) {
  RunSpec s = h200x4_spec("all_reduce.one_shot", 4096, 8);
  std::string msg;
  EXPECT_EQ(code_of([&] { run(s); }, &msg), ErrorCode::kUnsupported);
  EXPECT_EQ(msg, "world=8 exceeds machine h200x4's 4 GPUs (use --timing-only to scale past it)");
  s.timing_only = true;
  EXPECT_GT(run(s).time_us, 0);
}

TEST(Limits, BadArgumentsAreRejected) {
  RunSpec s = h200x4_spec("all_reduce.one_shot", 1000);
  EXPECT_EQ(code_of([&] { run(s); }), ErrorCode::kInvalidArgument);  // not a multiple of 16
  s.bytes = 4096;
  s.blocks = 133;
  EXPECT_NE(code_of([&] { run(s); }), ErrorCode(0));
  s.blocks = 1;
  s.calls = 0;
  EXPECT_EQ(code_of([&] { run(s); }), ErrorCode::kInvalidArgument);
}

TEST(Timing, MoreBytesTakeLongerAndTwoShotWinsLarge) {
  RunSpec s = h200x4_spec("all_reduce.one_shot", 64 << 10);
  s.timing_only = true;
  const double small = run(s).time_us;
  s.bytes = 16 << 20;
  const double one_shot = run(s).time_us;
  EXPECT_GT(one_shot, small);
  s.algo = &find_algo("all_reduce.two_shot");
  EXPECT_LT(run(s).time_us, one_shot);
}

}  // namespace
}  // namespace symm::sim

namespace symm::sim {
namespace {

// The correctness check itself must be able to fail: outputs are poisoned before each call.
struct WritesNothing {
  template <class T, class Ctx>
  static void run(Ctx&, const CollArgs&) {}
};
// Reduces only its own input: right shape, wrong values.
struct LocalOnly {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    const T* srcs[1] = {static_cast<const T*>(a.in)};
    ctx.template reduce<T>(static_cast<T*>(a.out), srcs, 1, a.count, a.op);
  }
};

TEST(Correctness, WrongProgramsFail) {
  RunSpec s = h200x4_spec("all_reduce.one_shot", 4096);
  s.blocks = 1;
  const RunResult none = run_program<WritesNothing>(s);
  EXPECT_GT(none.max_rel_err, none.err_bound);
  const RunResult local = run_program<LocalOnly>(s);
  EXPECT_GT(local.max_rel_err, local.err_bound);
}

}  // namespace
}  // namespace symm::sim
