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

void trace_program_call(Runtime& rt, const std::string& path, const std::function<void()>& enqueue, bool graph,
                        int calls, int blocks) {
  if (calls < 1) fail(ErrorCode::kInvalidArgument, "--trace-calls must be at least 1");
  if (graph && team_graph(rt))
    fail(ErrorCode::kUnsupported, "--trace of a graph call: ranks that share a GPU run one team graph; eager only");
  const std::size_t per_call = std::size_t(blocks) * kVerbStampsPerBlock;
  const std::size_t bytes = per_call * calls * sizeof(VerbStamp);
  VerbStamp* d = nullptr;
  SYMM_CUDA_CHECK(cudaMalloc(&d, bytes + 2 * sizeof(unsigned long long)));  // the stamps, the clock probe's two words
  auto* probe = reinterpret_cast<unsigned long long*>(reinterpret_cast<char*>(d) + bytes);
  std::unique_ptr<VerbStamp, decltype(&cudaFree)> buf(d, &cudaFree);
  rt.set_context("tracing " + std::to_string(calls) + (graph ? " graph" : " eager") + " call(s) for " + path);
  rt.barrier();  // every rank's previous work drained: the traced calls start alike
  std::unique_ptr<CUgraphExec_st, decltype(&cudaGraphExecDestroy)> g(nullptr, &cudaGraphExecDestroy);
  int call = 0;
  auto one = [&] {  // each call stamps into its own part of the buffer
    rt.set_verb_trace(d + per_call * call++, kVerbStampsPerBlock);
    enqueue();
  };
  try {
    if (graph) {
      g.reset(capture_graph(rt.stream(), one, calls));
      rt.set_verb_trace(nullptr, 0);
      SYMM_CUDA_CHECK(cudaMemsetAsync(d, 0, bytes, rt.stream()));
      rt.barrier();  // every rank's graph ready before any replays (its waits need the peers')
      for (int replay = 0; replay < 2; ++replay) SYMM_CUDA_CHECK(cudaGraphLaunch(g.get(), rt.stream()));
    } else {
      SYMM_CUDA_CHECK(cudaMemsetAsync(d, 0, bytes, rt.stream()));
      for (int i = 0; i < calls; ++i) one();
    }
  } catch (...) {
    rt.set_verb_trace(nullptr, 0);
    throw;
  }
  rt.set_verb_trace(nullptr, 0);
  rt.sync();
  g.reset();
  // Everything that may wait for the whole GPU (the free) before the ranks meet: after it, a rank
  // of a team that went on to its next call would wait here for a kernel of its peer's that waits
  // for this rank (seen on one H100: the next case's check timed out).
  std::vector<VerbStamp> host(per_call * calls);
  SYMM_CUDA_CHECK(cudaMemcpyAsync(host.data(), d, bytes, cudaMemcpyDeviceToHost, rt.stream()));
  const double ghz = measure_sm_ghz(rt.stream(), probe);  // synchronises the stream
  buf.reset();
  rt.barrier();
  if (!(ghz > 0)) fail(ErrorCode::kInternal, "SM clock probe: no time passed on the GPU's global timer");
  const VerbTrace vt = verb_spans(host, calls, blocks, kVerbStampsPerBlock, ghz);
  write_stamps_csv(path + ".stamps.rank" + std::to_string(rt.rank()) + ".csv", host, calls, blocks, kVerbStampsPerBlock,
                   ghz);
  write_block_trace(trace_part(path, rt.rank()), rt.rank(), rt.device(), vt);
  rt.barrier();  // every part written
  if (rt.rank() == 0) {
    merge_rank_traces(path, rt.world());
    char note[160];
    std::snprintf(note, sizeof note, " (SM clock %.3f GHz; global timer tick %.0f ns%s)", ghz, vt.tick_ns,
                  vt.lost ? "; some blocks made more stamps than the buffer holds" : "");
    std::printf("# trace: %s%s\n", path.c_str(), note);
    std::fflush(stdout);
  }
}

void trace_program_case(Runtime& rt, const std::string& dir, const std::string& op, const std::string& algo,
                        const std::string& dtype, const std::string& what, const std::function<void()>& enqueue,
                        int blocks, bool graph, bool eager, int calls) {
  if (graph && !team_graph(rt))
    trace_program_call(rt, trace_file(dir, op, algo, dtype, what + ".graph"), enqueue, true, calls, blocks);
  if (eager) trace_program_call(rt, trace_file(dir, op, algo, dtype, what + ".eager"), enqueue, false, calls, blocks);
}

}  // namespace symm::cuda
