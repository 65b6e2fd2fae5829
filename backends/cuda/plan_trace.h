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

// One verb of the traced calls, in microseconds from the first traced call's start on the GPU
// (the event before its fork on the main stream).
struct PlanSpan {
  int stream = 0;
  const char* name = "";  // a static string: launch, copy_engine, write_flag, wait_flag, gemm, call
  std::string args;       // JSON members (no braces), e.g. "bytes":1048576
  double begin_us = 0, end_us = 0;
};

// The host's enqueue of one traced call (host clock, microseconds from the first call's
// begin_call): for eager calls, what the host's pace was against the GPU's.
struct HostSpan {
  double begin_us = 0, end_us = 0;
};

class PlanTracer {
 public:
  PlanTracer() = default;
  ~PlanTracer();
  PlanTracer(const PlanTracer&) = delete;
  PlanTracer& operator=(const PlanTracer&) = delete;

  // A call's start (PlanExec::begin_call): an event on the main stream before the call's fork (so
  // every side stream's verbs come after it); the first call's is every span's zero. Calls traced back to back are
  // numbered from 0.
  void begin_call(cudaStream_t main);
  // The call's end (PlanExec::end_call, after the side streams joined the main stream): an event
  // on the main stream, the end of the call's "call" span; the host's enqueue ends here.
  void end_call(cudaStream_t main);
  // A verb on `stream` (its index `s` in the plan): the event before it; close() the one after.
  // Its args get the call's number.
  std::size_t open(cudaStream_t stream, int s, const char* name, std::string args);
  void close(std::size_t span, cudaStream_t stream);

  // After the calls' main stream has finished: a "call" span per call (stream 0), then every verb,
  // in the order enqueued. Throws symm::Error if a span or call was left open or none began.
  std::vector<PlanSpan> spans() const;
  // The host's enqueue of each call.
  std::vector<HostSpan> host_spans() const;

 private:
  struct Open {
    int stream;
    const char* name;
    std::string args;
    cudaEvent_t begin = nullptr, end = nullptr;
  };
  struct Call {
    cudaEvent_t begin = nullptr, end = nullptr;
    std::chrono::steady_clock::time_point host_begin, host_end;
  };
  cudaEvent_t make_event();
  std::vector<Call> calls_;
  std::vector<Open> open_;
  std::vector<cudaEvent_t> events_;  // every event made, destroyed with the tracer
};

}  // namespace symm::cuda
