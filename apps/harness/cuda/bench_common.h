// Pieces the collective bench (bench*.cpp), the fused-operation bench (bench_fused.cpp) and the
// calibration (calibrate.cpp) share: reproducible inputs, NCCL type names, graph capture, timed
// samples with their per-call statistics and maximum over ranks, the results CSV.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/graph_capture.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/plan_exec.h"
#include "backends/cuda/runtime.h"
#include "backends/cuda/team.h"
#include "backends/cuda/team_graph.h"
#include "core/common.h"

namespace symm::cuda {

// ---- the NCCL baselines' own buffers ("plain": outside the symmetric heap). With a communicator
// they come from ncclMemAlloc and are registered with ncclCommRegister: NCCL's user-buffer path
// (its kernels move bytes straight between the ranks' buffers instead of through its staging
// FIFOs). nccl-tests' buffers reach that path in graph mode by themselves (one process drives
// every GPU, and NCCL registers the buffers a captured call uses): measured on 2x H200, its
// all-gather at 256M took 438 us in a graph and 549 us eager, and the bench's cudaMalloc'd row,
// one process per GPU, 546 us in both modes. Without a communicator (an in-process team):
// cudaMalloc. Freed only when no error unwinds (a free waits for the device, which may hold a
// stream stuck on a flag).
class PlainBuffer {
 public:
  PlainBuffer() = default;
  PlainBuffer(std::size_t bytes, ncclComm_t comm) : comm_(comm) {
    bytes = std::max<std::size_t>(bytes, 16);
    if (!comm_) {
      SYMM_CUDA_CHECK(cudaMalloc(&p_, bytes));
      return;
    }
    SYMM_CUDA_CHECK(ncclMemAlloc(&p_, bytes));
    SYMM_CUDA_CHECK(ncclCommRegister(comm_, p_, bytes, &handle_));
  }
  ~PlainBuffer() { release(); }
  PlainBuffer(PlainBuffer&& o) noexcept { *this = std::move(o); }
  PlainBuffer& operator=(PlainBuffer&& o) noexcept {
    if (this != &o) {
      release();
      std::swap(p_, o.p_);
      std::swap(comm_, o.comm_);
      std::swap(handle_, o.handle_);
    }
    return *this;
  }
  void* get() const { return p_; }
  // The process is ending after an abort: free nothing (a free would wait for the device).
  void forget() { p_ = nullptr; }

 private:
  void release() {
    if (!p_ || std::uncaught_exceptions() != 0) return;
    if (!comm_) {
      cudaFree(p_);
    } else {
      if (handle_) ncclCommDeregister(comm_, handle_);
      ncclMemFree(p_);
    }
    p_ = nullptr;
    handle_ = nullptr;
  }
  void* p_ = nullptr;
  ncclComm_t comm_ = nullptr;
  void* handle_ = nullptr;
};

// ---- inputs: every rank can regenerate every rank's input from (seed, rank, index), so the
// float64 reference of its own output needs no communication.
inline float gen(uint64_t seed, int rank, std::size_t i) {
  const uint64_t h = splitmix64((seed << 20) ^ (uint64_t(rank) << 56) ^ uint64_t(i));
  return float(double(h >> 11) * (2.0 / 9007199254740992.0) - 1.0);  // [-1, 1)
}
template <class T>
std::vector<T> make_input(uint64_t seed, int rank, std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = from_float<T>(gen(seed, rank, i));
  return v;
}

inline ncclDataType_t nccl_type(DType t) {
  return t == DType::kBF16 ? ncclBfloat16 : t == DType::kFP16 ? ncclFloat16 : ncclFloat32;
}

// Median, p10 and p90 per call (us) of n samples timed between events[2i] and events[2i+1],
// each sample holding `calls` calls (the events have completed).
inline std::array<double, 3> sample_stats(const std::vector<cudaEvent_t>& events, int n, int calls) {
  std::vector<double> us(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    float ms = 0;
    SYMM_CUDA_CHECK(cudaEventElapsedTime(&ms, events[std::size_t(2 * i)], events[std::size_t(2 * i + 1)]));
    us[std::size_t(i)] = double(ms) * 1e3 / calls;
  }
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, std::size_t(q * double(us.size())))]; };
  return {at(0.5), at(0.1), at(0.9)};
}

// Median, p10 and p90 per call (us), the maximum over ranks.
struct Stats {
  double median = 0, p10 = 0, p90 = 0;
};

// Diagnosis (SYMM_DEBUG_BENCH_STEPS=1): each step of a timed case on stderr with the rank, its thread id and the
// seconds since the first step, to find where a rank stops (a hang no watchdog reports).
inline void bench_step(int rank, const char* what, int i = -1) {
  static const bool on = std::getenv("SYMM_DEBUG_BENCH_STEPS") != nullptr;
  if (!on) return;
  static const auto t0 = std::chrono::steady_clock::now();
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "[step] rank %d tid %ld %.3f s: %s %d\n", rank, long(syscall(SYS_gettid)), t, what, i);
}

// A team's enqueues in lockstep (Team::lockstep; host_logic.h team_lockstep_mode, team_lockstep_on):
// where a GPU of an in-process team holds more than one rank. Streams of several ranks may share one
// of the GPU's hardware queues, where an item waits in line behind a rank's earlier item that spins
// for a peer's item queued further back (experiments/results/h200x1/team/README.md,
// lockstep_4c2fbb2). So a rank meets its team after each eager call of a timing sample is enqueued
// (SampleTimer) and, within a host plan's call, at its start and after each flag write and kernel
// launch (PlanExec::set_step; SYMM_DEBUG_TEAM_LOCKSTEP=items: after every verb but a GEMM, and the
// joins). prepare_team (apps/cmd_cuda.cpp) reads the variable before the ranks start.
inline TeamLockstep team_lockstep_mode() {
  static const TeamLockstep m = team_lockstep_mode(process_env());
  return m;
}
inline bool team_lockstep(const Runtime& rt) {
  return rt.team() && team_lockstep_on(team_lockstep_mode(), true, rt.handle().team_gpu_ranks);
}
// Its bound: a peer that has not got as far within 2 x the device wait bound in force never will (a
// rank that never calls: the waiting rank names it, and the call, instead of spinning for the team's
// meeting bound).
inline void team_lockstep_meet(Runtime& rt) { rt.team()->lockstep(rt.rank(), 2 * rt.wait_timeout_s(), rt.context()); }

// The header line that says so (rank 0's output), where team_lockstep holds.
inline void print_team_lockstep(const Runtime& rt) {
  if (!team_lockstep(rt)) return;
  std::printf(
      "# enqueues in lockstep: each rank waits for its team after each eager call and, in a host plan, "
      "after %s (eager rows pace with the host's enqueues; bench_common.h team_lockstep)\n",
      team_lockstep_mode() == TeamLockstep::kItems ? "every verb but a GEMM" : "each flag write and kernel launch");
}

// A host plan executor's part of it (PlanExec::set_step), where team_lockstep holds.
inline void set_team_lockstep(Runtime& rt, PlanExec& x) {
  if (team_lockstep(rt)) x.set_step([&rt] { team_lockstep_meet(rt); }, team_lockstep_mode() != TeamLockstep::kItems);
}

// Timed samples of one call: `warmup` samples, a barrier, then `iters` samples between events,
// each a graph of `calls` calls (graph) or `calls` eager calls. `settle` waits for them (bounded);
// `in_flight` runs while the samples are still in flight (testing hooks).
class SampleTimer {
 public:
  SampleTimer(Runtime& rt, int iters) : rt_(rt), iters_(std::max(iters, 1)) {
    events_.resize(std::size_t(2 * iters_));
    for (cudaEvent_t& e : events_) SYMM_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~SampleTimer() {
    if (rt_.aborted()) return;  // the process is exiting
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  SampleTimer(const SampleTimer&) = delete;
  SampleTimer& operator=(const SampleTimer&) = delete;

  Stats time(const std::function<void()>& one, bool graph, int calls, int warmup, const std::function<void()>& settle,
             const std::function<void()>& in_flight = nullptr) {
    cudaStream_t s = rt_.stream();
    // A team whose ranks share a GPU captures one graph, launched and timed by rank 0 (team_graph.h).
    std::optional<ReplayGraph> g;
    bench_step(rt_.rank(), graph ? "capture" : "eager");
    if (graph) g.emplace(rt_, one, calls);
    // A team: no rank launches into a peer still instantiating its graph (which may wait for the device).
    if (graph && rt_.team()) rt_.barrier();
    // A team sharing a GPU launches its eager calls in lockstep (team_lockstep).
    const bool lockstep = !graph && team_lockstep(rt_);
    // SYMM_DEBUG_HOST_TURNS (diagnosis, a team, lockstep off): the ranks enqueue each eager call in
    // turn, one host thread at a time (host meetings between), so that the host's time per call
    // (SYMM_DEBUG_HOST_ENQUEUE, around the rank's own enqueuing only) is one thread's, as where each
    // rank has a process of its own.
    static const bool turns_asked = std::getenv("SYMM_DEBUG_HOST_TURNS") != nullptr;
    const bool turns = turns_asked && !graph && rt_.team();
    if (turns && lockstep)
      fail(ErrorCode::kInvalidArgument,
           "SYMM_DEBUG_HOST_TURNS needs SYMM_DEBUG_TEAM_LOCKSTEP=0 (a lockstep inside a "
           "call would wait for a rank whose turn has not come)");
    double host_in_one = 0;
    auto sample = [&]() {
      if (graph) {
        g->launch();
        return;
      }
      for (int i = 0; i < calls; ++i) {
        if (!turns) {
          one();
          if (lockstep) team_lockstep_meet(rt_);
          continue;
        }
        for (int r = 0; r < rt_.world(); ++r) {
          team_lockstep_meet(rt_);
          if (r != rt_.rank()) continue;
          const auto t0 = std::chrono::steady_clock::now();
          one();
          host_in_one += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        }
      }
      if (turns) team_lockstep_meet(rt_);
    };
    // A team's eager samples are waited for one by one and start together (a meeting before
    // each). Before the lockstep (team_lockstep) a rank far ahead of its peers could stop the team
    // in the GPU's shared hardware queues; the meeting was the first answer to it: with the host
    // plans' waits in kernels (plan_exec.h), ag_mm ce_chunk_gemm's stopped once on one H100 (a team
    // of 4), and with the meeting 10 of 10 whole fused benches passed
    // (experiments/results/h100x1/team/run13, run14).
    const bool one_by_one = !graph && rt_.team();
    const int me = rt_.rank();
    for (int i = 0; i < warmup; ++i) {
      bench_step(me, "warm-up sample", i);
      sample();
      if (one_by_one) settle(), rt_.barrier();
    }
    bench_step(me, "join");
    if (graph) g->join();
    bench_step(me, "settle");
    settle();
    bench_step(me, "barrier");
    rt_.barrier();
    bench_step(me, "timed samples");
    const bool timed = !graph || g->launches();  // a team graph: rank 0's events time every rank's calls
    // SYMM_DEBUG_HOST_ENQUEUE: the host's time to enqueue an eager sample's calls (its meetings
    // included), printed per row by rank 0 (diagnosis: what an eager call's host chain costs).
    static const bool host_enqueue = std::getenv("SYMM_DEBUG_HOST_ENQUEUE") != nullptr;
    std::vector<double> host_us;
    for (int i = 0; i < iters_; ++i) {
      if (timed) SYMM_CUDA_CHECK(cudaEventRecord(events_[std::size_t(2 * i)], s));
      const auto h0 = std::chrono::steady_clock::now();
      host_in_one = 0;
      sample();
      const double host =
          turns ? host_in_one
                : std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count();
      if (host_enqueue && !graph) host_us.push_back(host / calls);
      if (timed) SYMM_CUDA_CHECK(cudaEventRecord(events_[std::size_t(2 * i + 1)], s));
      if (one_by_one && i + 1 < iters_) settle(), rt_.barrier();
    }
    if (in_flight) in_flight();
    if (graph) g->join();
    settle();
    g.reset();
    std::array<double, 3> st{0, 0, 0};
    if (timed) st = sample_stats(events_, iters_, calls);
    if (!host_us.empty() && me == 0) {
      std::sort(host_us.begin(), host_us.end());
      std::printf("# host enqueue: %.3f us a call (median of %zu samples of %d calls; p10 %.3f, p90 %.3f)\n",
                  host_us[host_us.size() / 2], host_us.size(), calls, host_us[host_us.size() / 10],
                  host_us[host_us.size() * 9 / 10]);
    }
    double v[3] = {st[0], st[1], st[2]};
    reduce_max(v, 3);
    return Stats{v[0], v[1], v[2]};
  }

  // Element-wise maximum over ranks of v[0..n), n <= 8, in place.
  void reduce_max(double* v, int n) { rt_.reduce_max(v, n); }

 private:
  Runtime& rt_;
  int iters_;
  std::vector<cudaEvent_t> events_;
};

// The results CSV of a bench (rank 0, when a path is set): the header, then each row as it is
// measured, flushed, so that a run stopped from outside (a timeout) keeps the rows it measured.
// Every write is checked: a full disk or a closed pipe is an error naming the file and the reason,
// never a CSV silently short of rows (close() checks the last of them).
class ResultsCsv {
 public:
  void open(const Runtime& rt, const std::string& path, const std::string& header) {
    if (rt.rank() != 0 || path.empty()) return;
    path_ = path;
    f_.open(path, std::ios::trunc);
    check("cannot write ");
    row(header);
  }
  void row(const std::string& line) {
    if (!f_.is_open()) return;
    f_ << line << "\n" << std::flush;
    check("writing ");
  }
  void close() {
    if (!f_.is_open()) return;
    f_.close();
    check("closing ");
  }

 private:
  void check(const char* what) {
    if (f_.fail()) {
      const int e = errno;
      fail(ErrorCode::kIo, what + path_ + (e ? std::string(": ") + std::strerror(e) : std::string()));
    }
  }
  std::ofstream f_;
  std::string path_;
};

}  // namespace symm::cuda
