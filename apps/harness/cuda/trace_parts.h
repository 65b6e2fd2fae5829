// The files of `bench --backend cuda --trace` (trace_out.h): a rank's part of a traced call, and
// rank 0's merge of the parts into one Chrome trace. No CUDA call here (tested on the CPU).
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/plan_trace.h"

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
// Merges the parts of ranks 0..world-1 into `path` (their events in one traceEvents array) and
// removes them. Throws kIo naming a part that is missing or not such a trace.
void merge_rank_traces(const std::string& path, int world);

}  // namespace symm::cuda
