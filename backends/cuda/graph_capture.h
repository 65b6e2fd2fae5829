// Capturing a CUDA graph and making it ready to replay: one rank's capture (capture_graph), the
// instantiation every captured graph goes through (instantiate_graph: upload first, testing and
// debugging switches), used by the benches (apps/harness/cuda) and the team graph (team_graph.h).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/check.h"

namespace symm::cuda {

// Records `e` on `s` so that a graph captured from `s` records it too: in a capture, an external
// record (an event-record node that each replay records and the host can query or time); outside
// one, a plain record (the flag is invalid there, and on an H200 an external record behind a
// stream stuck on a flag blocked the host).
inline void record_event(cudaEvent_t e, cudaStream_t s) {
  cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
  SYMM_CUDA_CHECK(cudaStreamIsCapturing(s, &cap));
  if (cap == cudaStreamCaptureStatusActive)
    SYMM_CUDA_CHECK(cudaEventRecordWithFlags(e, s, cudaEventRecordExternal));
  else
    SYMM_CUDA_CHECK(cudaEventRecord(e, s));
}

// Testing (SYMM_TEST_GRAPH_CHAIN=1): makes a captured graph one chain, its nodes in a topological
// order that keeps the capture's order where the edges allow (Kahn's, the lowest capture index
// first), so a replay runs as the eager calls were enqueued, one node after another.
inline void chain_graph(cudaGraph_t g) {
  std::size_t n = 0, m = 0;
  SYMM_CUDA_CHECK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  SYMM_CUDA_CHECK(cudaGraphGetNodes(g, nodes.data(), &n));
  SYMM_CUDA_CHECK(cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &m));
  std::vector<cudaGraphNode_t> from(m), to(m);
  SYMM_CUDA_CHECK(cudaGraphGetEdges(g, from.data(), to.data(), nullptr, &m));
  std::map<cudaGraphNode_t, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[nodes[i]] = i;
  std::vector<std::vector<std::size_t>> out(n);
  std::vector<std::size_t> indeg(n, 0);
  std::set<std::pair<std::size_t, std::size_t>> has;
  for (std::size_t e = 0; e < m; ++e) {
    const std::size_t a = index.at(from[e]), b = index.at(to[e]);
    out[a].push_back(b), ++indeg[b], has.insert({a, b});
  }
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (!indeg[i]) ready.insert(i);
  std::size_t prev = n;
  while (!ready.empty()) {
    const std::size_t i = *ready.begin();
    ready.erase(ready.begin());
    if (prev != n && !has.count({prev, i}))
      SYMM_CUDA_CHECK(cudaGraphAddDependencies(g, &nodes[prev], &nodes[i], nullptr, 1));
    prev = i;
    for (std::size_t b : out[i])
      if (--indeg[b] == 0) ready.insert(b);
  }
}

// A captured graph `g` made ready to launch on `s`, and destroyed: instantiated, uploaded to the
// device and waited for (a graph's first launch otherwise uploads it then, and in an in-process
// team that upload may wait behind a peer's stream already parked on a flag of this rank; the
// callers meet after this, before any rank launches). Testing: SYMM_TEST_NO_GRAPH_UPLOAD=1 leaves
// the upload to the first launch; SYMM_TEST_GRAPH_CHAIN=1 makes it one chain (chain_graph);
// SYMM_DEBUG_GRAPH_DOT=<dir> writes it there as Graphviz (graph_<n>.dot, numbered in capture order
// across the process).
inline cudaGraphExec_t instantiate_graph(cudaGraph_t g, cudaStream_t s) {
  cudaGraphExec_t exec;
  if (std::getenv("SYMM_TEST_GRAPH_CHAIN") != nullptr) chain_graph(g);
  if (const char* dir = std::getenv("SYMM_DEBUG_GRAPH_DOT"); dir && *dir) {
    static std::atomic<int> n{0};
    const std::string path = std::string(dir) + "/graph_" + std::to_string(n++) + ".dot";
    SYMM_CUDA_CHECK(cudaGraphDebugDotPrint(g, path.c_str(), cudaGraphDebugDotFlagsVerbose));
  }
  SYMM_CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  SYMM_CUDA_CHECK(cudaGraphDestroy(g));
  if (std::getenv("SYMM_TEST_NO_GRAPH_UPLOAD") == nullptr) {
    SYMM_CUDA_CHECK(cudaGraphUpload(exec, s));
    SYMM_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  return exec;
}

// `calls` back-to-back calls of `one`, captured on `s` (this thread's capture) into a graph made
// ready by instantiate_graph. One rank's graph: the benches replay through ReplayGraph
// (team_graph.h), which captures a team whose ranks share a GPU into one graph instead.
inline cudaGraphExec_t capture_graph(cudaStream_t s, const std::function<void()>& one, int calls) {
  cudaGraph_t g;
  SYMM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; ++i) one();
  SYMM_CUDA_CHECK(cudaStreamEndCapture(s, &g));
  return instantiate_graph(g, s);
}

}  // namespace symm::cuda
