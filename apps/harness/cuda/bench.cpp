#include "apps/harness/cuda/bench.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "apps/harness/cuda/bench_common.h"
#include "apps/harness/cuda/bench_rank.h"
#include "backends/cuda/check.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/nvtx.h"
#include "backends/cuda/plan_exec.h"
#include "backends/cuda/runtime.h"
#include "backends/cuda/team_run.h"
#include "core/auto_select.h"
#include "core/coll_args.h"
#include "core/dispatch.h"
#include "core/nccl_tests_format.h"
#include "core/reference.h"
#include "core/registry.h"
#include "core/result.h"
#include "core/signal_pad.h"

namespace symm::cuda {
namespace {

// This rank's expected output (float64) by symm::reference (core/reference.h), the rule every
// backend is checked against. Computed a slice of elements at a time from every rank's input
// regenerated from the seed, so memory stays at world x kSlice values whatever the size: a
// slice of every rank's input is itself a valid input of the reference. reduce_scatter's
// output for rank `me` is the all_reduce of every rank's slice `me`; all_gather's is every
// rank's input in rank order, so a slice of it lands at r * count for each rank r.
template <class T>
std::vector<double> expected(Op op, ReduceOp rop, uint64_t seed, int world, int me, std::size_t count) {
  constexpr std::size_t kSlice = std::size_t(1) << 14;
  const bool gather = op == Op::kAllGather;
  const std::size_t base = op == Op::kReduceScatter ? std::size_t(me) * count : 0;
  std::vector<double> want(gather ? count * std::size_t(world) : count);
  std::vector<std::vector<double>> in(static_cast<std::size_t>(world));
  for (std::size_t i0 = 0; i0 < count; i0 += kSlice) {
    const std::size_t n = std::min(kSlice, count - i0);
    for (int r = 0; r < world; ++r) {
      std::vector<double>& v = in[std::size_t(r)];
      v.resize(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = double(to_float(from_float<T>(gen(seed, r, base + i0 + i))));
    }
    const std::vector<std::vector<double>> out = reference(gather ? Op::kAllGather : Op::kAllReduce, rop, in);
    const std::vector<double>& mine = out[std::size_t(me)];
    if (gather)
      for (int r = 0; r < world; ++r)
        std::copy_n(mine.begin() + std::ptrdiff_t(std::size_t(r) * n), n,
                    want.begin() + std::ptrdiff_t(std::size_t(r) * count + i0));
    else
      std::copy(mine.begin(), mine.end(), want.begin() + std::ptrdiff_t(i0));
  }
  return want;
}

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::kSum ? ncclSum : op == ReduceOp::kMax ? ncclMax : ncclMin; }

// One thing to measure: a core algorithm (device program or host plan) or an NCCL baseline.
struct Case {
  const AlgoInfo* info = nullptr;  // nullptr: NCCL
  bool symm = false;               // NCCL on the symmetric window
  int blocks = 0;                  // requested (0: default)
  bool ce = false;                 // NCCL's copy-engine all-gather (its own communicator)
  int mode = -1;                   // --algo auto: the one launch mode (1 graph, 0 eager) it was chosen for
  std::string name() const { return info ? info->id : ce ? "nccl_ce" : symm ? "nccl_symm" : "nccl"; }
  bool plan() const { return info && info->plan; }
};

// NCCL's copy-engine collectives: a communicator split off with CTA policy ZERO, the heap
// registered as a symmetric window on it. Created on first use; if NCCL refuses, the
// baseline is skipped with a note (an older NCCL has no such policy).
struct NcclCe {
  ncclComm_t comm = nullptr;
  ncclWindow_t win = nullptr;
  bool tried = false;
};

class Bench {
 public:
  Bench(const BenchOptions& o, Runtime& rt, const TestRankOverrides& test)
      : o_(o), rt_(rt), test_(test), timer_(rt, o.iters) {
    machine_ = o.machine.empty() ? rt.machine() : o.machine;
    csv_.open(rt, o.csv, csv_header());
    // Made now, before any rank launches: its allocations (pinned, device) may wait for the
    // device, which in an in-process team holds the other ranks' spinning kernels.
    plan_exec();
  }
  ~Bench() {
    if (rt_.aborted()) {  // a free would wait for the device: the process is exiting
      plain_in_.forget();
      plain_out_.forget();
      return;
    }
    if (ce_.win) ncclCommWindowDeregister(ce_.comm, ce_.win);
    if (ce_.comm) ncclCommDestroy(ce_.comm);
  }

  void alloc_plain(std::size_t in_bytes, std::size_t out_bytes) {
    if (!o_.nccl) return;  // only the `nccl` baseline runs on plain buffers
    plain_in_ = PlainBuffer(in_bytes, rt_.comm());
    plain_out_ = PlainBuffer(out_bytes, rt_.comm());
  }

  int failures() const { return failures_; }
  void close_csv() { csv_.close(); }

  // auto_algo: --algo auto, the machine's table entry per size and launch mode (core/auto_select.h).
  void run_op(Op op, DType t, const std::vector<const AlgoInfo*>& algos, bool auto_algo) {
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
                fail(ErrorCode::kUnsupported, std::to_string(rt_.handle().gpu_ranks) + " ranks x " +
                                                  std::to_string(p.blocks) + " blocks of " + std::to_string(p.threads) +
                                                  " threads do not fit on one GPU at once (at most " +
                                                  std::to_string(fit) + " per rank)");
            } catch (const Error& e) {
              note("skip " + a->id + " at " + format_size(bytes) + (b > 0 ? " blocks=" + std::to_string(b) : "") +
                   ": " + e.what());
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

  // --algo auto: the table's choice for each launch mode timed; one case where both modes agree.
  void add_auto_cases(Op op, DType t, std::size_t bytes, std::vector<Case>& cases) {
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

  // The bounded-wait error paths: a wait nobody will ever satisfy must end in the message
  // describe_wait_timeout promises, and leave the world usable.
  void probe_timeout() {
    const int from = (rt_.rank() + 1) % rt_.world();
    const uint32_t slot = pad::flag(pad::kChannels - 1, 0, from);
    expect_probe("probe-timeout",
                 timeout_message([&] { launch_wait_probe(rt_.handle(), slot, 0xFFFFFFF0u, rt_.stream()); }),
                 "rank " + std::to_string(rt_.rank()) + " block 0 timed out waiting on slot " + std::to_string(slot) +
                     " (channel " + std::to_string(pad::kChannels - 1) + ", from rank " + std::to_string(from) +
                     "): expected >= 4294967280, saw 0");
    // The flagged-packet wait: reduce_ll on a zeroed packet buffer nobody writes.
    const std::size_t off = 64 << 10;
    expect_probe("probe-timeout-ll", timeout_message([&] {
                   SYMM_CUDA_CHECK(cudaMemsetAsync(rt_.heap() + off, 0, 4096, rt_.stream()));
                   launch_ll_probe(rt_.handle(), rt_.heap() + off, rt_.heap() + off + 2048, 0xFFFFFFF0u, rt_.stream());
                 }),
                 "rank " + std::to_string(rt_.rank()) + " block 0 timed out waiting for packets at heap offset " +
                     std::to_string(off) + " (packet 0 of that buffer): expected epoch 4294967280, saw 0");
    rt_.barrier();  // the world is still usable after a reported timeout
  }

  // Enqueues `launch` under a ~1 ms spin bound and returns the kTimeout message the sync
  // reports ("" when it finished); other errors propagate. The previous bound is restored.
  std::string timeout_message(const std::function<void()>& launch) {
    struct Restore {
      Runtime& rt;
      unsigned long long cycles;
      ~Restore() { rt.set_timeout_cycles(cycles); }
    } restore{rt_, rt_.handle().timeout_cycles};
    rt_.set_timeout_cycles(2'000'000);  // ~1 ms
    rt_.set_context("");
    launch();
    try {
      rt_.sync();
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kTimeout) throw;
      rt_.recover();  // the poisoned probe has drained: clear the record for the next one
      return e.what();
    }
    return "";
  }

  void expect_probe(const char* what, const std::string& msg, const std::string& want) {
    if (msg != want) {
      ++failures_;
      std::fprintf(stderr, "FAIL %s rank %d: got '%s', want '%s'\n", what, rt_.rank(), msg.c_str(), want.c_str());
    } else {
      std::printf("%s rank %d ok: %s\n", what, rt_.rank(), msg.c_str());
    }
    std::fflush(stdout);
  }

  void print_header() {
    if (team()) print_team_header(rt_);
    if (rt_.rank() != 0) return;
    std::printf("# symmcoll bench, backend cuda, machine %s, world %d, device %s, git %s, pdl %s\n", machine_.c_str(),
                rt_.world(), rt_.device_name().c_str(), git_sha(), programmatic_launch() ? "on" : "off");
    std::printf(
        "# times: per call, max over ranks of each rank's median / p10 / p90; err: max relative error vs "
        "float64 reference (-1: not checked)\n");
    if (!o_.nccl_tests_format)
      std::printf("%-15s %-28s %-5s %10s %6s %5s %5s %10s %10s %10s %9s %9s %9s\n", "op", "algo", "type", "bytes",
                  "blocks", "thr", "graph", "time_us", "p10_us", "p90_us", "algbw", "busbw", "err");
    std::fflush(stdout);
  }

  // --format nccl-tests: the rows collected by emit, as nccl-tests' tables (rank 0).
  void print_nccl_tests() {
    if (rt_.rank() == 0 && o_.nccl_tests_format) write_nccl_tests(stdout, rows_, failed_, o_.rop);
  }

 private:
  void note(const std::string& s) {
    if (rt_.rank() == 0) std::printf("# %s\n", s.c_str());
  }
  // An in-process team (team.h): no NCCL, ranks may share a GPU.
  bool team() const { return rt_.team() != nullptr; }

  template <class T>
  void run_size(Op op, DType t, std::size_t bytes, uint64_t seed, bool check, const std::vector<Case>& cases) {
    const int world = rt_.world(), me = rt_.rank();
    const AlgoInfo& any =
        *std::find_if(algorithms().begin(), algorithms().end(), [&](const AlgoInfo& a) { return a.op == op; });
    const std::size_t count = any.count(bytes, t, world);
    const std::size_t in_count = any.in_bytes(bytes, world) / sizeof(T);
    const std::size_t out_count = any.out_bytes(bytes, world) / sizeof(T);
    std::vector<double> want, nccl_answer;
    std::vector<T> input;
    if (check) {
      want = expected<T>(op, o_.rop, seed, world, me, count);
      input = make_input<T>(seed, me, in_count);
    }
    if (check && !team()) {  // a team has no NCCL: the reference alone checks it
      // NCCL's answer on the same inputs, to compare every algorithm with. Taken from NCCL's
      // symmetric kernels, which accumulate in fp32 as ours do; NCCL's ring on plain buffers
      // rounds every partial sum to the element type, so near-cancelling sums differ by far
      // more than one rounding (its own row reports that error against the reference).
      rt_.set_context(describe(Case{nullptr, true, 0}, op, t, bytes) + ", the answer every algorithm is compared with");
      nccl_answer = run_once<T>(Case{nullptr, true, 0}, op, t, bytes, count, input, out_count, nullptr);
    }
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
      double err = -1, err_nccl = -1;
      bool row_failed = false;
      if (check) {
        rt_.set_context(describe(c, op, t, bytes) + ", checked call");
        auto got = run_once<T>(c, op, t, bytes, count, input, out_count, &plan);
        // No NCCL answer (a team): -1 in that column, and only the reference decides.
        const bool vs_nccl = !nccl_answer.empty();
        double e[2] = {max_rel_err(got, want), vs_nccl ? max_rel_err(got, nccl_answer) : -1.0};
        if (o_.replays > 0 && (c.info || c.ce)) {
          rt_.set_context(describe(c, op, t, bytes) + ", graph of 1 call replayed " + std::to_string(o_.replays) +
                          " times");
          got = run_replays<T>(c, op, t, bytes, count, input, out_count, plan);
          e[0] = std::max(e[0], max_rel_err(got, want));
          if (vs_nccl) e[1] = std::max(e[1], max_rel_err(got, nccl_answer));
        }
        reduce_max(e, 2);
        err = e[0];
        err_nccl = e[1];
        const double bound = rel_err_bound(t, world);
        // Two correctly rounded results may differ by one rounding each: 2x the bound vs NCCL.
        // Plain NCCL is held to what intermediate rounding allows (finite, same magnitude).
        const bool bad = c.info   ? !(err <= bound) || (vs_nccl && !(err_nccl <= 2 * bound))
                         : c.symm ? !(err <= bound)
                                  : !(err <= 1.0);
        row_failed = bad;
        if (bad) {
          ++failures_;
          if (me == 0)
            std::printf("FAIL %s %s %s bytes=%zu blocks=%d: max_rel_err %.3g vs reference, %.3g vs NCCL (bound %.3g)\n",
                        row.op.c_str(), row.algo.c_str(), row.dtype.c_str(), bytes, plan.blocks, err, err_nccl, bound);
        }
      }
      row.max_rel_err = err;
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
        // 4 and 8 ranks to the end (experiments/results/h100x1/team/run1). The cause is not
        // confirmed: likely a rank thread far ahead blocks inside the shared context's driver while
        // its stream waits on a flag another rank's thread has yet to enqueue.
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
    }
  }

  void emit(const ResultRow& r, int threads, bool failed) {
    if (rt_.rank() != 0) return;
    if (o_.nccl_tests_format) {
      rows_.push_back(r);
      failed_.push_back(failed);
    } else {
      std::printf("%-15s %-28s %-5s %10zu %6d %5d %5d %10.2f %10.2f %10.2f %9.2f %9.2f %9.2g\n", r.op.c_str(),
                  r.algo.c_str(), r.dtype.c_str(), r.bytes, r.blocks, threads, int(r.graph), r.time_us_median,
                  r.time_us_p10, r.time_us_p90, r.algbw_GBps, r.busbw_GBps, r.max_rel_err);
    }
    std::fflush(stdout);
    csv_.row(csv_line(r));
  }

  // Buffers of a case: the plain ones for `nccl`, the symmetric heap for the others.
  struct Buffers {
    void* in;
    void* out;
    void* scratch;
  };
  Buffers buffers(const Case& c, Op op, std::size_t bytes) {
    if (!c.info && !c.symm) return Buffers{plain_in_.get(), plain_out_.get(), nullptr};
    if (c.plan()) {
      const HeapLayout l = heap_layout(*c.info, bytes, rt_.world());
      return Buffers{rt_.heap() + l.in, rt_.heap() + l.out, rt_.heap() + l.scratch};
    }
    const AlgoInfo& a =
        c.info ? *c.info
               : *std::find_if(algorithms().begin(), algorithms().end(), [&](const AlgoInfo& x) { return x.op == op; });
    const HeapLayout l = heap_layout(a, bytes, rt_.world());
    return Buffers{rt_.heap() + l.in, rt_.heap() + l.out, rt_.heap() + l.scratch};
  }

  std::function<void()> enqueue(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count,
                                const LaunchPlan* plan) {
    const Buffers b = buffers(c, op, bytes);
    cudaStream_t s = rt_.stream();
    // One NVTX range per call (nsys shows it), labelled once per case.
    const auto label = std::make_shared<const std::string>("symmcoll " + describe(c, op, t, bytes));
    if (c.plan()) {
      PlanArgs pa;
      pa.coll.in = b.in;
      pa.coll.out = b.out;
      pa.coll.scratch = b.scratch;
      pa.coll.count = count;
      pa.coll.op = o_.rop;
      pa.chunk_bytes = o_.chunk_bytes;
      pa.sm_percent = o_.sm_percent;
      pa.blocks = plan->blocks;
      PlanExec* x = &plan_exec();
      const AlgoInfo* k = c.info;
      if (test_.skip_rank == rt_.rank()) return [=]() { NvtxRange r(label->c_str()); };  // testing: never calls
      return [=]() {
        NvtxRange r(label->c_str());
        x->enqueue(*k, t, pa);
      };
    }
    if (c.info) {
      CollArgs a;
      a.in = b.in;
      a.out = b.out;
      a.scratch = b.scratch;
      a.count = count;
      a.op = o_.rop;
      if (rt_.heap_mc()) a.out_mc = rt_.heap_mc() + (static_cast<char*>(b.out) - rt_.heap());
      const DeviceHandle* h = &rt_.handle();
      const AlgoInfo* info = c.info;
      const LaunchPlan p = *plan;
      if (test_.skip_rank == rt_.rank()) return [=]() { NvtxRange r(label->c_str()); };  // testing: never calls
      return [=]() {
        NvtxRange r(label->c_str());
        launch_program(*info, t, *h, a, p.blocks, p.threads, s);
      };
    }
    ncclComm_t comm = c.ce ? ce_.comm : rt_.comm();
    const ncclDataType_t nt = nccl_type(t);
    const ncclRedOp_t nop = nccl_op(o_.rop);
    switch (op) {
      case Op::kAllReduce:
        return [=]() {
          NvtxRange r(label->c_str());
          SYMM_CUDA_CHECK(ncclAllReduce(b.in, b.out, count, nt, nop, comm, s));
        };
      case Op::kReduceScatter:
        return [=]() {
          NvtxRange r(label->c_str());
          SYMM_CUDA_CHECK(ncclReduceScatter(b.in, b.out, count, nt, nop, comm, s));
        };
      case Op::kAllGather:
        return [=]() {
          NvtxRange r(label->c_str());
          SYMM_CUDA_CHECK(ncclAllGather(b.in, b.out, count, nt, comm, s));
        };
      default: fail(ErrorCode::kInternal, "no NCCL baseline for this op");
    }
  }

  template <class T>
  void upload_and_poison(const Buffers& b, const std::vector<T>& input, std::size_t out_count) {
    cudaStream_t s = rt_.stream();
    SYMM_CUDA_CHECK(cudaMemcpyAsync(b.in, input.data(), input.size() * sizeof(T), cudaMemcpyHostToDevice, s));
    SYMM_CUDA_CHECK(cudaMemsetAsync(b.out, 0xFF, out_count * sizeof(T), s));  // NaN in every dtype
  }

  template <class T>
  std::vector<double> download(const Buffers& b, std::size_t out_count) {
    std::vector<T> got(out_count);
    SYMM_CUDA_CHECK(cudaMemcpyAsync(got.data(), b.out, out_count * sizeof(T), cudaMemcpyDeviceToHost, rt_.stream()));
    rt_.sync();
    std::vector<double> d(out_count);
    for (std::size_t i = 0; i < out_count; ++i) d[i] = double(to_float(got[i]));
    return d;
  }

  template <class T>
  std::vector<double> run_once(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count,
                               const std::vector<T>& input, std::size_t out_count, const LaunchPlan* plan) {
    const Buffers b = buffers(c, op, bytes);
    upload_and_poison(b, input, out_count);
    enqueue(c, op, t, bytes, count, plan)();
    settle(c, bytes);
    rt_.sync();
    return download<T>(b, out_count);
  }

  // Epochs only grow: a one-call graph replayed many times must keep giving the right answer.
  template <class T>
  std::vector<double> run_replays(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count,
                                  const std::vector<T>& input, std::size_t out_count, const LaunchPlan& plan) {
    const Buffers b = buffers(c, op, bytes);
    upload_and_poison(b, input, out_count);
    // A team whose ranks share a GPU: one graph of every rank's call, replayed by rank 0 (team_graph.h).
    ReplayGraph g(rt_, enqueue(c, op, t, bytes, count, &plan), 1);
    // A team: no rank replays into a peer still instantiating its graph (which may wait for the device).
    if (team()) rt_.barrier();
    for (int i = 0; i < o_.replays; ++i) g.launch();
    g.join();
    settle(c, bytes);
    rt_.sync();
    return download<T>(b, out_count);
  }

  Stats time_case(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count, const LaunchPlan& plan,
                  bool graph, int calls) {
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

  // A host plan's stream waits are not bounded by the kernels' spin bound: wait for the call
  // under the plan watchdog, which names the stream wait that never ended.
  void settle(const Case& c, std::size_t bytes) {
    if (c.plan()) plan_exec().wait_main(o_.plan_timeout_s, c.info->id + " bytes=" + std::to_string(bytes));
  }

  PlanExec& plan_exec() {
    if (!plan_exec_) plan_exec_ = std::make_unique<PlanExec>(rt_.handle(), rt_.stream(), o_.streams, kDefaultThreads);
    return *plan_exec_;
  }

  bool nccl_ce() {
    if (ce_.tried) return ce_.comm != nullptr;
    ce_.tried = true;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.CTAPolicy = NCCL_CTA_POLICY_ZERO;
    ncclComm_t comm = nullptr;
    if (ncclCommSplit(rt_.comm(), 0, rt_.rank(), &comm, &cfg) != ncclSuccess || !comm) {
      note("nccl_ce skipped: ncclCommSplit with CTA policy ZERO failed");
      return false;
    }
    if (ncclCommWindowRegister(comm, rt_.heap(), rt_.heap_bytes(), &ce_.win, NCCL_WIN_COLL_SYMMETRIC) != ncclSuccess) {
      note("nccl_ce skipped: registering the heap as a symmetric window failed");
      ncclCommDestroy(comm);
      return false;
    }
    ce_.comm = comm;
    return true;
  }

  // Element-wise maximum over ranks, in place.
  void reduce_max(double* v, int n) { timer_.reduce_max(v, n); }

  // "all_reduce one_shot (all_reduce.ld_reduce) bf16 65536 B": names the call in NVTX ranges and errors.
  std::string describe(const Case& c, Op op, DType t, std::size_t bytes) const {
    std::string s = std::string(op_name(op)) + " ";
    s += c.info ? c.info->alias + " (" + c.info->id + ")" : c.name();
    return s + " " + dtype_name(t) + " " + std::to_string(bytes) + " B";
  }

  // Testing (SYMM_TEST_RANK_ALGO): the named rank runs another algorithm of the same op.
  Case testing_case(const Case& c, Op op) const {
    if (!c.info || test_.algo_rank != rt_.rank()) return c;
    Case x = c;
    x.info = &find_algo(op, test_.algo);
    x.blocks = 0;  // the other algorithm's own default
    return x;
  }

  const BenchOptions& o_;
  Runtime& rt_;
  const TestRankOverrides test_;
  std::string machine_;
  ResultsCsv csv_;
  PlainBuffer plain_in_, plain_out_;  // the `nccl` baseline's (bench_common.h)
  SampleTimer timer_;
  std::unique_ptr<PlanExec> plan_exec_;
  NcclCe ce_;
  std::vector<ResultRow> rows_;  // --format nccl-tests: printed at the end
  std::vector<bool> failed_;
  uint64_t next_seed_ = 0;
  int failures_ = 0;

 public:
  void set_seed(uint64_t s) { next_seed_ = s; }
};

// One rank's bench (every rank runs it: a process of a launch, or a thread of a team).
}  // namespace

int bench_rank(const BenchOptions& o, Runtime& rt, const TestRankOverrides& test, const BenchSetup& setup) {
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
