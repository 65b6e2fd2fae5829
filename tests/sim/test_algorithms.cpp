// Every registry algorithm against the CPU reference: dtypes x worlds x sizes, fresh inputs.
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/sim/sim.h"
#include "backends/sim/testing.h"
#include "core/partition.h"

namespace symm::sim {
namespace {

const Machine& h200x8() {
  static const Machine m = Machine::by_name("h200x8");
  return m;
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

void expect_correct(const RunSpec& s) {
  SCOPED_TRACE(s.algo->id + " " + dtype_name(s.dtype) + " world=" + std::to_string(s.world) +
               " bytes=" + std::to_string(s.bytes) + " blocks=" + std::to_string(s.blocks) +
               " calls=" + std::to_string(s.calls) + " op=" + reduce_op_name(s.op));
  const RunResult r = run(s);
  EXPECT_GE(r.max_rel_err, 0);
  EXPECT_LE(r.max_rel_err, r.err_bound);
  EXPECT_GT(r.time_us, 0);
}

// A barrier has no output to compare: its rows check what it promises instead. Every rank runs
// the barrier entry's program, stores its `in` into the next rank's `out` (posted), and runs the
// barrier again; at the end of the call every host reads its `out`. A release/acquire barrier
// orders the host's earlier writes of `out` before the peer's stores, and those stores before the
// end of the call (no race); a relaxed one orders execution only, which the race check must report.
template <class Barrier>
struct StoreThenBarrier {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    Barrier::template run<T>(ctx, a);
    const Range piece = split_vec<T>(a.count, ctx.blocks(), ctx.block());
    if (piece.count)
      ctx.copy(ctx.peer(static_cast<T*>(a.out) + piece.begin, (ctx.rank() + 1) % ctx.world()),
               static_cast<const T*>(a.in) + piece.begin, piece.count * sizeof(T));
    Barrier::template run<T>(ctx, a);
  }
};

void expect_barrier_orders(const AlgoInfo& a) {
  int checked = 0;
  with_program(a, [&]<class P>() {
    if constexpr (requires { P::kOrders; }) {
      for (int world : {2, 3, 4, 8}) {
        RunSpec s = spec_for(a, DType::kBF16, world, 16 * 37, 3);
        s.blocks = 3;
        s.calls = 2;
        SCOPED_TRACE(a.id + " world=" + std::to_string(world));
        std::string msg;
        try {
          run_program<StoreThenBarrier<P>>(s);
        } catch (const Error& e) {
          ASSERT_EQ(e.code(), ErrorCode::kRace) << e.what();
          msg = e.what();
        }
        if (P::kOrders.wait == MemOrder::kAcquire && P::kOrders.signal == MemOrder::kRelease)
          EXPECT_EQ(msg, "") << "a release/acquire barrier did not order the stores before it";
        else
          EXPECT_NE(msg.find("release/acquire chain"), std::string::npos)
              << "a barrier without release/acquire was taken to order stores: " << msg;
        ++checked;
      }
    }
  });
  EXPECT_EQ(checked, 4) << a.id << " is a barrier entry without BarrierProgram's kOrders";
}

class EveryAlgorithm : public ::testing::TestWithParam<std::size_t> {};

TEST_P(EveryAlgorithm, MatchesReference) {
  const AlgoInfo& a = algorithms()[GetParam()];
  if (a.op == Op::kBarrier) return expect_barrier_orders(a);
  uint64_t seed = 1000 * GetParam();
  int ran = 0, skipped = 0;
  for (int world : {2, 3, 4, 8}) {
    if (world < a.min_world || world > a.max_world) continue;
    // RS and AG sizes are the whole buffer: one vector per rank is the smallest call.
    const std::size_t unit = (a.op == Op::kReduceScatter || a.op == Op::kAllGather) ? 16 * std::size_t(world) : 16;
    const std::size_t w = std::size_t(world);
    struct Size {
      std::size_t bytes;
      int blocks;  // 0: the registry's default
    };
    // One vector (on 4 blocks, so some blocks have nothing to move), odd vector counts that
    // split unevenly across ranks and blocks, and one call over 1 MiB.
    const Size sizes[] = {{unit, std::min(4, a.block_limit)},
                          {3 * unit * w + unit, 0},
                          {7 * unit * w + 5 * unit, std::min(3, a.block_limit)},
                          {((std::size_t(1) << 20) / unit + 3) * unit, 0}};
    for (const Size& sz : sizes) {
      const bool large = sz.bytes > (std::size_t(1) << 20);
      int blocks = sz.blocks;
      if (a.piece_bytes && blocks) {
        // LL programs bound their block counts both ways (check_args): where the count asked
        // for is outside them, run the registry's default count instead.
        try {
          check_args(a, DType::kFP32, sz.bytes, world, blocks);
        } catch (const Error& e) {
          if (e.code() == ErrorCode::kInvalidArgument) blocks = 0;
        }
      }
      for (DType t : {DType::kBF16, DType::kFP16, DType::kFP32}) {
        if (large && t != DType::kBF16) continue;  // one dtype is enough at this size
        try {  // sizes a program refuses (LL: over piece_bytes x block_limit per rank)
          check_args(a, t, sz.bytes, world, blocks ? blocks : a.default_blocks(sz.bytes, world));
        } catch (const Error& e) {
          ASSERT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
          ++skipped;
          continue;
        }
        RunSpec s = spec_for(a, t, world, sz.bytes, ++seed);
        s.blocks = blocks;
        expect_correct(s);
        ++ran;
      }
    }
  }
  // Only LL programs refuse any of these sizes (all_reduce over 1 MiB), and only the large one.
  EXPECT_GT(ran, 0);
  if (!a.piece_bytes) {
    EXPECT_EQ(skipped, 0);
  }
  EXPECT_GT(ran, 3 * skipped);
}

// LL programs at their size limit (every block carries a full piece) and just past it.
TEST(Sim, LlProgramsAtTheirLimit) {
  for (const char* id : {"all_reduce.one_shot_ll", "reduce_scatter.push_ll", "all_gather.push_ll"}) {
    const AlgoInfo& a = find_algo(id);
    const std::size_t most = a.piece_bytes * std::size_t(a.pieces_per_source(a.block_limit, 4));  // per rank
    const std::size_t bytes = a.op == Op::kAllReduce ? most : 4 * most;
    RunSpec s = spec_for(a, DType::kBF16, 4, bytes, 9);
    expect_correct(s);
    EXPECT_EQ(run(s).blocks, a.block_limit);
    s.bytes = bytes + (a.op == Op::kAllReduce ? 16 : 64);
    try {
      run(s);
      ADD_FAILURE() << id << " ran past its limit";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sim, EveryAlgorithm, ::testing::Range<std::size_t>(0, algorithms().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& p) {
                           std::string id = algorithms()[p.param].id;
                           for (char& c : id)
                             if (c == '.') c = '_';
                           return id;
                         });

// Epochs across calls: counters keep growing, st_reduce alternates its scratch halves, and
// each call gets fresh inputs (every call checked).
TEST(Sim, BackToBackCallsStayCorrect) {
  for (const char* id :
       {"all_reduce.one_shot", "all_reduce.one_shot_push", "all_reduce.two_shot_ld", "all_gather.push",
        "all_reduce.multimem", "all_reduce.one_shot_ll", "reduce_scatter.push_ll", "all_gather.push_ll"}) {
    for (int calls : {2, 3}) {
      RunSpec s = spec_for(find_algo(id), DType::kBF16, 4, 4 * 16 * 37, 77 + calls);
      s.blocks = find_algo(id).blocks_per_peer ? 4 : 2;  // push_ll AG deals blocks to the 4 peers
      s.calls = calls;
      expect_correct(s);
    }
  }
}

// Every registry algorithm over three back-to-back calls, every call checked (output as each
// host saw it at its call's end) and raced (read after write, write after read/write, the end of
// each call): no false reports from programs that skip the end barrier (st_reduce, LL), none
// from multimem, on every world size.
TEST(Sim, EveryAlgorithmThreeCallsEveryWorld) {
  for (const AlgoInfo& a : algorithms()) {
    for (int world : {2, 3, 4, 8}) {
      if (world < a.min_world || world > a.max_world) continue;
      const std::size_t unit = (a.op == Op::kReduceScatter || a.op == Op::kAllGather) ? 16 * std::size_t(world) : 16;
      for (std::size_t bytes : {unit * 5, unit * (64 * std::size_t(world) + 7)}) {
        RunSpec s = spec_for(a, DType::kBF16, world, bytes, 31 + std::size_t(world));
        s.calls = 3;
        expect_correct(s);
      }
    }
  }
}

TEST(Sim, MaxAndMinReduce) {
  for (ReduceOp op : {ReduceOp::kMax, ReduceOp::kMin})
    for (const char* id : {"all_reduce.one_shot", "all_reduce.multimem", "reduce_scatter.pull"}) {
      RunSpec s = spec_for(find_algo(id), DType::kFP16, 3, 3 * 16 * 11, 5);
      s.op = op;
      expect_correct(s);
    }
}

TEST(Sim, TimingOnlyScalesPastTheMachine) {
  RunSpec s = spec_for(find_algo("all_reduce.two_shot"), DType::kBF16, 16, 1 << 20, 1);
  s.timing_only = true;
  const RunResult r = run(s);
  EXPECT_EQ(r.max_rel_err, -1);
  EXPECT_GT(r.time_us, 0);
  EXPECT_GT(r.events, 0u);
}

}  // namespace
}  // namespace symm::sim
