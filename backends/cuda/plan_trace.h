// A measured timeline of one host-plan call on the GPU: every host verb a plan enqueued (a device
// program's launch, a copy engine's copy, a GEMM, a stream flag write or wait) as a span of GPU
// time on its stream, from CUDA events recorded on that stream right before and right after it.
//
// The simulator's trace (backends/sim/trace.h, `symmcoll run --trace`) shows the same call as the
// model sees it; this shows it as the GPU ran it, with the same names and tracks, so the two can
// be laid side by side (`symmcoll bench --backend cuda ... --trace DIR` writes it). Eager calls,
// and calls captured into a CUDA graph: there the events are event-record nodes of the graph
// (cudaEventRecordExternal), read after a replay.
//
// What an event pair measures: the GPU time between the stream reaching the verb and the verb's
// work being done on that stream (a flag wait's span is its waiting; a copy's, its engine's time
// queued on that stream). Events time at ~0.5 us resolution, and each record costs the host ~1-2
// us to enqueue, so a traced call's host side is slower than an untimed one; the host track
// shows how long the host took to enqueue the call, for what that says of eager launches.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <string>
#include <vector>

namespace symm::cuda {

// One verb of the traced call, in microseconds from the call's start on the GPU (the fork event
// on the main stream).
struct PlanSpan {
  int stream = 0;
  const char* name = "";  // a static string: launch, copy_engine, write_flag, wait_flag, gemm
  std::string args;       // JSON members (no braces), e.g. "bytes":1048576
  double begin_us = 0, end_us = 0;
};

class PlanTracer {
 public:
  PlanTracer() = default;
  ~PlanTracer();
  PlanTracer(const PlanTracer&) = delete;
  PlanTracer& operator=(const PlanTracer&) = delete;

  // The call's start: an event on the main stream (after the call's fork), every span's zero.
  void begin_call(cudaStream_t main);
  // Host side of the call done (PlanExec::end_call): the host track's span ends here.
  void end_call();
  // A verb on `stream` (its index `s` in the plan): the event before it; close() the one after.
  std::size_t open(cudaStream_t stream, int s, const char* name, std::string args);
  void close(std::size_t span, cudaStream_t stream);

  // After the call's main stream has finished: every span, in the order enqueued. Throws
  // symm::Error if a span was left open or no call began.
  std::vector<PlanSpan> spans() const;
  // The host's time from begin_call to end_call (enqueuing the call), microseconds.
  double host_enqueue_us() const;

 private:
  struct Open {
    int stream;
    const char* name;
    std::string args;
    cudaEvent_t begin = nullptr, end = nullptr;
  };
  cudaEvent_t make_event();
  cudaEvent_t start_ = nullptr;
  std::vector<Open> open_;
  std::vector<cudaEvent_t> events_;  // every event made, destroyed with the tracer
  std::chrono::steady_clock::time_point host_begin_, host_end_;
};

}  // namespace symm::cuda
