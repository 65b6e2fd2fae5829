#include "backends/cuda/team_graph.h"

#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/graph_capture.h"
#include "backends/cuda/team.h"

namespace symm::cuda {
namespace {

thread_local FlagEdges* t_edges = nullptr;

// This thread records its plan flags in `e` for its lifetime (its capture turn).
struct CaptureTurn {
  explicit CaptureTurn(FlagEdges* e) { t_edges = e; }
  ~CaptureTurn() { t_edges = nullptr; }
};

}  // namespace

bool team_graph(const Runtime& rt) { return rt.team() != nullptr && rt.handle().gpu_ranks == rt.world(); }

FlagEdges* capturing_team_edges() { return t_edges; }

ReplayGraph::ReplayGraph(Runtime& rt, const std::function<void()>& one, int calls) : rt_(rt), team_(team_graph(rt)) {
  if (!team_) {
    exec_ = capture_graph(rt_.stream(), one, calls);
    return;
  }
  capture_team(one, calls);
}

void ReplayGraph::capture_team(const std::function<void()>& one, int calls) {
  Team& team = *rt_.team();
  const int me = rt_.rank(), world = rt_.world();
  cudaStream_t s = rt_.stream();
  FlagEdges& edges = team.flag_edges();
  // Every rank's stream idle and no rank still using the table (a previous graph's capture).
  rt_.barrier();
  if (me == 0) {
    edges.reset();
    SYMM_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    SYMM_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    SYMM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    SYMM_CUDA_CHECK(cudaEventRecord(fork_, s));
  } else {
    SYMM_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  }
  // Rank 0's object (its fork and done events) to every rank: the capture has begun.
  const auto* leader = static_cast<const ReplayGraph*>(team.all_gather(me, me == 0 ? this : nullptr)[0]);
  team_done_ = leader->done_;
  for (int turn = 0; turn < world; ++turn) {
    if (turn == me) {
      if (me != 0) SYMM_CUDA_CHECK(cudaStreamWaitEvent(s, leader->fork_, 0));  // joins rank 0's capture
      {
        CaptureTurn t(&edges);
        for (int i = 0; i < calls; ++i) one();
      }
      if (me != 0) SYMM_CUDA_CHECK(cudaEventRecord(join_, s));
    }
    team.barrier(me, "the team graph's capture, rank " + std::to_string(turn) + "'s turn");
  }
  const std::vector<void*> joins = team.all_gather(me, join_);
  if (me == 0) {
    for (int r = 1; r < world; ++r)
      SYMM_CUDA_CHECK(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(joins[std::size_t(r)]), 0));
    cudaGraph_t g;
    SYMM_CUDA_CHECK(cudaStreamEndCapture(s, &g));
    for (const FlagEdges::Edge& e : edges.match()) {
      cudaGraphNode_t from = static_cast<cudaGraphNode_t>(e.from), to = static_cast<cudaGraphNode_t>(e.to);
      SYMM_CUDA_CHECK(cudaGraphAddDependencies(g, &from, &to, nullptr, 1));
    }
    exec_ = instantiate_graph(g, s);
  }
  // No rank touches its stream (still part of the capture) before rank 0 has ended it.
  team.barrier(me, "the team graph's instantiation");
}

ReplayGraph::~ReplayGraph() {
  if (rt_.aborted()) return;  // a destroy may wait for the device: the process is exiting
  if (exec_) cudaGraphExecDestroy(exec_);
  if (fork_) cudaEventDestroy(fork_);
  if (done_) cudaEventDestroy(done_);
  if (join_) cudaEventDestroy(join_);
}

void ReplayGraph::launch() {
  if (exec_) SYMM_CUDA_CHECK(cudaGraphLaunch(exec_, rt_.stream()));
}

void ReplayGraph::join() {
  if (!team_) return;
  const int me = rt_.rank();
  if (me == 0) SYMM_CUDA_CHECK(cudaEventRecord(done_, rt_.stream()));
  rt_.team()->barrier(me, "the team graph's launches");
  if (me != 0) SYMM_CUDA_CHECK(cudaStreamWaitEvent(rt_.stream(), team_done_, 0));
  // Rank 0 destroys the event with its ReplayGraph: not before every rank has waited on it.
  rt_.team()->barrier(me, "the team graph's launches, joined");
}

}  // namespace symm::cuda
