// Host-plan and device-program calls traced on the GPU, written as Chrome traces (trace_out.h).
#include "apps/harness/cuda/trace_out.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "apps/harness/cuda/trace_parts.h"
#include "backends/cuda/check.h"
#include "backends/cuda/graph_capture.h"
#include "backends/cuda/plan_exec.h"
#include "backends/cuda/runtime.h"
#include "backends/cuda/team_graph.h"

namespace symm::cuda {
namespace {

// Both kinds of trace: `calls` calls of `one` back to back (eager), or captured into one graph and
// replayed twice (the second replay is the trace), every rank alike; `arm` before the calls are
// enqueued or captured and `disarm` after (also on an error); returns with the stream drained.
void run_traced(Runtime& rt, const std::string& path, bool graph, int calls, const std::function<void()>& one,
                const std::function<void()>& arm, const std::function<void()>& disarm) {
  if (calls < 1) fail(ErrorCode::kInvalidArgument, "--trace-calls must be at least 1");
  if (graph && team_graph(rt))
    fail(ErrorCode::kUnsupported, "--trace of a graph call: ranks that share a GPU run one team graph; eager only");
  rt.set_context("tracing " + std::to_string(calls) + (graph ? " graph" : " eager") + " call(s) for " + path);
  rt.barrier();  // every rank's previous work drained: the traced calls start alike
  std::unique_ptr<CUgraphExec_st, decltype(&cudaGraphExecDestroy)> g(nullptr, &cudaGraphExecDestroy);
  arm();
  try {
    if (graph)
      g.reset(capture_graph(rt.stream(), one, calls));
    else
      for (int i = 0; i < calls; ++i) one();
  } catch (...) {
    disarm();
    throw;
  }
  disarm();
  if (graph) {
    rt.barrier();  // every rank's graph ready before any replays (its waits need the peers')
    for (int replay = 0; replay < 2; ++replay) SYMM_CUDA_CHECK(cudaGraphLaunch(g.get(), rt.stream()));
  }
  rt.sync();
}

// Every rank has written its part of `path`: rank 0 merges them and prints the path (and `note`).
void merge_traces(Runtime& rt, const std::string& path, const std::string& note = {}) {
  rt.barrier();  // every part written
  if (rt.rank() != 0) return;
  merge_rank_traces(path, rt.world());
  std::printf("# trace: %s%s\n", path.c_str(), note.c_str());
  std::fflush(stdout);
}

}  // namespace

void trace_call(Runtime& rt, PlanExec& exec, const std::string& path, const std::function<void()>& enqueue, bool graph,
                int calls) {
  if (!graph && calls > 1 && rt.team() != nullptr)
    fail(ErrorCode::kUnsupported,
         "--trace-calls above 1 with ranks in one process: their eager plan calls run one at a time (bench.cpp)");
  PlanTracer tracer;
  run_traced(
      rt, path, graph, calls, enqueue, [&] { exec.set_tracer(&tracer); }, [&] { exec.set_tracer(nullptr); });
  write_rank_trace(trace_part(path, rt.rank()), rt.rank(), rt.device(), tracer.spans(),
                   graph ? std::vector<HostSpan>{} : tracer.host_spans());
  merge_traces(rt, path);
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
  const std::size_t per_call = std::size_t(blocks) * kVerbStampsPerBlock;
  const std::size_t bytes = per_call * std::size_t(std::max(calls, 0)) * sizeof(VerbStamp);
  VerbStamp* d = nullptr;
  SYMM_CUDA_CHECK(cudaMalloc(&d, bytes + 2 * sizeof(unsigned long long)));  // the stamps, the clock probe's two words
  auto* probe = reinterpret_cast<unsigned long long*>(reinterpret_cast<char*>(d) + bytes);
  std::unique_ptr<VerbStamp, decltype(&cudaFree)> buf(d, &cudaFree);
  int call = 0;
  run_traced(
      rt, path, graph, calls,
      [&] {  // each call stamps into its own part of the buffer (zeroed first: an unwritten stamp is kNone)
        rt.set_verb_trace(d + per_call * call++, kVerbStampsPerBlock);
        enqueue();
      },
      [&] { SYMM_CUDA_CHECK(cudaMemsetAsync(d, 0, bytes, rt.stream())); }, [&] { rt.set_verb_trace(nullptr, 0); });
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
  char note[160];
  std::snprintf(note, sizeof note, " (SM clock %.3f GHz; global timer tick %.0f ns%s)", ghz, vt.tick_ns,
                vt.lost ? "; some blocks made more stamps than the buffer holds" : "");
  merge_traces(rt, path, note);
}

void trace_program_case(Runtime& rt, const std::string& dir, const std::string& op, const std::string& algo,
                        const std::string& dtype, const std::string& what, const std::function<void()>& enqueue,
                        int blocks, bool graph, bool eager, int calls) {
  if (graph && !team_graph(rt))
    trace_program_call(rt, trace_file(dir, op, algo, dtype, what + ".graph"), enqueue, true, calls, blocks);
  if (eager) trace_program_call(rt, trace_file(dir, op, algo, dtype, what + ".eager"), enqueue, false, calls, blocks);
}

}  // namespace symm::cuda
