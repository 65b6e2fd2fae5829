// `bench --backend cuda --trace DIR`: one eager call of a host plan, traced on the GPU
// (backends/cuda/plan_trace.h), written as the simulator writes its traces (backends/sim/trace.h:
// a process per rank, a track per stream, the same slice names), so `symmcoll run --trace` of the
// same call opens beside it in Perfetto.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "apps/harness/cuda/trace_parts.h"

namespace symm::cuda {

class Runtime;
class PlanExec;

// Runs `enqueue` (one call of a host plan on `exec`) once, eager, traced, on every rank (every rank
// calls it alike), waits for it, and writes `path`: each rank writes its own part (path.rank<r>),
// and after the ranks meet, rank 0 merges them into `path` and removes the parts. Each rank's
// zero is its own call's start on its GPU (the ranks' clocks are not one clock: a flag wait's
// span shows how long that rank waited, not when its peer wrote). Prints the path (rank 0).
void trace_call(Runtime& rt, PlanExec& exec, const std::string& path, const std::function<void()>& enqueue);

}  // namespace symm::cuda
