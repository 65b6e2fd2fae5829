// One host-plan call traced on the GPU, written as a Chrome trace (trace_out.h).
#include "apps/harness/cuda/trace_out.h"

#include <cstdio>

#include "apps/harness/cuda/trace_parts.h"
#include "backends/cuda/plan_exec.h"
#include "backends/cuda/runtime.h"

namespace symm::cuda {

void trace_call(Runtime& rt, PlanExec& exec, const std::string& path, const std::function<void()>& enqueue) {
  rt.set_context("tracing one eager call for " + path);
  rt.barrier();  // every rank's previous work drained: the traced call starts alike
  PlanTracer tracer;
  exec.set_tracer(&tracer);
  try {
    enqueue();
  } catch (...) {
    exec.set_tracer(nullptr);
    throw;
  }
  exec.set_tracer(nullptr);
  rt.sync();
  write_rank_trace(trace_part(path, rt.rank()), rt.rank(), rt.device(), tracer.spans(), tracer.host_enqueue_us());
  rt.barrier();  // every part written
  if (rt.rank() == 0) {
    merge_rank_traces(path, rt.world());
    std::printf("# trace: %s\n", path.c_str());
    std::fflush(stdout);
  }
}

}  // namespace symm::cuda
