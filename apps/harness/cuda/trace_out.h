// `bench --backend cuda --trace DIR`: calls of a host plan (eager, and captured in a graph), traced on the GPU
// (backends/cuda/plan_trace.h), or of a device program (its verbs stamped inside the kernel,
// backends/cuda/verb_trace.h), written as the simulator writes its traces (backends/sim/trace.h:
// a process per rank, a track per stream or per block, the same slice names), so `symmcoll run
// --trace` of the same call opens beside it in Perfetto.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "apps/harness/cuda/trace_parts.h"

namespace symm::cuda {

class Runtime;
class PlanExec;

// Runs `enqueue` (one call of a host plan on `exec`) `calls` times back to back, traced, on every
// rank (every rank calls it alike), waits for them, and writes `path`: each rank writes its own
// part (path.rank<r>), and after the ranks meet, rank 0 merges them into `path` and removes the
// parts. Eager (`graph` false): the host enqueues the calls as timed eager calls are, and a host
// track shows each call's enqueue. Graph: the calls are captured into one graph (the events as its
// event-record nodes), replayed twice, and the second replay is the trace. Each rank's zero is its
// first call's start on its GPU (the ranks' clocks are not one clock: a flag wait's span shows how
// long that rank waited, not when its peer wrote). Prints the path (rank 0). An in-process team
// whose ranks share a GPU is traced eager only (its graphs are the team's one graph,
// team_graph.h): `graph` there throws kUnsupported.
void trace_call(Runtime& rt, PlanExec& exec, const std::string& path, const std::function<void()>& enqueue, bool graph,
                int calls);

// One case's traces, as the benches take them after timing it: DIR/<op>.<algo>.<dtype>.<what>
// .{graph,eager}.json (trace_file), one trace_call per launch mode asked for (`graph`, `eager`);
// the graph trace is left out where ranks share a GPU (team_graph: eager only there).
void trace_case(Runtime& rt, PlanExec& exec, const std::string& dir, const std::string& op, const std::string& algo,
                const std::string& dtype, const std::string& what, const std::function<void()>& enqueue, bool graph,
                bool eager, int calls);

// A device program's calls traced the same way (eager; graph: captured, the second replay), every
// block's verbs stamped inside the kernel (verb_trace.h): `enqueue` launches one call of it with
// rt.handle() on `blocks` blocks. Each rank's zero is the earliest block start of its first call;
// the trace's blocks are tracks, the calls are on the host track. Prints the path with the SM clock
// the cycles were converted with and the global timer's tick (rank 0).
void trace_program_call(Runtime& rt, const std::string& path, const std::function<void()>& enqueue, bool graph,
                        int calls, int blocks);
void trace_program_case(Runtime& rt, const std::string& dir, const std::string& op, const std::string& algo,
                        const std::string& dtype, const std::string& what, const std::function<void()>& enqueue,
                        int blocks, bool graph, bool eager, int calls);

// The SM clock in GHz (cycles per global-timer nanosecond), from one thread spinning 200 us on `s`
// and writing two words of device memory at `scratch` (verb_probe.cu); synchronises `s`; 0 if the
// global timer did not move.
double measure_sm_ghz(cudaStream_t s, unsigned long long* scratch);

}  // namespace symm::cuda
