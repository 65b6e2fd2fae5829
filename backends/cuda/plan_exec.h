// Host plans on CUDA (core/plan.h): the executor a rank keeps for its plans' calls.
//
// It owns the side streams and the events a plan uses, resolves the driver's stream memory
// operations (cuStreamWriteValue32 / cuStreamWaitValue32) at run time through the runtime's
// entry-point query (so the binary needs no libcuda at link time and still starts on a machine
// without a GPU), and knows every stream wait a call enqueued, so that a wait that never ends is
// reported by name (rank, stream, slot, expected and seen value) instead of hanging.
//
// Everything `enqueue` puts on streams is capturable in a CUDA graph: kernels, peer
// cudaMemcpyAsync (copy engines), stream memory operations, event record / wait (the events
// recorded after each flag wait are external event nodes, cudaEventRecordExternal, so the
// watchdog can read them in graph replays too).
//
// A plan's consecutive flag writes and waits on one stream (no other verb between them, on any
// stream) go to the GPU as one batch (cuStreamBatchMemOp, enqueued before the next other verb or
// at the call's end): the writes, then the waits, then the waits' resets, one watchdog event after
// the batch. A write after a wait starts a new batch (a reset must land before this rank's next
// write: a peer may answer that write with its next call's flag). Nothing is enqueued later than
// a verb after it: a verb may block the host (a lazily loaded kernel, an allocation that
// synchronizes the device), and a flag write held back past it would never reach the peers whose
// waits hold the device (mm_rs ce_acc at world 4 hung, with no watchdog report, in the GPU suite
// when a stream's writes waited for that stream's next item; this is the likely cause). Not while a tracer times each
// verb, nor in an in-process team's graph capture (each flag there is also an edge from its own node);
// SYMM_PLAN_BATCH_MEMOPS=0 turns it off (one driver call per flag, as before).
//
// Where ranks of an in-process team share a GPU, a call's flag waits are not stream memory
// operations but a small kernel (launch_plan_flag_waits: one block, one thread per wait, bounded as
// a device program's wait; the writes stay stream memory operations). CUDA orders nothing by a
// stream memory wait ("the scheduler" may "serialize them in an improper order", the driver API
// says), and on one H100 a team of 4 stopped so: ranks 0, 1 and 3 sat in their entry waits for
// rank 2's flag, and rank 2's batch, its stream otherwise idle and its own waits' flags already
// written, never ran (experiments/results/h100x1/team/run11: mm_rs gemm_st_chunk_reduce, eager,
// between two samples; with stream waits 9 of 22 whole benches stopped so in run12..run14, with
// kernels gemm_st_chunk_reduce's 18 tries all passed, and run14's 10 benches, every algorithm).
// A kernel that spins holds one block's room, not the GPU's queues. A team graph's capture keeps
// the stream waits: its edges order every flag (team_graph.h). So does a fused plan whose own
// kernel spins on its peers' copies (Descriptor::kernel_spins_on_copies): with its waits as
// kernels, mm_rs gemm_ce_tile_acc's tile kernel on one rank waited past its bound for a peer's
// chunk in eager timing (run12); with stream waits it ran to the end in run9 and run10.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/device_handle.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/plan_trace.h"
#include "core/fused.h"
#include "core/plan.h"
#include "core/registry.h"

namespace symm::cuda {

// Whether a rank's host plans wait for flags in a kernel (above): its GPU holds other ranks of its
// team (h.gpu_ranks > 1) and SYMM_PLAN_KERNEL_WAITS is not 0.
bool plan_waits_in_kernels(const DeviceHandle& h);

// One stream wait a call enqueued: which flag, and the event recorded right after it.
struct PlanWait {
  int stream = 0;
  uint32_t slot = 0, value = 0;
  cudaEvent_t after = nullptr;
};

class PlanExec {
 public:
  // `main` is the caller's stream; `streams` (1..kMaxStreams) counts it.
  PlanExec(const DeviceHandle& h, cudaStream_t main, int streams, int threads);
  ~PlanExec();
  PlanExec(const PlanExec&) = delete;
  PlanExec& operator=(const PlanExec&) = delete;

  // Enqueues one call of host plan `a` (a registry entry, AlgoInfo::plan) for element type `t`
  // on the main stream (and the side streams, forked from and joined back into it). In CUDA-graph
  // capture too.
  void enqueue(const AlgoInfo& a, DType t, const PlanArgs& args);
  // The same for a fused matmul + collective plan (core/fused.h), by its table entry; element
  // type a.dtype. a.streams is overridden by this executor's stream count.
  void enqueue_fused(const FusedAlgo& algo, const FusedArgs& a);
  // Runs each GEMM that enqueue_fused(algo, a) would enqueue whose cuBLASLt configuration has not
  // run yet, once, on the main stream, and waits for it (GemmRunner::prime says why); no copies,
  // flags or kernels. Call it on every rank, then meet (a barrier), before the first enqueue_fused
  // of a configuration. It writes the GEMMs' outputs (the call that follows overwrites them).
  void prime_fused(const FusedAlgo& algo, const FusedArgs& a);

  // The watchdog's view after `main` did not finish in time: the first stream wait (in each
  // stream's order) whose after-event has not completed, with the flag's current value, as
  // "rank R stream S timed out waiting on plan slot N (channel c, chunk k, from rank r):
  // expected V, saw W"; "" if every wait has passed.
  std::string describe_stuck_wait();
  // Waits for the main stream for at most `timeout_s`; throws kTimeout with
  // describe_stuck_wait() (and `what`) if it does not finish.
  void wait_main(double timeout_s, const std::string& what);
  // After a wait_main timeout, the rank is failing: every flag wait not yet passed is released (its
  // value written into this rank's pad from the probe stream, again until the main stream drains or
  // `bound_s` passes), so that the kernels behind them run, time out on their own bounded device waits
  // and poison the rank, and the streams drain. Without it the NCCL abort that follows waited for the
  // stuck stream forever, and the rank never printed its report (2x H200, a peer that never calls a
  // fused plan: experiments/results/h200x2/hang_76347a1). The destructor does it where
  // release_on_failure(true) was set (a rank in a process of its own: in an in-process team the
  // releases are the team's to order, plan_wait_probe.cpp).
  void release_stuck_waits(double bound_s);
  void release_on_failure(bool on) { release_on_failure_ = on; }

  // Diagnosis (SYMM_DEBUG_HOST_ENQUEUE set): the host's time in each kind of item this executor
  // enqueued, summed until cleared; the bench prints it per eager row. Off: nothing is timed.
  enum HostKind { kHostLaunch, kHostCopy, kHostFlag, kHostEvent, kHostCall, kHostGemm, kHostKinds };
  struct HostClock {
    double us[kHostKinds] = {};
    long n[kHostKinds] = {};
  };
  static bool host_clock_on();
  HostClock& host_clock() { return host_clock_; }
  // Times its own scope into kind `k` of the executor's host clock (nothing where it is off).
  class HostTimer {
   public:
    HostTimer(PlanExec& x, HostKind k)
        : x_(host_clock_on() ? &x : nullptr), k_(k), t0_(std::chrono::steady_clock::now()) {}
    ~HostTimer() {
      if (!x_) return;
      x_->host_clock_.us[k_] +=
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count();
      ++x_->host_clock_.n[k_];
    }
    HostTimer(const HostTimer&) = delete;
    HostTimer& operator=(const HostTimer&) = delete;

   private:
    PlanExec* x_;
    HostKind k_;
    std::chrono::steady_clock::time_point t0_;
  };

  // Host-verb implementation (used by the CudaHost context in plans.cu).
  // Stream s of the plan. Within a call, a side stream starts after the call's fork the first
  // time the call uses it; a side stream the call never uses joins nothing (a captured graph
  // then has no idle branch whose dependencies pile up from call to call).
  cudaStream_t stream(int s);
  cudaEvent_t event(int e);
  void write_flag(int s, int peer, uint32_t slot, uint32_t value);
  void wait_flag(int s, uint32_t slot, uint32_t value);
  void gemm(int s, const GemmArgs& g) { gemm_->run(stream(s), s, g); }
  void prime_gemm(const GemmArgs& g) { gemm_->prime(stream(0), g); }
  // Enqueues the pending flag writes and waits as one batch (see above); nothing if none.
  // CudaHost calls it before every other verb, end_call at the end.
  void flush();
  void begin_call();  // records the fork on main (side streams wait for it on first use)
  void end_call();    // joins the side streams the call used into main

  // An in-process team's lockstep of enqueues (apps/harness/cuda/bench_common.h, Team::lockstep):
  // `step` runs at a call's start and after each flag write and each launch of a plan's kernel
  // (`meets_only`: what a peer's wait can need; otherwise after every verb but a GEMM, and the
  // joins) and returns once every rank of the team has got as far; flag operations are not batched
  // then (each write is its own item). A GEMM never meets: it waits for no peer, and a plan may skip
  // an empty one on some ranks (ag_mm.st_bulk_gemm's first and last rank). The flag-wait kernels of
  // wait_flag do not meet either (tests/core/test_plan_steps.cpp checks that every rank of every
  // plan meets alike). Why: streams of ranks sharing a GPU may share a hardware queue,
  // and there an item waiting for a peer holds back what is queued behind it. A plan's items wait
  // for flags its peers write and kernels for their peers' kernels, and each rank enqueues those
  // (and what precedes them on its streams) before its own waits for the same point of the plan,
  // so with every rank's j-th such item enqueued before any rank goes past its own, what a waiting
  // item needs is ahead of it in any queue. One H200, 8 ranks: after every item 7 of 7 timing-only
  // runs and 3 of 3 checked sweeps completed, after flag writes alone (a trial binary) 5 of 5 and
  // 2 of 2, as here 3 of 3 and 1 of 1 (experiments/results/h200x1/team/README.md, lockstep_4c2fbb2). Not in a graph's
  // capture (the team captures rank after rank). Empty: none (the default).
  void set_step(std::function<void()> step, bool meets_only = true) {
    step_ = std::move(step);
    step_meets_only_ = meets_only;
  }
  // After each enqueued item of a stepping call; CudaHost calls it after every verb (`meets`: a
  // flag write or a kernel launch, where every mode meets).
  void step(bool meets = false) {
    if (stepping_ && (meets || !step_meets_only_)) step_();
  }
  // A measured timeline of the calls enqueued while set (plan_trace.h; eager or captured, the
  // caller's to own and read after the call); nullptr: none (the default, and what every timed
  // call runs with).
  void set_tracer(PlanTracer* t) { tracer_ = t; }
  PlanTracer* tracer() const { return tracer_; }

  const DeviceHandle& handle() const { return h_; }
  int streams() const { return int(streams_.size()); }
  int threads() const { return threads_; }

 private:
  DeviceHandle h_;
  std::unique_ptr<GemmRunner> gemm_;   // the gemm verb: cuBLASLt, a workspace per stream
  std::vector<cudaStream_t> streams_;  // [0] = the caller's main stream (not owned)
  std::vector<cudaEvent_t> events_;    // per-call event ids (core/plan.h), created lazily
  cudaEvent_t fork_ = nullptr;
  std::vector<cudaEvent_t> joins_;
  std::vector<char> used_;  // per stream: used by the call in progress (begin_call .. end_call)
  bool in_call_ = false;
  std::function<void()> step_;  // set_step
  bool stepping_ = false;       // the call in progress steps (step_ set, not capturing)
  bool step_meets_only_ = true;
  PlanTracer* tracer_ = nullptr;
  std::vector<PlanWait> waits_;  // of the calls enqueued since the last wait_main
  std::vector<cudaEvent_t> wait_events_;
  std::size_t next_wait_event_ = 0;
  // The watchdog's reader of a stuck flag, made up front: while a stream is stuck, calls that
  // synchronize the device (cudaMallocHost / cudaFreeHost / cudaFree may) would never return.
  cudaStream_t probe_ = nullptr;
  uint32_t* probe_host_ = nullptr;  // pinned
  bool stuck_ = false;
  HostClock host_clock_;
  bool release_on_failure_ = false;  // release_stuck_waits in the destructor after a timeout              // a
                                     // wait_main timed out and nothing has drained since
  int threads_;
  void* write_fn_ = nullptr;  // cuStreamWriteValue32
  void* wait_fn_ = nullptr;   // cuStreamWaitValue32
  void* batch_fn_ = nullptr;  // cuStreamBatchMemOp
  // A stream's flag operations not yet enqueued (flush): writes and waits in order, then the
  // waits' resets; the waits for the watchdog (their event set at the flush).
  struct Pending {
    std::vector<CUstreamBatchMemOpParams> ops, resets;
    std::vector<PlanWait> waits;
  };
  Pending pending_;
  int pending_stream_ = -1;    // the stream pending_ is for
  bool batch_enabled_ = true;  // SYMM_PLAN_BATCH_MEMOPS != 0
  bool batching() const;       // enabled, not traced, not a team graph's capture
  // Flag waits as a kernel (launch_plan_flag_waits) instead of stream memory operations: where
  // ranks share a GPU (gpu_ranks > 1), outside a team graph's capture; SYMM_PLAN_KERNEL_WAITS=0
  // keeps the stream waits. Why: see the class comment.
  bool kernel_waits_ = false;
  bool call_stream_waits_ = false;  // the call in progress keeps stream waits (a kernel spins on copies)
  bool kernel_waits() const;
  cudaEvent_t next_wait_event();
};

}  // namespace symm::cuda
