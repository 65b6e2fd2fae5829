// The collective bench's case selection and run loop (bench_impl.h): per op, dtype and size, the
// cases to measure (NCCL's baselines, each algorithm at each block count that fits, --algo auto's
// choices), each checked and then timed in graph and eager mode; and bench_rank, one rank's run.
#include "apps/harness/cuda/bench.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "apps/harness/cuda/bench_common.h"
#include "apps/harness/cuda/bench_impl.h"
#include "apps/harness/cuda/bench_rank.h"
#include "apps/harness/cuda/trace_out.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/runtime.h"
#include "core/auto_select.h"
#include "core/dispatch.h"
#include "core/registry.h"
#include "core/result.h"

namespace symm::cuda {
namespace coll_bench {

void Bench::run_op(Op op, DType t, const std::vector<const AlgoInfo*>& algos, bool auto_algo) {
  const int world = rt_.world();
  const std::vector<std::size_t> sizes = op == Op::kBarrier ? std::vector<std::size_t>{0} : o_.sizes;
  for (std::size_t bytes_asked : sizes) {
    // Testing (SYMM_TEST_RANK_SIZE): one rank runs another size than the others.
    const std::size_t bytes = test_.size_rank == rt_.rank() && op != Op::kBarrier ? test_.size : bytes_asked;
    if (op == Op::kReduceScatter || op == Op::kAllGather) {
      if (bytes % (kVecBytes * std::size_t(world))) {
        note("skip " + format_size(bytes) + ": not a multiple of 16 * world for " + op_name(op));
        continue;
      }
    }
    std::vector<Case> cases;
    if (o_.nccl && op != Op::kBarrier)
      cases.push_back(Case{nullptr, false, 0}), cases.push_back(Case{nullptr, true, 0});
    if (o_.nccl && op == Op::kAllGather && nccl_ce()) cases.push_back(Case{nullptr, true, 0, true});
    for (const AlgoInfo* a : algos) {
      if (a->max_bytes_for(world) && bytes > a->max_bytes_for(world)) {
        note("skip " + a->id + " at " + format_size(bytes) + ": above its maximum of " +
             format_size(a->max_bytes_for(world)));
        continue;
      }
      for (int b : o_.blocks) {
        // A plan that launches no kernel (the copy-engine all-gather) has no blocks to set.
        if (a->plan && a->block_limit == 0 && b > 0) {
          note("skip " + a->id + " blocks=" + std::to_string(b) + ": it launches no kernel (copy engines only)");
          continue;
        }
        // Flagged-packet programs carry at most piece_bytes per block and need every block
        // busy: sizes and block counts outside that are skipped with a note, not fatal. So
        // are block counts that do not fit beside the other ranks' on one GPU (a team).
        if (a->piece_bytes || (team() && !a->plan)) {
          try {
            const LaunchPlan p = plan_launch_resident(*a, t, bytes, world, b, o_.threads, rt_.handle());
            const int fit = program_fit_blocks(*a, t, rt_.handle(), p.threads);
            if (p.blocks > fit)
              fail(ErrorCode::kUnsupported, std::to_string(rt_.handle().team_gpu_ranks) + " ranks x " +
                                                std::to_string(p.blocks) + " blocks of " + std::to_string(p.threads) +
                                                " threads do not fit on one GPU at once (at most " +
                                                std::to_string(fit) + " per rank)");
          } catch (const Error& e) {
            note("skip " + a->id + " at " + format_size(bytes) + (b > 0 ? " blocks=" + std::to_string(b) : "") + ": " +
                 e.what());
            continue;
          }
        }
        cases.push_back(Case{a, false, b});
      }
    }
    if (auto_algo) add_auto_cases(op, t, bytes, cases);
    const uint64_t seed = next_seed_++;
    const bool check = o_.check && op != Op::kBarrier && bytes <= o_.check_max;
    with_type(t, [&]<class T>() { run_size<T>(op, t, bytes, seed, check, cases); });
  }
}

void Bench::add_auto_cases(Op op, DType t, std::size_t bytes, std::vector<Case>& cases) {
  std::vector<Case> chosen;
  for (const bool graph : {true, false}) {
    if ((graph && !o_.graph) || (!graph && !o_.eager)) continue;
    AutoChoice c;
    try {
      c = auto_choose(AutoQuery{machine_, op, bytes, rt_.world(), t, graph});
    } catch (const Error& e) {
      note("skip auto at " + format_size(bytes) + ": " + e.what());
      continue;
    }
    note("auto " + std::string(op_name(op)) + " " + dtype_name(t) + " " + format_size(bytes) + " " +
         (graph ? "graph" : "eager") + ": " + c.algo->id + " at " +
         (c.blocks ? "blocks=" + std::to_string(c.blocks) : "its default block count") + "; " + c.why);
    if (!chosen.empty() && chosen.back().info == c.algo && chosen.back().blocks == c.blocks)
      chosen.back().mode = -1;  // the same program for both modes: one case times both
    else
      chosen.push_back(Case{c.algo, false, c.blocks, false, graph ? 1 : 0});
  }
  cases.insert(cases.end(), chosen.begin(), chosen.end());
}

template <class T>
void Bench::run_size(Op op, DType t, std::size_t bytes, uint64_t seed, bool check, const std::vector<Case>& cases) {
  const int world = rt_.world();
  const AlgoInfo& any =
      *std::find_if(algorithms().begin(), algorithms().end(), [&](const AlgoInfo& a) { return a.op == op; });
  const std::size_t count = any.count(bytes, t, world);
  const std::size_t in_count = any.in_bytes(bytes, world) / sizeof(T);
  const std::size_t out_count = any.out_bytes(bytes, world) / sizeof(T);
  Answers<T> answer;
  if (check) answer = answers<T>(op, t, bytes, seed, count, in_count, out_count);
  for (const Case& asked : cases) {
    const Case c = testing_case(asked, op);
    LaunchPlan plan{0, 0};
    if (c.plan()) {  // blocks: the plan's reduce kernel (0: copies only)
      plan = LaunchPlan{c.blocks > 0 ? c.blocks : c.info->default_blocks(bytes, world), kDefaultThreads};
      check_args(*c.info, t, bytes, world, plan.blocks, o_.rop);
    } else if (c.info)
      plan = plan_launch_resident(*c.info, t, bytes, world, c.blocks, o_.threads, rt_.handle());
    ResultRow row;
    row.backend = "cuda";
    row.machine = machine_;
    row.world = world;
    row.op = op_name(op);
    row.algo = c.name();
    row.dtype = dtype_name(t);
    row.bytes = bytes;
    row.blocks = plan.blocks;
    row.git_sha = git_sha();
    const bool row_failed = check && check_case<T>(c, op, t, bytes, plan, answer, row);
    if (!o_.timing) {
      emit(row, plan.threads, row_failed);
      continue;
    }
    if (!check) {
      // One untimed eager call first, as a checked call would be: NCCL's copy-engine all-gather
      // sets itself up on its first call and fails if that call is being captured (2x H200,
      // NCCL 2.28.9: "unhandled cuda error" in timing-only runs).
      rt_.set_context(describe(c, op, t, bytes) + ", untimed first call");
      enqueue(c, op, t, bytes, count, &plan)();
      settle(c, bytes);
      rt_.sync();
    }
    for (int mode = 0; mode < 2; ++mode) {
      const bool graph = mode == 0;
      if ((graph && !o_.graph) || (!graph && !o_.eager)) continue;
      if (c.mode >= 0 && c.mode != int(graph)) continue;  // an auto choice for the other mode
      int calls = o_.calls > 0 ? o_.calls : bytes <= (1u << 20) ? 100 : bytes <= (16u << 20) ? 20 : 5;
      // A team's eager host plans: one call per sample, and SampleTimer waits for each sample
      // (bench_common.h): on an H200 the eager timing of reduce_scatter's copy-engine plan at 4
      // and 8 ranks on one GPU never ended and no watchdog spoke; with both, an H100 ran it at 2,
      // 4 and 8 ranks to the end (experiments/results/h100x1/team/run1). The cause, found later:
      // streams of several ranks share a hardware queue, where a rank far ahead stops its peers
      // (bench_common.h team_lockstep, which now keeps the ranks together).
      if (!graph && team() && c.plan()) calls = 1;
      rt_.set_context(describe(c, op, t, bytes) + ", timing " + std::to_string(o_.warmup) + "+" +
                      std::to_string(o_.iters) + " samples of " + std::to_string(calls) +
                      (graph ? " calls in a CUDA graph" : " eager calls"));
      const Stats s = time_case(c, op, t, bytes, count, plan, graph, calls);
      row.graph = graph;
      row.time_us_median = s.median;
      row.time_us_p10 = s.p10;
      row.time_us_p90 = s.p90;
      fill_bandwidth(row);
      emit(row, plan.threads, row_failed);
    }
    if (!o_.trace_dir.empty() && c.plan())
      trace_case(rt_, plan_exec(), o_.trace_dir, op_name(op), c.info->id, dtype_name(t), format_size(bytes),
                 enqueue(c, op, t, bytes, count, &plan), o_.graph, o_.eager, o_.trace_calls);
    else if (!o_.trace_dir.empty() && c.info)  // a device program: its verbs, block by block
      trace_program_case(rt_, o_.trace_dir, op_name(op), c.info->id, dtype_name(t), format_size(bytes),
                         enqueue(c, op, t, bytes, count, &plan), plan.blocks, o_.graph, o_.eager, o_.trace_calls);
  }
}

Stats Bench::time_case(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count, const LaunchPlan& plan,
                       bool graph, int calls) {
  // SYMM_DEBUG_HOST_ENQUEUE: what an eager plan call's items take the host, by kind (PlanExec's
  // host clock over the warm-up and timed samples), printed by rank 0 before the row.
  const bool clock = !graph && c.plan() && PlanExec::host_clock_on();
  if (clock) plan_exec().host_clock() = PlanExec::HostClock{};
  const Stats s = time_case_timed(c, op, t, bytes, count, plan, graph, calls);
  if (clock && rt_.rank() == 0) {
    const PlanExec::HostClock& h = plan_exec().host_clock();
    const long n_calls = h.n[PlanExec::kHostCall] / 2;  // begin_call and end_call
    std::printf("# host items per call (%ld calls):", n_calls);
    static const char* names[] = {"launch", "copy", "flag", "event", "call", "gemm"};
    for (int k = 0; k < PlanExec::kHostKinds; ++k)
      if (h.n[k])
        std::printf(" %s %.2f x %.2f us;", names[k], double(h.n[k]) / double(std::max(n_calls, 1L)),
                    h.us[k] / double(h.n[k]));
    std::printf("\n");
  }
  return s;
}

Stats Bench::time_case_timed(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count,
                             const LaunchPlan& plan, bool graph, int calls) {
  return timer_.time(
      enqueue(c, op, t, bytes, count, &plan), graph, calls, o_.warmup, [&] { rt_.sync(); },
      [&] {  // Testing (SYMM_TEST_RANK_KILL): this rank dies with its samples in flight.
        if (test_.kill_rank != rt_.rank()) return;
        // A team's rank is a thread: it stops (its peers' waits for it run out their bound).
        if (team())
          fail(ErrorCode::kInternal,
               "SYMM_TEST_RANK_KILL: rank " + std::to_string(rt_.rank()) + " stops with its samples in flight");
        std::raise(SIGKILL);
      });
}

std::string Bench::describe(const Case& c, Op op, DType t, std::size_t bytes) const {
  std::string s = std::string(op_name(op)) + " ";
  s += c.info ? c.info->alias + " (" + c.info->id + ")" : c.name();
  return s + " " + dtype_name(t) + " " + std::to_string(bytes) + " B";
}

Case Bench::testing_case(const Case& c, Op op) const {
  if (!c.info || test_.algo_rank != rt_.rank()) return c;
  Case x = c;
  x.info = &find_algo(op, test_.algo);
  x.blocks = 0;  // the other algorithm's own default
  return x;
}

}  // namespace coll_bench

// One rank's bench (every rank runs it: a process of a launch, or a thread of a team).
int bench_rank(const BenchOptions& o, Runtime& rt, const TestRankOverrides& test, const BenchSetup& setup) {
  using coll_bench::Bench;
  std::optional<Bench> bench;  // outlives the try: destroyed only after rt.abort() below
  try {
    for (const auto& list : setup.per_op)
      for (const AlgoInfo* a : list)
        if (auto why = multicast_refusal(*a, process_env(), rt.heap_mc() != nullptr))
          fail(ErrorCode::kUnsupported, *why);
    Bench& b = bench.emplace(o, rt, test);
    b.set_seed(o.seed * 1000003ull);
    if (o.probe_timeout) {
      if (rt.team()) rt.barrier();
      b.probe_timeout();
      return b.failures() ? 1 : 0;
    }
    b.alloc_plain(setup.in_max, setup.out_max);
    // Every rank's set-up (its allocations may wait for the device) done before any rank launches.
    if (rt.team()) rt.barrier();
    b.print_header();
    for (std::size_t i = 0; i < o.ops.size(); ++i)
      for (DType t : o.dtypes) b.run_op(o.ops[i], t, setup.per_op[i], setup.auto_algo && o.ops[i] != Op::kBarrier);
    rt.set_context("the closing barrier");
    rt.barrier();
    b.print_nccl_tests();
    b.close_csv();
    if (rt.rank() == 0) std::printf("# %d check failure(s)\n", b.failures());
    return b.failures() ? 1 : 0;
  } catch (...) {
    // A peer may be waiting in NCCL for this rank, or this rank's stream for a peer: abort the
    // communicator and wait for nothing more (Bench and Runtime then free nothing that could
    // wait for the device); the caller reports and exits non-zero.
    rt.abort();
    throw;
  }
}

}  // namespace symm::cuda
