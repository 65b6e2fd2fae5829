// What the simulator must catch: missing release/acquire, deadlocks; and its trace.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/sim/event_queue.h"
#include "backends/sim/testing.h"
#include "core/algos/ll_layout.h"
#include "core/dispatch.h"
#include "core/partition.h"

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

// ---- missing end barrier ---------------------------------------------------------------------

// all_reduce.ld_reduce (one_shot) without its end barrier: a rank may return (and its caller
// overwrite `in`) while peers still load it.
using OneShotNoEndBarrier = AllReduceLdReduceT<kBarrierAcqRel, kBarrierAcqRel, /*kEndBarrier=*/false>;
// all_reduce.rs_ld_ag_st (two_shot) without its end barrier: a rank may return before the
// peers' stores of their slices into its `out` are ordered before (or have even reached) it.
using TwoShotNoEndBarrier = AllReduceRsLdAgT</*kGatherByStores=*/true, kBarrierAcqRel, /*kEndBarrier=*/false>;

// Fails = a race reported, or a wrong answer in some call.
bool fails(const std::function<RunResult()>& f, std::string* msg) {
  try {
    const RunResult r = f();
    *msg = "max_rel_err " + std::to_string(r.max_rel_err);
    return !(r.max_rel_err <= r.err_bound);
  } catch (const Error& e) {
    *msg = e.what();
    return e.code() == ErrorCode::kRace;
  }
}

TEST(MemoryOrdering, MissingEndBarrierIsCaught) {
  for (int world : {2, 4, 8}) {
    for (int calls : {1, 2, 3}) {
      for (std::size_t bytes : {std::size_t(4096), std::size_t(256) << 10}) {
        SCOPED_TRACE("world=" + std::to_string(world) + " calls=" + std::to_string(calls) +
                     " bytes=" + std::to_string(bytes));
        RunSpec s = h200x4_spec("all_reduce.one_shot", bytes, world);
        s.machine = Machine::by_name("h200x8");
        s.calls = calls;
        s.seed = 5 + calls;
        std::string msg;
        // The real programs pass the same runs (every call checked).
        const RunResult good = run_program<AllReduceLdReduce>(s);
        EXPECT_LE(good.max_rel_err, good.err_bound);
        // one_shot: a peer's loads of my `in` are not ordered before the end of my call; the
        // next call's inputs (or any caller) would overwrite them: write after read.
        EXPECT_TRUE(fails([&] { return run_program<OneShotNoEndBarrier>(s); }, &msg)) << msg;
        EXPECT_NE(msg.find("may still be reading"), std::string::npos) << msg;
        EXPECT_NE(msg.find("'s in"), std::string::npos) << msg;
        s.algo = &find_algo("all_reduce.two_shot");
        const RunResult good2 = run_program<AllReduceRsLdAgSt>(s);
        EXPECT_LE(good2.max_rel_err, good2.err_bound);
        // two_shot: peers' stores into my `out` are not ordered before the end of my call.
        EXPECT_TRUE(fails([&] { return run_program<TwoShotNoEndBarrier>(s); }, &msg)) << msg;
        EXPECT_NE(msg.find("at the end of its call, written by rank "), std::string::npos) << msg;
        EXPECT_NE(msg.find("'s out"), std::string::npos) << msg;
      }
    }
  }
}

// The report names who, what and where.
TEST(MemoryOrdering, MissingEndBarrierReports) {
  RunSpec s = h200x4_spec("all_reduce.one_shot", 4096, 2);
  s.blocks = 1;
  std::string msg;
  EXPECT_EQ(code_of([&] { run_program<OneShotNoEndBarrier>(s); }, &msg), ErrorCode::kRace);
  EXPECT_EQ(msg.rfind("race: the host of rank ", 0), 0u) << msg;
  EXPECT_NE(msg.find(" ends its call while rank "), std::string::npos) << msg;
  EXPECT_NE(msg.find(" block 0 may still be reading [0,4096) of rank "), std::string::npos) << msg;
  s.algo = &find_algo("all_reduce.two_shot");
  EXPECT_EQ(code_of([&] { run_program<TwoShotNoEndBarrier>(s); }, &msg), ErrorCode::kRace);
  // Rank 0 reduces slice 0 ([0,2048)) and stores it into rank 1's out; rank 1 stores slice 1.
  EXPECT_TRUE(msg.find("race: the host of rank 0 reads [2048,4096) of rank 0's out at the end of its call, "
                       "written by rank 1 block 0 without a release/acquire chain") != std::string::npos ||
              msg.find("race: the host of rank 1 reads [0,2048) of rank 1's out at the end of its call, "
                       "written by rank 0 block 0 without a release/acquire chain") != std::string::npos)
      << msg;
}

// Every call's output is checked, not just the last one's.
struct SkipsTheFirstCall {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.advance(pad::counter(ctx.block(), 3)) == 1) return;  // every rank skips call 1
    AllReduceLdReduce::run<T>(ctx, a);
  }
};

TEST(Correctness, EveryCallIsChecked) {
  RunSpec s = h200x4_spec("all_reduce.one_shot", 4096);
  s.blocks = 2;
  s.calls = 2;
  const RunResult r = run_program<SkipsTheFirstCall>(s);
  EXPECT_GT(r.max_rel_err, r.err_bound);
}

// one_shot, then rank 0 stores its `in` over rank 1's `out` (posted, after the end barrier):
// rank 1's kernel ends before those stores land.
struct OneShotThenLateGarbage {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    AllReduceLdReduce::run<T>(ctx, a);
    const Range piece = split_vec<T>(a.count, ctx.blocks(), ctx.block());
    if (ctx.rank() == 0 && piece.count)
      ctx.copy(ctx.peer(static_cast<T*>(a.out) + piece.begin, 1), static_cast<const T*>(a.in) + piece.begin,
               piece.count * sizeof(T));
  }
};

TEST(Correctness, OutputIsWhatTheHostSeesAtTheEndOfItsCall) {
  RunSpec s = h200x4_spec("all_reduce.one_shot", 4096);
  s.blocks = 2;
  std::string msg;
  // The stores are not ordered before the end of the receiving rank's call: a race...
  EXPECT_EQ(code_of([&] { run_program<OneShotThenLateGarbage>(s); }, &msg), ErrorCode::kRace);
  EXPECT_NE(msg.find("at the end of its call, written by rank "), std::string::npos) << msg;
  // ...and without the race check they land after that end, so the output checked is the
  // right one (at the end of the run the heap holds the garbage).
  s.race_check = false;
  const RunResult r = run_program<OneShotThenLateGarbage>(s);
  EXPECT_LE(r.max_rel_err, r.err_bound);
}

// st_reduce on one half only (the epoch's parity ignored): in call 2 a rank rewrites a peer's
// slot, ordered only after the peer's signal of call 1, which came before the peer's reads.
using StReduceOneHalf = AllReduceStReduceT<MemOrder::kRelease, MemOrder::kAcquire, /*kBothHalves=*/false>;

TEST(MemoryOrdering, StReduceNeedsBothHalves) {
  RunSpec s = h200x4_spec("all_reduce.one_shot_push", 4096);
  s.blocks = 2;
  const RunResult one = run_program<StReduceOneHalf>(s);  // one call: nothing to overwrite
  EXPECT_LE(one.max_rel_err, one.err_bound);
  s.calls = 2;
  const RunResult good = run(s);
  EXPECT_LE(good.max_rel_err, good.err_bound);
  std::string msg;
  EXPECT_EQ(code_of([&] { run_program<StReduceOneHalf>(s); }, &msg), ErrorCode::kRace);
  EXPECT_NE(msg.find("'s scratch while rank "), std::string::npos) << msg;
  EXPECT_NE(msg.find("may still be reading it"), std::string::npos) << msg;
}

// st_reduce with a relaxed signal after its pushes: the stores are not published.
using PushThenRelaxedSignal = AllReduceStReduceT<MemOrder::kRelaxed, MemOrder::kAcquire>;

TEST(MemoryOrdering, RelaxedSignalAfterStoresIsCaught) {
  RunSpec s = h200x4_spec("all_reduce.one_shot_push", 4096);
  s.blocks = 1;
  EXPECT_LE(run(s).max_rel_err, run(s).err_bound);
  std::string msg;
  EXPECT_EQ(code_of([&] { run_program<PushThenRelaxedSignal>(s); }, &msg), ErrorCode::kRace);
  EXPECT_NE(msg.find("'s scratch"), std::string::npos) << msg;
}

// ---- release signals paired with relaxed waits -------------------------------------------------
//
// Every program that relies on an acquire, with its waits relaxed and its signals still releases.
// A relaxed wait joins nothing (core/verbs.h), so what the releases publish never reaches the
// waiter: each must be reported (a race, or a wrong answer). The LL programs wait on no flag.
// The barrier programs move no data of their own: their rows of EveryAlgorithm (test_algorithms)
// show the acquire at work.
template <class Mutant>
void expect_relaxed_wait_caught(const char* id, int world) {
  const AlgoInfo& a = find_algo(id);
  SCOPED_TRACE(std::string(id) + " world=" + std::to_string(world));
  const std::size_t per_rank = 16 * 64;
  RunSpec s = h200x4_spec(id, a.op == Op::kAllReduce ? per_rank : per_rank * std::size_t(world), world);
  s.machine = Machine::by_name("h200x8");
  s.blocks = 2;
  s.calls = 2;
  s.seed = 17;
  const RunResult good = run(s);  // the real program passes the same runs
  EXPECT_GE(good.max_rel_err, 0);
  EXPECT_LE(good.max_rel_err, good.err_bound);
  std::string msg;
  EXPECT_TRUE(fails([&] { return run_program<Mutant>(s); }, &msg)) << msg;
  EXPECT_NE(msg.find("release/acquire chain"), std::string::npos) << msg;  // caught as a race
}

TEST(MemoryOrdering, RelaxedWaitAfterReleaseIsCaught) {
  for (int world : {2, 4}) {
    expect_relaxed_wait_caught<AllReduceLdReduceT<kBarrierRelaxedWait, kBarrierRelaxedWait>>("all_reduce.one_shot",
                                                                                             world);
    expect_relaxed_wait_caught<AllReduceStReduceT<MemOrder::kRelease, MemOrder::kRelaxed>>("all_reduce.one_shot_push",
                                                                                           world);
    expect_relaxed_wait_caught<AllReduceRsLdAgT<true, kBarrierRelaxedWait>>("all_reduce.two_shot", world);
    expect_relaxed_wait_caught<AllReduceRsLdAgT<false, kBarrierRelaxedWait>>("all_reduce.two_shot_ld", world);
    expect_relaxed_wait_caught<AllReduceMcLdReduceMcStT<kBarrierRelaxedWait>>("all_reduce.multimem", world);
    expect_relaxed_wait_caught<ReduceScatterLdReduceT<kBarrierRelaxedWait>>("reduce_scatter.pull", world);
    expect_relaxed_wait_caught<AllGatherT<true, kBarrierRelaxedWait>>("all_gather.push", world);
    expect_relaxed_wait_caught<AllGatherT<false, kBarrierRelaxedWait>>("all_gather.pull", world);
  }
}

// Each barrier of one_shot needs its acquire on its own: the start one to see the peers' inputs,
// the end one to order the peers' loads of this rank's `in` before its call ends.
TEST(MemoryOrdering, EachBarrierNeedsItsAcquire) {
  expect_relaxed_wait_caught<AllReduceLdReduceT<kBarrierRelaxedWait, kBarrierAcqRel>>("all_reduce.one_shot", 4);
  expect_relaxed_wait_caught<AllReduceLdReduceT<kBarrierAcqRel, kBarrierRelaxedWait>>("all_reduce.one_shot", 4);
}

// Orders outside the verb contract are refused with a message naming the verb and the order.
template <bool kSignal>
struct WrongOrder {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs&) {
    if constexpr (kSignal)
      ctx.signal((ctx.rank() + 1) % ctx.world(), pad::flag(0, ctx.block(), ctx.rank()), 1, MemOrder::kAcquire);
    else
      ctx.wait(pad::flag(0, ctx.block(), 0), 0, MemOrder::kRelease);
  }
};

TEST(MemoryOrdering, OrdersOutsideTheContractAreRefused) {
  RunSpec s = h200x4_spec("barrier.acq_rel", 0);
  s.blocks = 1;
  std::string msg;
  EXPECT_EQ(code_of([&] { run_program<WrongOrder<true>>(s); }, &msg), ErrorCode::kInvalidArgument);
  EXPECT_NE(msg.find("block 0: signal with memory order acquire (2): the verb contract allows kRelaxed or kRelease"),
            std::string::npos)
      << msg;
  EXPECT_EQ(code_of([&] { run_program<WrongOrder<false>>(s); }, &msg), ErrorCode::kInvalidArgument);
  EXPECT_NE(msg.find("block 0: wait with memory order release (1): the verb contract allows kRelaxed or kAcquire"),
            std::string::npos)
      << msg;
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
  EXPECT_NE(msg.find("rank 0 block 0 waits on slot " + std::to_string(pad::flag(0, 0, 3))), std::string::npos) << msg;
  EXPECT_NE(msg.find("channel 0, block 0, from rank 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("value >= 1 but sees 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 other blocked wait"), std::string::npos) << msg;  // block 1 of rank 0
}

// ---- flagged packets (LL) ------------------------------------------------------------------

// one_shot_ll whose receive waits for the *next* epoch: the packets of this call never match.
using LlWaitsForNextEpoch = StLlReduceT</*kScatter=*/false, /*kWaitAhead=*/1>;

TEST(Deadlock, LlWaitOnAnEpochThatNeverComesIsNamed) {
  for (int world : {4, 2})
    for (bool timing_only : {false, true}) {
      SCOPED_TRACE(std::string(timing_only ? "timing-only" : "data") + ", world " + std::to_string(world));
      RunSpec s = h200x4_spec("all_reduce.one_shot_ll", 4096);
      s.world = world;
      s.blocks = 2;
      s.timing_only = timing_only;
      std::string msg;
      EXPECT_EQ(code_of([&] { run_program<LlWaitsForNextEpoch>(s); }, &msg), ErrorCode::kDeadlock);
      // Rank 0 block 0's first packet source, epoch 1 (half 1 of block 0's region): at world 4 its
      // own slot (it sends its own part to itself), LlLayout::slot(block 0, half 1, from rank 0) =
      // slot 4 of the scratch; at world 2 rank 1's (its own part is plain data), slot 3. 2048 B of
      // data = 4096 B of packets, all of epoch 1.
      const std::size_t at = std::size_t(world == 4 ? 4 : 3) * LlLayout::kSlotBytes;
      const std::string want =
          "deadlock: rank 0 block 0 waits in reduce_ll for epoch 2 on the packet buffer rank 0's "
          "scratch bytes [" +
          std::to_string(at) + "," + std::to_string(at + 4096) + ") but the packet at byte " + std::to_string(at) +
          " holds epoch 1";
      EXPECT_NE(msg.find(want), std::string::npos) << msg;
      const std::string others = "(and " + std::to_string(2 * world - 1) + " other blocked waits)";  // ranks x blocks
      EXPECT_NE(msg.find(others), std::string::npos) << msg;
    }
}

// Packets in one fixed slot per source (no epoch halves); in call 2 rank 1 does not send to
// rank 0, so rank 0's slot from rank 1 still holds call 1's packets: they must not be taken.
struct LlStaleSlot {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world();
    const uint32_t e = ll_epoch(ctx);
    const std::size_t bytes = a.count * sizeof(T), pb = ll_bytes(bytes);
    char* scratch = static_cast<char*>(a.scratch);
    for (int q = 0; q < n; ++q)
      if (!(e == 2 && me == 1 && q == 0)) {
        void* dst = ctx.peer(scratch + std::size_t(me) * pb, q);
        ctx.put_ll(&dst, &a.in, 1, bytes, e);
      }
    const void* srcs[kPadWorld];
    for (int r = 0; r < n; ++r) srcs[r] = scratch + std::size_t(r) * pb;
    ctx.template reduce_ll<T>(static_cast<T*>(a.out), srcs, n, a.count, e, a.op);
  }
};

TEST(StalePackets, AnOlderEpochIsNotAccepted) {
  for (bool timing_only : {false, true}) {
    SCOPED_TRACE(timing_only ? "timing-only" : "data");
    RunSpec s = h200x4_spec("all_reduce.one_shot_ll", 1024);
    s.blocks = 1;
    s.timing_only = timing_only;
    const RunResult one = run_program<LlStaleSlot>(s);  // one call: correct (checked with data)
    if (timing_only) {
      EXPECT_EQ(one.max_rel_err, -1);  // nothing is checked in timing-only mode
      EXPECT_GT(one.time_us, 0);
    } else {
      EXPECT_GE(one.max_rel_err, 0);
      EXPECT_LE(one.max_rel_err, one.err_bound);
    }
    s.calls = 2;
    std::string msg;
    if (!timing_only) {
      // One buffer per source is also a write-after-read race: in call 2 rank 2 rewrites rank 0's
      // slot with nothing ordering rank 0's reads of call 1 before it (the two halves of
      // block_regions.h are what makes the real programs safe). The epoch check is shown below.
      EXPECT_EQ(code_of([&] { run_program<LlStaleSlot>(s); }, &msg), ErrorCode::kRace);
      EXPECT_NE(msg.find("may still be reading it"), std::string::npos) << msg;
      s.race_check = false;
    }
    EXPECT_EQ(code_of([&] { run_program<LlStaleSlot>(s); }, &msg), ErrorCode::kDeadlock);
    // Rank 0's slot from rank 1: 1024 B of data = 2048 B of packets at 2048.
    EXPECT_NE(msg.find("deadlock: rank 0 block 0 waits in reduce_ll for epoch 2 on the packet buffer rank 0's "
                       "scratch bytes [2048,4096) but the packet at byte 2048"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("holds epoch 1 (and 0 other blocked waits)"), std::string::npos) << msg;
  }
}

// The real LL programs over calls with different block counts: a block's region sees only its
// own epochs, so packets left by earlier calls (other pieces, other halves) are never taken.
TEST(StalePackets, CallsWithDifferentBlockCountsStayCorrect) {
  // st_reduce shares the fixed per-block regions (core/algos/block_regions.h) with the LL programs.
  for (const char* id :
       {"all_reduce.one_shot_ll", "reduce_scatter.push_ll", "all_gather.push_ll", "all_reduce.one_shot_push"}) {
    for (DType t : {DType::kBF16, DType::kFP32}) {
      RunSpec s = h200x4_spec(id, 4 * 8192);  // all_reduce: 32 KiB; RS/AG: 8 KiB per rank
      s.dtype = t;
      s.seed = 11;
      // push_ll all-gather deals blocks to the 4 peers: it needs at least 4 (5 and 6 give some
      // offsets more blocks than others).
      const AlgoInfo& a = find_algo(id);
      const std::vector<int> blocks = a.blocks_per_peer        ? std::vector<int>{4, 8, 5, 4, 12, 6}
                                      : a.op == Op::kAllReduce ? std::vector<int>{4, 2, 8, 3, 5, 2}
                                                               : std::vector<int>{4, 1, 8, 3, 5, 1};
      SCOPED_TRACE(std::string(id) + " " + dtype_name(t));
      const RunResult r = run_calls(s, blocks);
      EXPECT_GE(r.max_rel_err, 0);
      EXPECT_LE(r.max_rel_err, r.err_bound);
      EXPECT_EQ(r.blocks, blocks.back());
      s.timing_only = true;  // the landed-packet record must see the same epochs
      EXPECT_GT(run_calls(s, blocks).time_us, 0);
    }
  }
}

// reduce_ll's packet reads are exempt from the race check, but create no happens-before: a plain
// copy of a peer's packets after reduce_ll returned is still a race.
struct LlThenPlainRead {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    const uint32_t e = ll_epoch(ctx);
    const std::size_t bytes = a.count * sizeof(T);
    ll_send(
        ctx, a.scratch, e, bytes, [&](int) { return a.in; }, /*self=*/true);
    const void* srcs[kPadWorld];
    ll_received(ctx, a.scratch, e, nullptr, srcs);
    ctx.template reduce_ll<T>(static_cast<T*>(a.out), srcs, ctx.world(), a.count, e, a.op);
    ctx.copy(a.out, srcs[(ctx.rank() + 1) % ctx.world()], bytes);
  }
};

TEST(MemoryOrdering, LlPacketsPublishNothingElse) {
  RunSpec s = h200x4_spec("all_reduce.one_shot_ll", 2048);
  s.blocks = 1;
  const RunResult good = run(s);  // the LL program itself: no race reported, right answer
  EXPECT_LE(good.max_rel_err, good.err_bound);
  std::string msg;
  EXPECT_EQ(code_of([&] { run_program<LlThenPlainRead>(s); }, &msg), ErrorCode::kRace);
  EXPECT_NE(msg.find("'s scratch at byte"), std::string::npos) << msg;
  EXPECT_NE(msg.find(" block 0 without a release/acquire chain"), std::string::npos) << msg;
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
  EXPECT_NE(a.find("\"flow_out\":true"), std::string::npos);
  EXPECT_NE(a.find("\"flow_in\":true"), std::string::npos);
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

TEST(Trace, LlVerbsAndTheirArrows) {
  const std::string path = ::testing::TempDir() + "/sim_trace_ll.json";
  RunSpec s = h200x4_spec("all_reduce.one_shot_ll", 64 << 10);
  s.trace_path = path;
  run(s);
  const std::string a = slurp(path);
  EXPECT_NE(a.find("\"name\":\"put_ll\""), std::string::npos);
  EXPECT_NE(a.find("\"name\":\"reduce_ll\""), std::string::npos);
  EXPECT_NE(a.find("\"flow_out\":true"), std::string::npos);  // no signals: these arrows are put_ll -> reduce_ll
  EXPECT_NE(a.find("\"flow_in\":true"), std::string::npos);
}

TEST(Trace, UnwritablePathFailsBeforeTheRun) {
  RunSpec s = h200x4_spec("all_reduce.one_shot", 4096);
  s.trace_path = "/nonexistent-dir/t.json";
  std::string msg;
  EXPECT_EQ(code_of([&] { run(s); }, &msg), ErrorCode::kIo);
  EXPECT_NE(msg.find("/nonexistent-dir/t.json"), std::string::npos) << msg;
}

// The event queue's order (event_queue.h): (time, phase), FIFO within; a phase-0 event pushed
// at the current tick by a phase-1 handler runs next, before the rest of that tick's phase 1.
TEST(EventQueue, PhaseRoundsAndTimeOnlyGoesForward) {
  EventQueue q;
  q.push(10, 0, 1, 0, /*late=*/true);
  q.push(10, 0, 2, 0, /*late=*/true);
  q.push(10, 0, 3, 0);
  q.push(5, 0, 4, 0, /*late=*/true);
  std::vector<uint32_t> order;
  Event e;
  while (q.pop(e)) {
    order.push_back(e.a);
    if (e.a == 1) q.push(10, 0, 5, 0);  // phase 0 at the current tick, from a phase-1 handler
  }
  EXPECT_EQ(order, (std::vector<uint32_t>{4, 3, 1, 5, 2}));
  try {
    q.push(9, 0, 6, 0);
    ADD_FAILURE() << "an event before now() was accepted";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), ErrorCode::kInternal) << err.what();
  }
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
