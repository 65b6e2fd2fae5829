// The cross-rank flags of one team graph, as graph edges (team_graph.h): when the ranks of an
// in-process team share a GPU, every rank's calls are captured into ONE CUDA graph, and each host
// plan flag (core/plan.h: write_flag into a peer's pad, wait_flag on one's own) becomes an edge
// from the write's node to the wait's node. CUDA promises no forward progress between concurrent
// graphs or streams: a wait node parked ahead of the node that would release it in a queue they
// share never ends (experiments/results/h200x1/team, run9..run12). With the edges, any order the
// driver picks respects every flag, and each stream wait finds its flag already written.
//
// Matching: the k-th write into (target rank, slot) pairs with the target's k-th wait on that
// slot, in each rank's enqueue order. A plan flag names its writer (pad::plan_flag's from-rank) and
// is consumed by its wait (reset to 0), so write k releases wait k exactly. The table holds graph
// nodes as opaque pointers: plain C++, unit-tested without a GPU (tests/cuda/test_flag_edges.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace symm::cuda {

class FlagEdges {
 public:
  // Forgets every write and wait: the start of a new team capture.
  void reset();
  // Rank `writer` wrote `value` into rank `target`'s pad at `slot`; `node` is the write's graph node.
  void add_write(int writer, int target, uint32_t slot, uint32_t value, void* node);
  // Rank `waiter` waits for `value` at `slot` of its own pad; `node` is the wait's graph node.
  void add_wait(int waiter, uint32_t slot, uint32_t value, void* node);

  struct Edge {
    void* from;  // the write's node
    void* to;    // the wait's node
  };
  // Every write paired with its wait. Throws kInvalidArgument, in one line naming rank, slot and
  // occurrence (the first few), when the ranks' calls disagree: a wait no rank writes (it would
  // stall the graph until the stream watchdog), a write no wait consumes, a value that differs from
  // its wait's, or two ranks writing the same slot of one target.
  std::vector<Edge> match() const;

  std::size_t writes() const;
  std::size_t waits() const;

 private:
  struct Op {
    int rank;  // the writer (writes) or the waiter (waits)
    uint32_t value;
    void* node;
  };
  using Key = std::tuple<int, uint32_t>;  // (target rank, slot)
  mutable std::mutex m_;                  // ranks record from their own threads
  std::map<Key, std::vector<Op>> writes_, waits_;
};

}  // namespace symm::cuda
