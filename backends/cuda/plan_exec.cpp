// Host plans on CUDA, the host-only half of the executor (plan_exec.h): side streams, events,
// the driver's stream memory operations and the watchdog that names a stuck stream wait.
#include "backends/cuda/plan_exec.h"

#include <cuda.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include "backends/cuda/check.h"
#include "backends/cuda/driver_entry.h"
#include "backends/cuda/graph_capture.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/team_graph.h"

namespace symm::cuda {
namespace {

// The node the operation just captured on `s` became: the capture's one dependency of the stream.
void* captured_node(cudaStream_t s) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* deps = nullptr;
  std::size_t n = 0;
  SYMM_CUDA_CHECK(cudaStreamGetCaptureInfo(s, &st, nullptr, nullptr, &deps, nullptr, &n));
  if (st != cudaStreamCaptureStatusActive || n != 1)
    fail(ErrorCode::kInternal,
         "a plan flag in a team graph's capture: the stream is not capturing, or its last "
         "operation left " +
             std::to_string(n) + " dependencies (expected 1)");
  return deps[0];
}

// A batch's flag write (cuStreamBatchMemOp): default flags, a fence before it (release).
CUstreamBatchMemOpParams write_op(CUdeviceptr a, uint32_t value) {
  CUstreamBatchMemOpParams op{};
  op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  op.writeValue.address = a;
  op.writeValue.value = value;
  op.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
  return op;
}

}  // namespace

PlanExec::PlanExec(const DeviceHandle& h, cudaStream_t main, int streams, int threads) : h_(h), threads_(threads) {
  check_streams(streams);
  streams_.push_back(main);
  for (int i = 1; i < streams; ++i) {
    cudaStream_t s;
    SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    streams_.push_back(s);
  }
  SYMM_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
  joins_.resize(std::size_t(streams));
  for (auto& e : joins_) SYMM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  events_.assign(std::size_t(kMaxEvents), nullptr);
  SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&probe_, cudaStreamNonBlocking));
  SYMM_CUDA_CHECK(cudaMallocHost(&probe_host_, sizeof(uint32_t)));
  write_fn_ = driver_entry("cuStreamWriteValue32");
  wait_fn_ = driver_entry("cuStreamWaitValue32");
  batch_fn_ = driver_entry("cuStreamBatchMemOp");
  if (const char* e = std::getenv("SYMM_PLAN_BATCH_MEMOPS")) batch_enabled_ = std::string(e) != "0";
  kernel_waits_ = plan_waits_in_kernels(h_);
  gemm_ = std::make_unique<GemmRunner>(streams, h_.gpu_ranks);
}

PlanExec::~PlanExec() {
  // A stream still stuck on a flag: the GEMM runner's cudaFree would synchronize the device and
  // never return; the process is ending on the timeout's error anyway, so leave it. The same while
  // any error unwinds: in an in-process team the stuck stream may be a peer's.
  const bool failing = stuck_ || std::uncaught_exceptions() > 0;
  if (stuck_ && release_on_failure_) release_stuck_waits(10.0);
  if (failing) (void)gemm_.release();
  for (std::size_t i = 1; i < streams_.size(); ++i) cudaStreamDestroy(streams_[i]);
  for (cudaEvent_t e : events_)
    if (e) cudaEventDestroy(e);
  for (cudaEvent_t e : joins_) cudaEventDestroy(e);
  for (cudaEvent_t e : wait_events_) cudaEventDestroy(e);
  cudaEventDestroy(fork_);
  cudaStreamDestroy(probe_);
  if (!failing) cudaFreeHost(probe_host_);  // a stuck stream would hold up the free forever: leaked
}

cudaEvent_t PlanExec::event(int e) {
  if (e < 0 || e >= kMaxEvents) fail(ErrorCode::kInternal, "plan event " + std::to_string(e) + " out of range");
  cudaEvent_t& ev = events_[std::size_t(e)];
  if (!ev) SYMM_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  return ev;
}

// The verbs' arguments were checked by core/plan.h's CheckedHost (plans.cu runs every plan through it).
// Default flags: a memory fence before the write, scoped to the stream (release).
void PlanExec::write_flag(int s, int peer, uint32_t slot, uint32_t value) {
  const CUdeviceptr a = CUdeviceptr(h_.pad_peer[peer] + slot);
  if (batching()) {
    // Another stream's batch, or a write after a wait (after the wait's reset: plan_exec.h).
    if (pending_stream_ != s || !pending_.waits.empty()) flush();
    pending_stream_ = s;
    pending_.ops.push_back(write_op(a, value));
    return;
  }
  check_cu(reinterpret_cast<StreamValueFn>(write_fn_)(stream(s), a, value, CU_STREAM_WRITE_VALUE_DEFAULT),
           "cuStreamWriteValue32");
  // In a team graph (team_graph.h) the flag is also an edge: from this node to its wait's.
  if (FlagEdges* e = capturing_team_edges()) e->add_write(h_.rank, peer, slot, value, captured_node(stream(s)));
}

void PlanExec::wait_flag(int s, uint32_t slot, uint32_t value) {
  const CUdeviceptr a = CUdeviceptr(h_.pad_local + slot);
  if (batching() && kernel_waits()) {
    if (pending_stream_ != s) flush();
    pending_stream_ = s;
    pending_.waits.push_back(PlanWait{s, slot, value, nullptr});
    if (pending_.waits.size() >= std::size_t(kPlanKernelWaits)) flush();
    return;
  }
  if (kernel_waits()) {  // one wait, one kernel
    PlanFlagWaits w;
    w.n = 1, w.slot[0] = slot, w.value[0] = value;
    launch_plan_flag_waits(h_, w, stream(s));
    cudaEvent_t e = next_wait_event();
    record_event(e, stream(s));
    waits_.push_back(PlanWait{s, slot, value, e});
    return;
  }
  if (batching()) {
    if (pending_stream_ != s) flush();
    pending_stream_ = s;
    Pending& p = pending_;
    CUstreamBatchMemOpParams op{};
    op.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
    op.waitValue.address = a;
    op.waitValue.value = value;
    op.waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
    p.ops.push_back(op);
    p.resets.push_back(write_op(a, 0));
    p.waits.push_back(PlanWait{s, slot, value, nullptr});
    if (p.ops.size() + p.resets.size() >= 128) flush();  // the driver takes at most 256 per batch
    return;
  }
  check_cu(reinterpret_cast<StreamValueFn>(wait_fn_)(stream(s), a, value, CU_STREAM_WAIT_VALUE_EQ),
           "cuStreamWaitValue32");
  if (FlagEdges* e = capturing_team_edges()) e->add_wait(h_.rank, slot, value, captured_node(stream(s)));
  // Consume: back to 0 for the next call (stream-ordered after the wait). With the default
  // flags: the driver's v2 entry point (what version 12000 returns) refuses
  // CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER with CUDA_ERROR_INVALID_VALUE (seen on an H200), and a
  // fence before a reset costs nothing that matters.
  check_cu(reinterpret_cast<StreamValueFn>(write_fn_)(stream(s), a, 0, CU_STREAM_WRITE_VALUE_DEFAULT),
           "cuStreamWriteValue32");
  cudaEvent_t e = next_wait_event();
  record_event(e, stream(s));  // a graph replay records it too: the watchdog reads it after each
  waits_.push_back(PlanWait{s, slot, value, e});
}

bool plan_waits_in_kernels(const DeviceHandle& h) {
  const char* e = std::getenv("SYMM_PLAN_KERNEL_WAITS");
  return h.gpu_ranks > 1 && !(e && std::string(e) == "0");
}

bool PlanExec::batching() const { return batch_enabled_ && !tracer_ && !stepping_ && !capturing_team_edges(); }
bool PlanExec::kernel_waits() const { return kernel_waits_ && !call_stream_waits_ && !capturing_team_edges(); }

cudaEvent_t PlanExec::next_wait_event() {
  if (next_wait_event_ == wait_events_.size()) {
    cudaEvent_t e;
    SYMM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    wait_events_.push_back(e);
  }
  return wait_events_[next_wait_event_++];
}

bool PlanExec::host_clock_on() {
  static const bool on = std::getenv("SYMM_DEBUG_HOST_ENQUEUE") != nullptr;
  return on;
}

void PlanExec::flush() {
  Pending& p = pending_;
  const int s = pending_stream_;
  if (p.ops.empty() && p.waits.empty()) return;
  const HostTimer timer(*this, kHostFlag);  // a batch's flush counts as a flag item
  if (!p.ops.empty()) {
    std::vector<CUstreamBatchMemOpParams> ops = std::move(p.ops);
    ops.insert(ops.end(), p.resets.begin(), p.resets.end());
    check_cu(reinterpret_cast<StreamBatchFn>(batch_fn_)(stream(s), unsigned(ops.size()), ops.data(), 0),
             "cuStreamBatchMemOp");
  }
  if (kernel_waits() && !p.waits.empty()) {  // the writes above, then the waits and their resets
    PlanFlagWaits w;
    for (const PlanWait& x : p.waits) w.slot[w.n] = x.slot, w.value[w.n] = x.value, ++w.n;
    launch_plan_flag_waits(h_, w, stream(s));
  }
  if (!p.waits.empty()) {
    cudaEvent_t e = next_wait_event();
    record_event(e, stream(s));  // after the whole batch: each of its waits has passed
    for (PlanWait& w : p.waits) w.after = e;
    waits_.insert(waits_.end(), p.waits.begin(), p.waits.end());
  }
  p = Pending{};
}

cudaStream_t PlanExec::stream(int s) {
  const std::size_t i = std::size_t(s);
  if (i > 0 && in_call_ && !used_[i]) {
    used_[i] = 1;
    SYMM_CUDA_CHECK(cudaStreamWaitEvent(streams_[i], fork_, 0));
  }
  return streams_[i];
}

void PlanExec::begin_call() {
  {
    const HostTimer timer(*this, kHostCall);  // not the meeting below
    pending_ = Pending{};                     // a call that failed half-way leaves none behind
    pending_stream_ = -1;
    call_stream_waits_ = false;
    // The trace's zero before the fork: every side stream starts after it.
    if (tracer_) tracer_->begin_call(streams_[0]);
    SYMM_CUDA_CHECK(cudaEventRecord(fork_, streams_[0]));
    used_.assign(streams_.size(), 0);
    in_call_ = true;
    // Only where a lockstep is set: every other call skips the capture query.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (step_) SYMM_CUDA_CHECK(cudaStreamIsCapturing(streams_[0], &capture));
    stepping_ = step_ && capture == cudaStreamCaptureStatusNone;
  }
  step(/*meets=*/true);  // every mode meets at a call's start
}

void PlanExec::end_call() {
  flush();
  const HostTimer timer(*this, kHostCall);
  in_call_ = false;
  for (std::size_t i = 1; i < streams_.size(); ++i) {
    if (!used_[i]) continue;
    SYMM_CUDA_CHECK(cudaEventRecord(joins_[i], streams_[i]));
    SYMM_CUDA_CHECK(cudaStreamWaitEvent(streams_[0], joins_[i], 0));
    step();
  }
  if (tracer_) tracer_->end_call(streams_[0]);
  stepping_ = false;
}

std::string PlanExec::describe_stuck_wait() {
  // A flag's value, read through a copy on the probe stream (the stuck stream does not hold it
  // up), polled for at most a second, with nothing that synchronizes the device (which would
  // never return); "?" if it could not be read.
  auto read_flag = [&](uint32_t slot) -> std::string {
    if (cudaMemcpyAsync(probe_host_, h_.pad_local + slot, sizeof(uint32_t), cudaMemcpyDeviceToHost, probe_) !=
        cudaSuccess)
      return "?";
    const auto t0 = std::chrono::steady_clock::now();
    cudaError_t q;
    while ((q = cudaStreamQuery(probe_)) == cudaErrorNotReady &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 1.0)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    return q == cudaSuccess ? std::to_string(*probe_host_) : "?";
  };
  for (std::size_t i = 0; i < waits_.size(); ++i) {
    if (cudaEventQuery(waits_[i].after) != cudaErrorNotReady) continue;
    // The first wait (in enqueue order) whose event has not completed. The waits of one batch
    // share an event, and a batch resets its flags only after all its waits: the stuck one is the
    // first of them whose flag does not hold its value yet (the first, if all seem to).
    std::size_t k = i;
    std::string seen = read_flag(waits_[i].slot);
    for (std::size_t j = i; j < waits_.size() && waits_[j].after == waits_[i].after; ++j) {
      const std::string v = j == i ? seen : read_flag(waits_[j].slot);
      if (v != std::to_string(waits_[j].value)) {
        k = j, seen = v;
        break;
      }
    }
    const PlanWait& w = waits_[k];
    return describe_stuck_plan_wait(h_.rank, w.stream, w.slot, w.value, seen, k, waits_.size());  // host_logic.h
  }
  return "";
}

void PlanExec::release_stuck_waits(double bound_s) {
  const auto t0 = std::chrono::steady_clock::now();
  while (cudaStreamQuery(streams_[0]) == cudaErrorNotReady &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < bound_s) {
    for (const PlanWait& w : waits_)
      if (cudaEventQuery(w.after) == cudaErrorNotReady)
        (void)reinterpret_cast<StreamValueFn>(write_fn_)(probe_, CUdeviceptr(h_.pad_local + w.slot), w.value,
                                                         CU_STREAM_WRITE_VALUE_DEFAULT);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void PlanExec::wait_main(double timeout_s, const std::string& what) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(streams_[0]);
    if (e == cudaSuccess) break;
    if (e != cudaErrorNotReady) SYMM_CUDA_CHECK(e);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s) {
      stuck_ = true;
      std::string why = describe_stuck_wait();
      if (why.empty()) why = "rank " + std::to_string(h_.rank) + ": the plan's streams did not finish";
      // An in-process team stops at its first rank's error: the others' views are printed as they
      // time out, for a diagnosis (SYMM_DEBUG_ALL_STUCK=1).
      if (std::getenv("SYMM_DEBUG_ALL_STUCK") != nullptr) std::fprintf(stderr, "symmcoll: stuck: %s\n", why.c_str());
      fail(ErrorCode::kTimeout, why + " [" + what + ", bound " + std::to_string(timeout_s) + " s]");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  waits_.clear();
  next_wait_event_ = 0;
  stuck_ = false;
}

}  // namespace symm::cuda
