// The collective bench's one rank (bench.h), private to its files: the Case it measures and the
// Bench class, declared here and defined by concern:
//   bench.cpp            case selection (sizes, algorithms, --algo auto) and the run loop, timing;
//                        bench_rank, the entry point (bench_rank.h)
//   bench_baselines.cpp  buffers of a case, what one call enqueues (our programs and plans, NCCL's
//                        collectives), NCCL's copy-engine baseline on its split communicator
//   bench_check.cpp      expected answers (float64 reference, NCCL's), upload, download, compare
//   bench_probe.cpp      the error-path probes (--probe-timeout)
//   bench_output.cpp     the header, the rows (table or nccl-tests format) and the CSV
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apps/harness/cuda/bench.h"
#include "apps/harness/cuda/bench_common.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/plan_exec.h"
#include "backends/cuda/runtime.h"
#include "core/registry.h"
#include "core/result.h"

namespace symm::cuda::coll_bench {

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

// What the cases of one size are checked against (bench_check.cpp): every rank's input from the
// seed, this rank's expected output by the float64 reference, and NCCL's answer on the same input
// (empty in a team, which has no NCCL).
template <class T>
struct Answers {
  std::size_t count = 0, out_count = 0;  // the collective's count; this rank's output elements
  std::vector<T> input;
  std::vector<double> want, nccl;
};

class Bench {
 public:
  // bench_baselines.cpp: the constructor makes the plan executor before any rank launches.
  Bench(const BenchOptions& o, Runtime& rt, const TestRankOverrides& test);
  ~Bench();

  void alloc_plain(std::size_t in_bytes, std::size_t out_bytes);  // the `nccl` baseline's buffers
  int failures() const { return failures_; }
  void set_seed(uint64_t s) { next_seed_ = s; }

  // bench.cpp. auto_algo: --algo auto, the machine's table entry per size and launch mode
  // (core/auto_select.h).
  void run_op(Op op, DType t, const std::vector<const AlgoInfo*>& algos, bool auto_algo);

  // bench_probe.cpp. The bounded-wait error paths: a wait nobody will ever satisfy must end in the
  // message describe_wait_timeout promises, and leave the world usable.
  void probe_timeout();

  // bench_output.cpp
  void print_header();
  void print_nccl_tests();  // --format nccl-tests: the rows collected by emit, as nccl-tests' tables
  void close_csv() { csv_.close(); }

 private:
  // Buffers of a case: the plain ones for `nccl`, the symmetric heap for the others.
  struct Buffers {
    void* in;
    void* out;
    void* scratch;
  };

  // An in-process team (team.h): no NCCL, ranks may share a GPU.
  bool team() const { return rt_.team() != nullptr; }

  // bench.cpp: case selection, the run loop and timing.
  // --algo auto: the table's choice for each launch mode timed; one case where both modes agree.
  void add_auto_cases(Op op, DType t, std::size_t bytes, std::vector<Case>& cases);
  template <class T>
  void run_size(Op op, DType t, std::size_t bytes, uint64_t seed, bool check, const std::vector<Case>& cases);
  Stats time_case(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count, const LaunchPlan& plan,
                  bool graph, int calls);
  Stats time_case_timed(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count, const LaunchPlan& plan,
                        bool graph, int calls);
  // "all_reduce one_shot (all_reduce.ld_reduce) bf16 65536 B": names the call in NVTX ranges and errors.
  std::string describe(const Case& c, Op op, DType t, std::size_t bytes) const;
  // Testing (SYMM_TEST_RANK_ALGO): the named rank runs another algorithm of the same op.
  Case testing_case(const Case& c, Op op) const;

  // bench_baselines.cpp: buffers and what one call of a case enqueues.
  Buffers buffers(const Case& c, Op op, std::size_t bytes);
  std::function<void()> enqueue(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count,
                                const LaunchPlan* plan);
  // A host plan's stream waits are not bounded by the kernels' spin bound: wait for the call
  // under the plan watchdog, which names the stream wait that never ended.
  void settle(const Case& c, std::size_t bytes);
  PlanExec& plan_exec();
  bool nccl_ce();  // the copy-engine baseline's communicator, split on first use; false: skipped

  // bench_check.cpp: expected answers, one checked call, the comparison.
  template <class T>
  Answers<T> answers(Op op, DType t, std::size_t bytes, uint64_t seed, std::size_t count, std::size_t in_count,
                     std::size_t out_count);
  // Runs case `c` on a.input (and, with --replays, a one-call graph replayed), compares with the
  // answers, counts and prints a failure; sets row.max_rel_err. Returns whether the check failed.
  template <class T>
  bool check_case(const Case& c, Op op, DType t, std::size_t bytes, const LaunchPlan& plan, const Answers<T>& a,
                  ResultRow& row);
  template <class T>
  void upload_and_poison(const Buffers& b, const std::vector<T>& input, std::size_t out_count);
  template <class T>
  std::vector<double> download(const Buffers& b, std::size_t out_count);
  template <class T>
  std::vector<double> run_once(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count,
                               const std::vector<T>& input, std::size_t out_count, const LaunchPlan* plan);
  // Epochs only grow: a one-call graph replayed many times must keep giving the right answer.
  template <class T>
  std::vector<double> run_replays(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count,
                                  const std::vector<T>& input, std::size_t out_count, const LaunchPlan& plan);
  // Element-wise maximum over ranks, in place.
  void reduce_max(double* v, int n) { timer_.reduce_max(v, n); }

  // bench_probe.cpp
  // Enqueues `launch` under a ~1 ms spin bound and returns the kTimeout message the sync
  // reports ("" when it finished); other errors propagate. The previous bound is restored.
  std::string timeout_message(const std::function<void()>& launch);
  void probe_plan_wait();  // --probe-timeout: a host plan's stuck stream wait, named (bench_probe.cpp)
  void expect_probe(const char* what, const std::string& msg, const std::string& want);

  // bench_output.cpp
  void note(const std::string& s);  // "# s" on rank 0
  void emit(const ResultRow& r, int threads, bool failed);

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
};

}  // namespace symm::cuda::coll_bench
