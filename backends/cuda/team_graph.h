// The CUDA graph a bench replays: one per rank, or ONE for a team whose ranks share a GPU.
//
// With one process per GPU, or a team with a GPU per rank, each rank captures its own calls into
// its own graph and launches it on its stream, as before. When every rank of an in-process team
// sits on one GPU, the ranks' graphs would run concurrently on one device, and CUDA promises no
// forward progress between concurrent graphs (or streams): on an H200 and an H100 a node of one
// rank's graph sat behind the other rank's parked flag wait (cuStreamWaitValue32) and the team
// deadlocked (experiments/results/h200x1/team, run9..run12). So there the team captures one graph:
//  1. rank 0 begins a capture on its stream (cudaStreamCaptureModeRelaxed: it spans threads) and
//     records a fork event;
//  2. rank by rank (a meeting between turns: one thread captures at a time), each rank's stream
//     waits on the fork (joining the capture) and captures its calls; PlanExec records every plan
//     flag's write and wait node in the team's FlagEdges (flag_edges.h) while its thread is in
//     capture_turn();
//  3. rank 0 joins every rank's stream back into its own, ends the capture, adds an edge from each
//     flag write's node to its wait's node, instantiates and uploads the graph.
// Any order the driver then picks respects every cross-rank flag: a stream wait of the graph finds
// its flag written. Rank 0 launches it; join() makes every rank's stream wait for those launches, so
// each rank's watchdogs (Runtime::sync, PlanExec::wait_main) watch the team graph's work of that
// rank as they watched its own graph. Device programs (kernels that spin for their peers) are in the
// team graph too, with no edges: they rely on co-residency (residency.cpp), as before.
#pragma once

#include <cuda_runtime.h>

#include <functional>

#include "backends/cuda/flag_edges.h"
#include "backends/cuda/runtime.h"

namespace symm::cuda {

// True when `rt`'s team replays one graph: an in-process team with every rank on one GPU.
// The same answer on every rank (a team spread over several GPUs keeps a graph per rank).
bool team_graph(const Runtime& rt);

// The flag table of the team capture this thread is taking part in, nullptr outside one.
// PlanExec::write_flag / wait_flag record their nodes in it.
FlagEdges* capturing_team_edges();

class ReplayGraph {
 public:
  // Captures `calls` back-to-back calls of `one` on rt.stream(). With team_graph(rt): a meeting of
  // every rank (all construct it alike), the team's one graph.
  ReplayGraph(Runtime& rt, const std::function<void()>& one, int calls);
  ~ReplayGraph();
  ReplayGraph(const ReplayGraph&) = delete;
  ReplayGraph& operator=(const ReplayGraph&) = delete;

  // This rank launches the graph: every rank its own, or rank 0 the team's.
  bool launches() const { return exec_ != nullptr; }
  // One replay on rt.stream(), where launches(); nothing elsewhere.
  void launch();
  // Team graph: every rank's stream waits for the launches so far (a host-only meeting of every
  // rank). Own graphs: nothing. Call it after the launches, before waiting for the stream.
  void join();

 private:
  void capture_team(const std::function<void()>& one, int calls);

  Runtime& rt_;
  bool team_ = false;
  cudaGraphExec_t exec_ = nullptr;
  cudaEvent_t fork_ = nullptr, done_ = nullptr;  // rank 0's (team graph)
  cudaEvent_t join_ = nullptr;                   // this rank's end of its calls (team graph, rank > 0)
  cudaEvent_t team_done_ = nullptr;              // rank 0's done_, as every rank's join() waits on it
};

}  // namespace symm::cuda
