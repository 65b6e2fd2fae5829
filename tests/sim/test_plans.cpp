// Host plans on the simulator (core/plan.h, backends/sim/streams.cpp): every plan against the
// CPU reference over dtypes x worlds x sizes x stream counts, back-to-back calls, the planted
// faults (a flag on a stream not ordered after its copy; a flag never written), a golden time
// on the tiny machine (a copy engine's cold start, ce_launch_us, beside it), and the trace's
// stream and copy-engine tracks.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "backends/sim/sim.h"
#include "backends/sim/testing.h"
#include "core/algos/all_gather_ce_sm_st.h"
#include "core/algos/all_gather_ce_st.h"
#include "core/algos/reduce_scatter_ce_st_ring_reduce.h"
#include "tests/core/thrown.h"

namespace symm::sim {
namespace {

const Machine& h200x8() {
  static const Machine m = Machine::by_name("h200x8");
  return m;
}

std::vector<const AlgoInfo*> plans() {
  std::vector<const AlgoInfo*> v;
  for (const AlgoInfo& a : algorithms())
    if (a.plan) v.push_back(&a);
  return v;
}

RunSpec spec_for(const AlgoInfo& a, DType t, int world, std::size_t bytes, uint64_t seed) {
  RunSpec s;
  s.machine = h200x8();
  s.world = world;
  s.algo = &a;
  s.dtype = t;
  s.bytes = bytes;
  s.seed = seed;
  return s;
}

TEST(Plans, TheRegistryListsThem) {
  const std::vector<const AlgoInfo*> p = plans();
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(find_algo(Op::kAllGather, "ce").id, "all_gather.ce_st");
  EXPECT_EQ(find_algo(Op::kAllGather, "ce_sm").id, "all_gather.ce_sm_st");
  EXPECT_EQ(find_algo(Op::kReduceScatter, "ce").id, "reduce_scatter.ce_st_ring_reduce");
  EXPECT_EQ(find_algo(Op::kReduceScatter, "ce_overlap").id, "reduce_scatter.ce_st_chunk_reduce");
  // ce's blocks are those of its own slot's local copy: 256 KiB per rank, 128 KiB per block.
  EXPECT_EQ(find_algo(Op::kAllGather, "ce").default_blocks(1 << 20, 4), 2);
}

// Sizes: one vector per rank, odd vector counts, a call cut into many chunks (small
// chunk_bytes), and one over 1 MiB; streams 1 (everything on the main stream), 2 and 4.
TEST(Plans, MatchReferenceEveryWorldDtypeAndStreamCount) {
  uint64_t seed = 77;
  int ran = 0;
  for (const AlgoInfo* a : plans())
    for (int world : {2, 3, 4, 8}) {
      const std::size_t unit = 16 * std::size_t(world);
      struct Case {
        std::size_t bytes, chunk;
        int streams;
      };
      const Case cases[] = {{unit, 0, 3},
                            {7 * unit + 16 * 5 * std::size_t(world), 64, 2},
                            {1000 * unit, 1024, 4},
                            {((std::size_t(1) << 20) / unit + 3) * unit, 0, 1}};
      for (const Case& c : cases)
        for (DType t : {DType::kBF16, DType::kFP16, DType::kFP32}) {
          if (c.bytes > (1u << 20) && t != DType::kBF16) continue;
          RunSpec s = spec_for(*a, t, world, c.bytes, ++seed);
          s.chunk_bytes = c.chunk;
          s.streams = c.streams;
          s.calls = 3;  // consumed flags must leave the pad ready for the next call
          SCOPED_TRACE(a->id + " " + dtype_name(t) + " world=" + std::to_string(world) +
                       " bytes=" + std::to_string(c.bytes) + " chunk=" + std::to_string(c.chunk) +
                       " streams=" + std::to_string(c.streams));
          const RunResult r = run(s);
          EXPECT_GE(r.max_rel_err, 0);
          EXPECT_LE(r.max_rel_err, r.err_bound);
          EXPECT_GT(r.time_us, 0);
          ++ran;
        }
    }
  EXPECT_EQ(ran, 4 * 4 * (3 * 3 + 1));
}

// all_gather.ce_sm_st's split: the SMs' share in whole 16-byte vectors; below kSmOnlyBelow per
// rank all bytes go by SMs; an explicit percent wins.
TEST(Plans, CeSmSplit) {
  using P = AllGatherCeSmSt;
  EXPECT_EQ(P::sm_bytes(1 << 20, 0), std::size_t(1) << 20);
  EXPECT_EQ(P::sm_bytes(std::size_t(128) << 20, 0), (std::size_t(128) << 20) / 100 * P::Config::kSmPercent / 16 * 16);
  EXPECT_EQ(P::sm_bytes(1600, 50), 800u);
  EXPECT_EQ(P::sm_bytes(1600, 100), 1600u);
  EXPECT_EQ(P::sm_bytes(1000, 50), 496u);  // 500 rounded down to whole vectors
  EXPECT_EQ(P::sm_bytes(std::size_t(128) << 20, 1) % 16, 0u);
}

// Both halves at work and every edge of the split: all SM, all copy engines but one vector,
// an even split, chunked copies with up to 63 flags, streams 1, 2 and 4; data checked.
TEST(Plans, CeSmEverySplitMatchesReference) {
  const AlgoInfo& a = find_algo(Op::kAllGather, "ce_sm");
  uint64_t seed = 5;
  for (int world : {2, 3, 8})
    for (int pct : {1, 50, 99, 100})
      for (int streams : {1, 2, 4}) {
        RunSpec s = spec_for(a, DType::kBF16, world, std::size_t(world) * 64 * 1024, ++seed);
        s.sm_percent = pct;
        s.chunk_bytes = pct == 50 ? 512 : 0;  // 32 KiB of copies in 512 B chunks: capped at 63 flags
        s.streams = streams;
        s.calls = 2;
        SCOPED_TRACE("world=" + std::to_string(world) + " pct=" + std::to_string(pct) +
                     " streams=" + std::to_string(streams));
        const RunResult r = run(s);
        EXPECT_GE(r.max_rel_err, 0);
        EXPECT_LE(r.max_rel_err, r.err_bound);
      }
}

TEST(Plans, MaxAndMinReduce) {
  const AlgoInfo& a = find_algo(Op::kReduceScatter, "ce_overlap");
  for (ReduceOp op : {ReduceOp::kMax, ReduceOp::kMin}) {
    RunSpec s = spec_for(a, DType::kBF16, 4, 64 * 1024, 5);
    s.op = op;
    s.chunk_bytes = 4096;
    const RunResult r = run(s);
    EXPECT_GE(r.max_rel_err, 0);
    EXPECT_LE(r.max_rel_err, r.err_bound);
  }
}

TEST(Plans, TimingOnlyScalesTo64Ranks) {
  RunSpec s = spec_for(find_algo(Op::kAllGather, "ce"), DType::kBF16, 64, std::size_t(256) << 20, 1);
  s.timing_only = true;
  const RunResult r = run(s);
  EXPECT_EQ(r.max_rel_err, -1);
  EXPECT_GT(r.time_us, 0);
}

// A data flag written on another side stream than the one that copied: the flag is not
// ordered after the copy. The race check must catch it for that reason: the peer (its host at the
// end of its call, a stream, the reduce kernel) reads the bytes of a copy no release/acquire chain
// orders before it, or the copy lands while such a read may still run; not a flag written twice,
// not a deadlock. The control: TheRealPlansPassTheSameRuns.
template <class Plan>
void expect_flag_on_other_stream_caught(const AlgoInfo& a) {
  for (int world : {2, 4}) {
    RunSpec s = spec_for(a, DType::kBF16, world, 64 * 1024 * std::size_t(world), 9);
    s.streams = 3;
    SCOPED_TRACE(a.id + " world=" + std::to_string(world));
    const std::string m = testing::thrown([&] { run_plan<Plan>(s); }, ErrorCode::kRace);
    EXPECT_EQ(m.rfind("race: ", 0), 0u) << m;
    EXPECT_TRUE(m.find(" reads ") != std::string::npos || m.find(" may still be reading ") != std::string::npos) << m;
    EXPECT_NE(m.find(" stream "), std::string::npos) << m;  // the copy's stream
    EXPECT_NE(m.find("release/acquire chain"), std::string::npos) << m;
  }
}

TEST(Plans, FlagNotOrderedAfterItsCopyIsCaught) {
  expect_flag_on_other_stream_caught<AllGatherCeT<PlanFault::kFlagOnOtherStream>>(find_algo(Op::kAllGather, "ce"));
  expect_flag_on_other_stream_caught<ReduceScatterCeT<false, PlanFault::kFlagOnOtherStream>>(
      find_algo(Op::kReduceScatter, "ce"));
  expect_flag_on_other_stream_caught<ReduceScatterCeT<true, PlanFault::kFlagOnOtherStream>>(
      find_algo(Op::kReduceScatter, "ce_overlap"));
}

TEST(Plans, TheRealPlansPassTheSameRuns) {  // the mutant test's control: no fault, no report
  for (const AlgoInfo* a : plans()) {
    RunSpec s = spec_for(*a, DType::kBF16, 4, 64 * 1024 * 4, 9);
    s.streams = 3;
    const RunResult r = run(s);
    EXPECT_LE(r.max_rel_err, r.err_bound) << a->id;
  }
}

TEST(Plans, MissingFlagIsADeadlockNamingRankStreamAndSlot) {
  RunSpec s = spec_for(find_algo(Op::kAllGather, "ce"), DType::kBF16, 4, 4096, 3);
  try {
    run_plan<AllGatherCeT<PlanFault::kNoFlag>>(s);
    FAIL() << "a flag that is never written must be a deadlock";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kDeadlock) << e.what();
    const std::string m = e.what();
    // Rank r skips its chunk-0 flag to rank r+1: rank r+1's main stream waits for it.
    EXPECT_NE(m.find("stream 0 waits on plan slot"), std::string::npos) << m;
    EXPECT_NE(m.find("(channel 1, chunk 0, from rank"), std::string::npos) << m;
    EXPECT_NE(m.find("for value 1 but sees 0"), std::string::npos) << m;
  }
  RunSpec r = spec_for(find_algo(Op::kReduceScatter, "ce"), DType::kBF16, 2, 4096, 3);
  using Mutant = ReduceScatterCeT<false, PlanFault::kNoFlag>;
  const std::string m = testing::thrown([&] { run_plan<Mutant>(r); }, ErrorCode::kDeadlock);
  EXPECT_NE(m.find("stream 0 waits on plan slot"), std::string::npos) << m;
  EXPECT_NE(m.find("(channel 1, chunk 0, from rank"), std::string::npos) << m;
  EXPECT_LE(run(r).max_rel_err, run(r).err_bound);  // the control: the real plan, same run
}

// The end of a call (core/plan.h): a plan that never joins its side streams into the main stream
// is refused when its call has been enqueued, naming rank and stream, before anything runs; the
// real plans pass the same runs (TheRealPlansPassTheSameRuns).
template <class Plan>
void expect_unjoined_refused(const AlgoInfo& a) {
  RunSpec s = spec_for(a, DType::kBF16, 2, 64 * 1024 * 2, 9);
  s.streams = 3;
  SCOPED_TRACE(a.id);
  const std::string m = testing::thrown([&] { run_plan<Plan>(s); }, ErrorCode::kInvalidArgument);
  EXPECT_NE(m.find("rank 0 stream 1: side stream not joined at the end of the call"), std::string::npos) << m;
  EXPECT_NE(m.find("are not waited for by stream 0"), std::string::npos) << m;
  EXPECT_LE(run(s).max_rel_err, run(s).err_bound);  // the control
}

TEST(Plans, AnUnjoinedSideStreamIsRefusedNamingRankAndStream) {
  expect_unjoined_refused<AllGatherCeT<PlanFault::kNoJoin>>(find_algo(Op::kAllGather, "ce"));
  expect_unjoined_refused<AllGatherCeSmStT<PlanFault::kNoJoin>>(find_algo(Op::kAllGather, "ce_sm"));
  expect_unjoined_refused<ReduceScatterCeT<false, PlanFault::kNoJoin>>(find_algo(Op::kReduceScatter, "ce"));
  expect_unjoined_refused<ReduceScatterCeT<true, PlanFault::kNoJoin>>(find_algo(Op::kReduceScatter, "ce_overlap"));
}

// The entry handshake is what lets a call push into a peer's buffers (core/plan.h): without it, a
// second call's copies land in a peer's `out` / scratch the peer's first call may still be reading
// (or its caller has taken back). Three calls: the race check names the unordered write.
template <class Plan>
void expect_no_entry_caught(const AlgoInfo& a) {
  for (int world : {2, 4}) {
    RunSpec s = spec_for(a, DType::kBF16, world, 16 * 1024 * std::size_t(world), 11);
    s.calls = 3;
    SCOPED_TRACE(a.id + " world=" + std::to_string(world));
    EXPECT_LE(run(s).max_rel_err, run(s).err_bound);  // the control: the real plan, same calls
    const std::string m = testing::thrown([&] { run_plan<Plan>(s); }, ErrorCode::kRace);
    EXPECT_NE(m.find("race: "), std::string::npos) << m;
    EXPECT_NE(m.find("no release/acquire chain"), std::string::npos) << m;
  }
}

TEST(Plans, WithoutTheEntryHandshakeTheNextCallIsCaught) {
  expect_no_entry_caught<AllGatherCeT<PlanFault::kNoEntry>>(find_algo(Op::kAllGather, "ce"));
  expect_no_entry_caught<AllGatherCeSmStT<PlanFault::kNoEntry>>(find_algo(Op::kAllGather, "ce_sm"));
  expect_no_entry_caught<ReduceScatterCeT<false, PlanFault::kNoEntry>>(find_algo(Op::kReduceScatter, "ce"));
  expect_no_entry_caught<ReduceScatterCeT<true, PlanFault::kNoEntry>>(find_algo(Op::kReduceScatter, "ce_overlap"));
}

// The tiny machine (tests/sim/tiny.ini): 1 GB/s = 1000 bytes/us copy engine, one engine, 1 us
// engine start-up, flags and remote stores land 1 us after, eager launch 2 us (a call with copies
// starts after it in either mode: streams.cpp run_plan_call), no cold start.
// all_gather.ce_st, world 2, 2048 bytes (1024 per rank), one chunk, 3 streams, every rank alike:
//   t=2     launch; main writes "ready" to the peer (lands t=3)
//   t=3     main consumes the peer's "ready", records event 0; side stream 1 waits for it
//   t=3     side stream 1's peer copy takes the only copy engine: start-up 1 (+ ce_launch_us: the
//           copy follows a wait_event) -> flow 1024 B at 1000 B/us -> t=5.024, remote: lands 1 us
//           later, t=6.024 (main's own slot is copied by SMs meanwhile: copy_local, one block at
//           1000 B/us, done long before)
//   t=6.024 side stream 1 writes the data flag; it lands on the peer at t=7.024
//   t=7.024 main consumes it, joins the side streams: the call ends.
RunSpec tiny_all_gather_ce() {
  RunSpec s;
  s.machine = Machine::load(std::string(SYMM_TEST_DIR) + "/tiny.ini");
  s.world = 2;
  s.algo = &find_algo(Op::kAllGather, "ce");
  s.bytes = 2048;
  s.streams = 3;
  return s;
}

TEST(Plans, GoldenTimeOnTheTinyMachine) {
  const RunSpec s = tiny_all_gather_ce();
  const RunResult r = run(s);
  EXPECT_NEAR(r.time_us, 7.024, 1e-9);
  EXPECT_LE(r.max_rel_err, r.err_bound);
  RunSpec g = s;  // a call with copies launches as eager in a graph too (and its time is the same)
  g.graph = false;
  EXPECT_NEAR(run(g).time_us, 7.024, 1e-9);
}

// calibrate's plan_flag_batch row (apps/harness/cuda/calibrate.cpp plan_rows) as a plan: n
// write_flags on a side stream, then n wait_flags on the main stream, each run one batch.
template <int kN>
struct FlagBatchRow {
  template <class T, class Host>
  static void run(Host& h, const PlanArgs&) {
    const int me = h.rank();
    h.record(kMainStream, 0);
    h.wait_event(1, 0);
    for (int i = 0; i < kN; ++i) h.write_flag(1, me, pad::plan_flag(pad::kPlanData, 2 + i, me), 1);
    for (int i = 0; i < kN; ++i) h.wait_flag(kMainStream, pad::plan_flag(pad::kPlanData, 2 + i, me), 1);
    h.record(1, 1);
    h.wait_event(kMainStream, 1);
  }
};

// The row grows by two batched operations a pair: a rank's flag operations take its GPU's front end
// one at a time (streams.cpp front_end), the side stream's writes and the main stream's waits
// alike. The fit reads the key as half the row's slope per pair (apps/harness/sim/fit.cpp), which
// is what this checks it to be.
TEST(Plans, FlagBatchRowGrowsByTwoBatchedOperationsAPair) {
  RunSpec s = tiny_all_gather_ce();
  s.timing_only = true;
  s.machine.stream_op_us = 2.0;
  s.machine.stream_batch_op_us = 0.5;
  const double t1 = run_plan<FlagBatchRow<1>>(s).time_us;
  EXPECT_NEAR(run_plan<FlagBatchRow<2>>(s).time_us - t1, 1.0, 1e-9);
  EXPECT_NEAR(run_plan<FlagBatchRow<4>>(s).time_us - t1, 3.0, 1e-9);
  EXPECT_NEAR(run_plan<FlagBatchRow<8>>(s).time_us - t1, 7.0, 1e-9);
}

// On a team machine the ranks of one GPU share its front end (streams.cpp front_end): k ranks
// running calibrate's plan_flag row (FlagBatchRow<1>: one write, its wait) at once take k times a
// rank's two operations, as calibrate's plan_flag measured on one H200 (10.2 us a call at 2 ranks,
// 20.1 at 4), which is how the fit reads the key there (apps/harness/sim/fit.cpp). A GPU each: no
// rank waits for another's operations.
TEST(Plans, RanksOfOneGpuTakeItsFrontEndInTurn) {
  RunSpec s = tiny_all_gather_ce();
  s.timing_only = true;
  s.machine.stream_op_us = 2.0;
  s.machine.team = 1;
  for (int k : {2, 4}) {
    s.world = k;
    s.machine.gpus = k;
    const double apart = run_plan<FlagBatchRow<1>>(s).time_us;
    s.machine.gpus = 1;
    EXPECT_NEAR(run_plan<FlagBatchRow<1>>(s).time_us - apart, (k - 1) * 2 * 2.0, 1e-9) << k << " ranks";
  }
}

// Where ranks share a GPU, a team's eager calls enqueue in lockstep and CUDA batches no flag
// operation meanwhile (PlanExec::batching): each takes stream_op_us, as in a team's graph. With a
// GPU each there is no lockstep and the pairs beyond the first ride in the batch.
TEST(Plans, ATeamSharingAGpuBatchesNoFlagsInEagerCalls) {
  RunSpec s = tiny_all_gather_ce();
  s.timing_only = true;
  s.graph = false;
  s.machine.stream_op_us = 2.0;
  s.machine.stream_batch_op_us = 0.5;
  s.machine.team = 1;
  s.machine.gpus = 2;  // a GPU each: batched
  EXPECT_NEAR(run_plan<FlagBatchRow<4>>(s).time_us - run_plan<FlagBatchRow<1>>(s).time_us, 3.0, 1e-9);
  s.machine.gpus = 1;  // both ranks on one GPU: every operation whole, the two ranks' in turn
  EXPECT_NEAR(run_plan<FlagBatchRow<4>>(s).time_us - run_plan<FlagBatchRow<1>>(s).time_us, 2 * 6 * 2.0, 1e-9);
}

// host_event_us, host_flag_us: an eager call's host enqueues its items one after another
// (FlagBatchRow<1>: six stream operations, events and flags, none a kernel or copy), and none
// starts before it is enqueued: the call ends no sooner than 6 x 10 us, and no later than that
// plus the call without a host chain. A graph enqueues nothing per call: unchanged.
TEST(Plans, AnEagerCallWaitsForItsHostToEnqueueEachItem) {
  RunSpec s = tiny_all_gather_ce();
  s.timing_only = true;
  s.machine.stream_op_us = 2.0;
  s.graph = false;
  const double free_host = run_plan<FlagBatchRow<1>>(s).time_us;
  s.graph = true;
  const double graph = run_plan<FlagBatchRow<1>>(s).time_us;
  s.machine.host_event_us = s.machine.host_flag_us = 10.0;
  EXPECT_DOUBLE_EQ(run_plan<FlagBatchRow<1>>(s).time_us, graph);
  s.graph = false;
  const double chained = run_plan<FlagBatchRow<1>>(s).time_us;
  EXPECT_GE(chained, 6 * 10.0);
  EXPECT_LE(chained, 6 * 10.0 + free_host);
}

// A team's ranks are threads of one process, whose enqueuing goes through one driver in turn: on a
// team machine each item costs world x its host cost (engine.cpp; sim.h host_scale). Two ranks on one
// GPU, the six items of FlagBatchRow<1> at 10 us each: at least 2 x 60 us, and no more than that
// plus the call without a host chain (a team's bench waits for each eager call: no overlap).
TEST(Plans, ATeamsRanksEnqueueThroughOneDriverInTurn) {
  RunSpec s = tiny_all_gather_ce();
  s.timing_only = true;
  s.graph = false;
  s.machine.team = true;
  s.machine.gpus = 1;
  s.machine.stream_op_us = 2.0;
  const double free_host = run_plan<FlagBatchRow<1>>(s).time_us;
  s.machine.host_event_us = s.machine.host_flag_us = 10.0;
  const double chained = run_plan<FlagBatchRow<1>>(s).time_us;
  EXPECT_GE(chained, 2 * 6 * 10.0);
  EXPECT_LE(chained, 2 * 6 * 10.0 + free_host);
}

// Back-to-back eager calls (the bench's samples): the host enqueues the next call while the GPU
// runs this one (engine.cpp host_ahead). Where the GPU's work outlasts the host's (six stream
// operations of 20 us each against 6 x 1 us of enqueuing), the timed call finds every item
// enqueued and starts as a graph's next call does: the graph's time exactly. Without the host
// running ahead it would start launch_eager_us after the call before, its first item waiting.
TEST(Plans, BackToBackEagerCallsHideTheHostBehindTheGpu) {
  RunSpec s = tiny_all_gather_ce();
  s.timing_only = true;
  s.machine.stream_op_us = 20.0;
  s.machine.launch_eager_us = 5.0;
  s.machine.host_event_us = s.machine.host_flag_us = 1.0;
  const double graph = run_plan<FlagBatchRow<1>>(s).time_us;
  s.graph = false;
  EXPECT_NEAR(run_plan<FlagBatchRow<1>>(s).time_us, graph, 1e-9);
  s.machine.team = true;  // a team's bench times one eager call a sample and waits for it: no overlap
  s.machine.gpus = 2;
  EXPECT_GT(run_plan<FlagBatchRow<1>>(s).time_us, graph + 1.0);
}

// A call of kernels and stream flags only (the all-gather `ce_sm` with every byte by SMs) launches
// as a graph in a graph: launch_graph_us, not launch_eager_us (run_plan_call; 2x H200 measured that
// plan below 1M at 11.7 us in a graph, 22.4 eager, where the copy-engine plans take the same time
// in both). Its eager call is the difference later.
TEST(Plans, ACallWithoutCopiesLaunchesAsAGraph) {
  RunSpec s = tiny_all_gather_ce();
  s.algo = &find_algo(Op::kAllGather, "ce_sm");
  s.sm_percent = 100;
  const RunResult graph = run(s);
  EXPECT_LE(graph.max_rel_err, graph.err_bound);
  s.graph = false;
  EXPECT_NEAR(run(s).time_us - graph.time_us, s.machine.launch_eager_us - s.machine.launch_graph_us, 1e-9);
}

// ce_launch_us: the peer copy (after a wait_event) starts cold, 0.5 us later (the rank's own slot
// is copy_local's, a kernel: no copy engine's cold start there).
TEST(Plans, ColdPeerCopyPaysCeLaunch) {
  RunSpec s = tiny_all_gather_ce();
  s.machine.ce_launch_us = 0.5;
  const RunResult r = run(s);
  EXPECT_NEAR(r.time_us, 7.524, 1e-9);
  EXPECT_LE(r.max_rel_err, r.err_bound);
}

// Consecutive flag items of one stream are one batch (StreamItem::batched, as CUDA's
// cuStreamBatchMemOp): with stream_op_us = 1 the golden call takes 3 us more, not 4: the entry
// handshake's write and wait (one batch on the main stream), the side stream's data flag, the
// main stream's wait for the peer's (a launch before it starts a new batch).
// A batch's later item takes stream_batch_op_us: with 0.25 more, the entry handshake's wait (the
// one item riding in a batch on the golden call's critical path) adds 0.25.
TEST(Plans, ConsecutiveFlagItemsOfAStreamShareOneStreamOp) {
  RunSpec s = tiny_all_gather_ce();
  const double base = run(s).time_us;
  s.machine.stream_op_us = 1.0;
  const RunResult r = run(s);
  EXPECT_NEAR(r.time_us - base, 3.0, 1e-9);
  EXPECT_LE(r.max_rel_err, r.err_bound);
  s.machine.stream_batch_op_us = 0.25;
  EXPECT_NEAR(run(s).time_us - base, 3.25, 1e-9);
}

// A peer copy's local side is not charged to HBM (copy_engines.cpp): with HBM slow enough that the
// engine's read alone would fill it (500 B/us against the engine's 1000 B/us read, charged at half),
// the own slot's copy_local kernel beside it still leaves the golden time unchanged.
TEST(Plans, PeerCopyIsNotSlowedByALocalKernelOnHbm) {
  RunSpec s = tiny_all_gather_ce();
  s.machine.hbm_GBps = 0.5;
  const RunResult r = run(s);
  EXPECT_NEAR(r.time_us, 7.024, 1e-9);
  EXPECT_LE(r.max_rel_err, r.err_bound);
}

// Two peer copies on one side stream: back to back, the second starts warm; with an item between
// them (a record), it starts cold. The times differ by ce_launch_us exactly.
template <bool kGap>
struct TwoPeerCopies {
  template <class T, class Host>
  static void run(Host& h, const PlanArgs& a) {
    const int me = h.rank(), n = h.world(), q = (me + 1) % n;
    const std::size_t bytes = a.coll.count * sizeof(T);
    char* out = static_cast<char*>(a.coll.out);
    plan_entry(h);
    h.record(kMainStream, 0);
    h.wait_event(1, 0);
    h.copy_engine(1, h.peer(out, q) + std::size_t(me) * bytes, a.coll.in, bytes / 2);
    if (kGap) h.record(1, 2);
    h.copy_engine(1, h.peer(out, q) + std::size_t(me) * bytes + bytes / 2,
                  static_cast<const char*>(a.coll.in) + bytes / 2, bytes / 2);
    h.write_flag(1, q, pad::plan_flag(pad::kPlanData, 0, me), 1);
    h.record(1, 1);
    h.wait_flag(kMainStream, pad::plan_flag(pad::kPlanData, 0, q), 1);
    h.wait_event(kMainStream, 1);
  }
};

TEST(Plans, BackToBackCopiesStartWarm) {
  RunSpec s = tiny_all_gather_ce();
  s.timing_only = true;
  s.machine.ce_launch_us = 0.5;
  const double warm = run_plan<TwoPeerCopies<false>>(s).time_us;
  const double cold = run_plan<TwoPeerCopies<true>>(s).time_us;
  EXPECT_NEAR(cold - warm, 0.5, 1e-9);
  s.machine.ce_launch_us = 0;
  EXPECT_NEAR(run_plan<TwoPeerCopies<true>>(s).time_us, run_plan<TwoPeerCopies<false>>(s).time_us, 1e-9);
}

// Two cold peer copies, to the next and the previous rank, each on its own side stream (world 3):
// what a rank's copies on several streams cost (copy_engines.cpp grant_copy_engines, start_copy).
struct CopiesOnTwoStreams {
  template <class T, class Host>
  static void run(Host& h, const PlanArgs& a) {
    const int me = h.rank(), n = h.world();
    const std::size_t bytes = a.coll.count * sizeof(T);
    char* out = static_cast<char*>(a.coll.out);
    plan_entry(h);
    h.record(kMainStream, 0);
    for (int i = 1; i <= 2; ++i) {
      const int q = (me + i) % n;
      h.wait_event(i, 0);
      h.copy_engine(i, h.peer(out, q) + std::size_t(me) * bytes, a.coll.in, bytes);
      h.write_flag(i, q, pad::plan_flag(pad::kPlanData, 0, me), 1);
      h.record(i, i);
    }
    for (int i = 1; i <= 2; ++i) h.wait_flag(kMainStream, pad::plan_flag(pad::kPlanData, 0, (me + n - i) % n), 1);
    for (int i = 1; i <= 2; ++i) h.wait_event(kMainStream, i);
  }
};

RunSpec two_stream_copies() {
  RunSpec s = tiny_all_gather_ce();
  s.world = 3;
  s.bytes = 3 * 1024;  // 1024 bytes a rank: 1.024 us at the engine's 1000 B/us
  s.timing_only = true;
  s.machine.copy_engines = 2;
  s.machine.nvlink_egress_GBps = s.machine.nvlink_ingress_GBps = 8;  // the links never bind
  return s;
}

// ce_per_rank 1: the rank's second copy waits for its first to land (the engine is the rank's
// again when that copy is done: start-up 1 + flow 1.024 + landing 1 = 3.024 us later); 0 (or 2):
// both run at once on the GPU's two engines.
TEST(Plans, CePerRankMakesARanksCopiesTakeTurns) {
  RunSpec s = two_stream_copies();
  const double together = run_plan<CopiesOnTwoStreams>(s).time_us;
  s.machine.ce_per_rank = 1;
  EXPECT_NEAR(run_plan<CopiesOnTwoStreams>(s).time_us - together, 3.024, 1e-9);
  s.machine.ce_per_rank = 2;
  EXPECT_NEAR(run_plan<CopiesOnTwoStreams>(s).time_us, together, 1e-9);
}

// Cold starts take the GPU's front end one at a time (streams.cpp front_end): with both copies
// cold on two engines, the second starts ce_launch_us after the first's start, so the call grows
// by twice ce_launch_us, not once.
TEST(Plans, ColdStartsOfARankTakeItsFrontEndInTurn) {
  RunSpec s = two_stream_copies();
  const double warm = run_plan<CopiesOnTwoStreams>(s).time_us;
  s.machine.ce_launch_us = 0.5;
  EXPECT_NEAR(run_plan<CopiesOnTwoStreams>(s).time_us - warm, 1.0, 1e-9);
}

// A copy engine faster than the links' rate (ce_GBps above nvlink_*_GBps, which SM copies reach)
// is not held to it: its bytes take that ratio of a link's time (copy_engines.cpp). The golden
// call's copy at 1000 B/us over links of 500 B/us still takes 1.024 us; its data still checks.
TEST(Plans, FasterEngineIsNotHeldToTheSmLinkRate) {
  RunSpec s = tiny_all_gather_ce();
  s.machine.nvlink_egress_GBps = s.machine.nvlink_ingress_GBps = 0.5;
  const RunResult r = run(s);
  EXPECT_NEAR(r.time_us, 7.024, 1e-9);
  EXPECT_LE(r.max_rel_err, r.err_bound);
  // Each direction by its own rate: a slow egress beside a fast ingress still frees the engine.
  s.machine.nvlink_ingress_GBps = 2;
  EXPECT_NEAR(run(s).time_us, 7.024, 1e-9);
}

// On a team machine the GPU's engines serve every rank: a rank at its ce_per_rank bound lets the
// copies queued behind it, other ranks', take a free engine (no head-of-line blocking). Rank 0 queues
// two short copies (512 B, on two streams) at once; rank 1 its long one (4096 B) 0.2 us later, after a
// flag to itself. Passing rank 0's second copy, it starts at once on the second engine and the call
// ends with it (0.2 + 1 + 4.096 + 1 after the kick); queued behind that copy, it would start only
// once rank 0's first copy had landed (1 + 0.512 + 1 = 2.512 after the kick).
struct CopiesQueuedByTwoRanks {
  template <class T, class Host>
  static void run(Host& h, const PlanArgs& a) {
    const int me = h.rank(), q = 1 - me;
    const std::size_t bytes = a.coll.count * sizeof(T);
    char* out = static_cast<char*>(a.coll.out);
    h.record(kMainStream, 0);
    if (me == 0)
      for (int i = 1; i <= 2; ++i) {
        h.wait_event(i, 0);
        h.copy_engine(i, h.peer(out, q) + std::size_t(i - 1) * 512, a.coll.in, 512);
        h.record(i, i);
      }
    else {
      h.wait_event(1, 0);
      h.write_flag(1, me, pad::plan_flag(pad::kPlanData, 0, me), 1);
      h.wait_flag(1, pad::plan_flag(pad::kPlanData, 0, me), 1);
      h.copy_engine(1, h.peer(out, q), a.coll.in, bytes);
      h.record(1, 1);
    }
    for (int i = 1; i <= (me == 0 ? 2 : 1); ++i) h.wait_event(kMainStream, i);
  }
};

TEST(Plans, ARankAtItsBoundLetsOtherRanksCopiesPass) {
  RunSpec s = tiny_all_gather_ce();
  s.bytes = 2 * 4096;  // 4096 bytes a rank
  s.timing_only = true;
  s.machine.team = 1, s.machine.gpus = 1;
  s.machine.hbm_GBps = 1e6;  // copies within the GPU: HBM never binds
  s.machine.copy_engines = 2;
  s.machine.ce_per_rank = 1;
  s.machine.stream_op_us = 0.1;  // rank 1's flag to itself: its copy comes 0.2 us after rank 0's
  // A call with copies starts launch_eager_us (2) after the host's call (streams.cpp run_plan_call).
  EXPECT_NEAR(run_plan<CopiesQueuedByTwoRanks>(s).time_us, 2 + 0.2 + 1 + 4.096 + 1, 1e-9);
  s.machine.copy_engines = 1;  // one engine: rank 1's copy waits for both of rank 0's to land
  EXPECT_NEAR(run_plan<CopiesQueuedByTwoRanks>(s).time_us, 2 + 2 * 2.512 + 1 + 4.096 + 1, 1e-9);
}

TEST(Plans, TraceHasStreamAndCopyEngineTracks) {
  const std::string path = ::testing::TempDir() + "plan_trace.json";
  RunSpec s = spec_for(find_algo(Op::kReduceScatter, "ce_overlap"), DType::kBF16, 2, 64 * 1024, 4);
  s.trace_path = path;
  s.chunk_bytes = 8192;
  run(s);
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string t = ss.str();
  for (const char* want : {"\"stream 1\"", "\"copy engine 0\"", "\"copy_engine\"", "\"write_flag\"", "\"wait_flag\"",
                           "\"launch\"", "\"block\""})
    EXPECT_NE(t.find(want), std::string::npos) << want;
  std::remove(path.c_str());
}

TEST(Plans, BadStreamCountIsRefused) {
  RunSpec s = spec_for(find_algo(Op::kAllGather, "ce"), DType::kBF16, 2, 4096, 1);
  s.streams = 0;
  EXPECT_NE(testing::thrown([&] { run(s); }, ErrorCode::kInvalidArgument).find("streams 0 is outside 1..8"),
            std::string::npos);
  s.streams = kMaxStreams + 1;
  EXPECT_NE(testing::thrown([&] { run(s); }, ErrorCode::kInvalidArgument).find("streams 9 is outside 1..8"),
            std::string::npos);
}

}  // namespace
}  // namespace symm::sim
