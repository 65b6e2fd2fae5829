// The files of `bench --backend cuda --trace` (trace_out.h): a rank's part of a traced call, and
// rank 0's merge of the parts into one Chrome trace. No CUDA call here (tested on the CPU).
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/plan_trace.h"
#include "backends/cuda/verb_trace.h"

namespace symm::cuda {

// Makes the folder if missing; throws kIo naming it when it cannot (a file there, no permission).
void prepare_trace_dir(const std::string& dir);

// The file of one traced case in DIR: DIR/<op>.<algo>.<dtype>.<what>.json, `what` the size or the
// shape (characters outside [A-Za-z0-9._-] become '_').
std::string trace_file(const std::string& dir, const std::string& op, const std::string& algo, const std::string& dtype,
                       const std::string& what);

// Rank r's part of `path`: path.rank<r>.
std::string trace_part(const std::string& path, int rank);
// Writes rank r's part as the simulator writes a trace (backends/sim/trace.h): process rank + 1,
// a track per stream (sim::Trace::kStreamTid + stream) with the spans ("call" spans on the host
// track, sim::Trace::kHostTid, as the simulator's), and a track of the host's enqueue of each call
// (kEnqueueTid; host clock; none for a graph replay, `host` empty). Throws kIo if it cannot.
inline constexpr int kEnqueueTid = 998;
void write_rank_trace(const std::string& part, int rank, int device, const std::vector<PlanSpan>& spans,
                      const std::vector<HostSpan>& host);
// A device program's traced calls (verb_trace.h) as spans: `stamps` holds calls x blocks x cap
// stamps as the kernels wrote them (call-major, then block), `sm_ghz` the SM clock the cycle counts
// are converted with. Each block's stamps are placed on the global timer by the mean of (global
// timer - cycles / clock) over its stamps (the timer ticks coarsely; the mean shares the error out),
// and every time is in microseconds from the earliest block start of the first call.
struct VerbSpan {
  int call = 0, block = 0;
  const char* name = "";  // "block" (the whole block), "call" (every block of a call), a verb_name()
  std::string args;       // JSON members (no braces)
  double begin_us = 0, end_us = 0;
};
struct VerbTrace {
  std::vector<VerbSpan> spans;  // per call: its "call" span, then per block its "block" span and verbs
  long long lost = 0;           // stamps that did not fit the buffer (kVerbStampsPerBlock a block)
  double tick_ns = 0;           // the smallest step of the global timer seen between two stamps (0: none)
};
// Throws kInternal naming the call and block whose stamps do not start with a start and end with
// an end (a block that did not run, or a buffer the kernels did not write).
VerbTrace verb_spans(const std::vector<VerbStamp>& stamps, int calls, int blocks, uint32_t cap, double sm_ghz);
// The raw stamps beside the trace, for a second look without the GPU: `path` (a CSV: call, block,
// index, verb, arg, cycles, global timer ns; unwritten stamps left out). Throws kIo if it cannot.
void write_stamps_csv(const std::string& path, const std::vector<VerbStamp>& stamps, int calls, int blocks,
                      uint32_t cap, double sm_ghz);
// Writes rank r's part of a device program's trace as the simulator writes one (a track per block,
// tid block + 1, its verbs' slices inside a "block" slice; the calls on the host track).
void write_block_trace(const std::string& part, int rank, int device, const VerbTrace& t);

// Merges the parts of ranks 0..world-1 into `path` (their events in one traceEvents array) and
// removes them. Throws kIo naming a part that is missing or not such a trace.
void merge_rank_traces(const std::string& path, int world);

}  // namespace symm::cuda
