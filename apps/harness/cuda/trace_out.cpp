// Host-plan calls traced on the GPU, written as a Chrome trace (trace_out.h).
#include "apps/harness/cuda/trace_out.h"

#include <cstdio>
#include <memory>

#include "apps/harness/cuda/trace_parts.h"
#include "backends/cuda/check.h"
#include "backends/cuda/graph_capture.h"
#include "backends/cuda/plan_exec.h"
#include "backends/cuda/runtime.h"
#include "backends/cuda/team_graph.h"

namespace symm::cuda {

void trace_call(Runtime& rt, PlanExec& exec, const std::string& path, const std::function<void()>& enqueue, bool graph,
                int calls) {
  if (calls < 1) fail(ErrorCode::kInvalidArgument, "--trace-calls must be at least 1");
  if (!graph && calls > 1 && rt.team() != nullptr)
    fail(ErrorCode::kUnsupported,
         "--trace-calls above 1 with ranks in one process: their eager plan calls run one at a time (bench.cpp)");
  if (graph && team_graph(rt))
    fail(ErrorCode::kUnsupported, "--trace of a graph call: ranks that share a GPU run one team graph; eager only");
  rt.set_context("tracing " + std::to_string(calls) + (graph ? " graph" : " eager") + " call(s) for " + path);
  rt.barrier();  // every rank's previous work drained: the traced call starts alike
  PlanTracer tracer;
  std::unique_ptr<CUgraphExec_st, decltype(&cudaGraphExecDestroy)> g(nullptr, &cudaGraphExecDestroy);
  exec.set_tracer(&tracer);
  try {
    if (graph)
      g.reset(capture_graph(rt.stream(), enqueue, calls));
    else
      for (int i = 0; i < calls; ++i) enqueue();
  } catch (...) {
    exec.set_tracer(nullptr);
    throw;
  }
  exec.set_tracer(nullptr);
  if (graph) {
    rt.barrier();  // every rank's graph ready before any replays (its waits need the peers')
    for (int replay = 0; replay < 2; ++replay) SYMM_CUDA_CHECK(cudaGraphLaunch(g.get(), rt.stream()));
  }
  rt.sync();
  g.reset();
  write_rank_trace(trace_part(path, rt.rank()), rt.rank(), rt.device(), tracer.spans(),
                   graph ? std::vector<HostSpan>{} : tracer.host_spans());
  rt.barrier();  // every part written
  if (rt.rank() == 0) {
    merge_rank_traces(path, rt.world());
    std::printf("# trace: %s\n", path.c_str());
    std::fflush(stdout);
  }
}

void trace_case(Runtime& rt, PlanExec& exec, const std::string& dir, const std::string& op, const std::string& algo,
                const std::string& dtype, const std::string& what, const std::function<void()>& enqueue, bool graph,
                bool eager, int calls) {
  if (graph && !team_graph(rt))
    trace_call(rt, exec, trace_file(dir, op, algo, dtype, what + ".graph"), enqueue, true, calls);
  if (eager) trace_call(rt, exec, trace_file(dir, op, algo, dtype, what + ".eager"), enqueue, false, calls);
}

}  // namespace symm::cuda
