// Host plans in the simulator (core/plan.h): each rank's streams, the items a plan enqueues on
// them, its events, and SimHost, the host context a plan's `run` enqueues through.
//
// A plan's `run` is called on the rank's host fiber at the start of a call and only enqueues
// (it returns at once, as a CUDA host thread does). The streams then run their items in order,
// one at a time, as engine events (streams.cpp, copy_engines.cpp and gemm.cpp say what each item costs and when its
// bytes become visible). The call ends when every stream of the rank has run dry.
//
// Race check: every stream is an entity with its own vector clock (like a block). A copy
// engine's reads and stores are the stream's; a kernel launched on a stream starts from the
// stream's clock and joins back into it at its end; write_flag carries a snapshot of the
// stream's clock (release), wait_flag joins the snapshot of the flag it consumed (acquire);
// record / wait_event join clocks between the streams of one rank. So a plan that writes a
// flag on a stream not ordered after its copy is reported (the reader's loads race the copy).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "backends/sim/ctx.h"
#include "backends/sim/event_queue.h"
#include "backends/sim/vclock.h"
#include "core/plan.h"

namespace symm::sim {

class Simulator;

enum class ItemKind : uint8_t { kLaunch, kCopy, kWriteFlag, kWaitFlag, kRecord, kWaitEvent, kGemm };

// One thing a plan enqueued on a stream.
struct StreamItem {
  ItemKind kind = ItemKind::kLaunch;
  // kLaunch
  ProgramFn fn = nullptr;
  const char* name = "";
  CollArgs args;
  int blocks = 0;
  int lanes = 1;  // 2: the program has a side lane per block (core/verbs.h kSideLane)
  // kCopy: dst / src addresses, bytes; kGemm: the product
  uintptr_t dst = 0, src = 0;
  std::size_t bytes = 0;
  GemmArgs gemm;
  // kWriteFlag / kWaitFlag
  int peer = 0;
  uint32_t slot = 0, value = 0;
  // Enqueued right after a flag item of the same stream with no other verb between (a write: and
  // no wait before it in the batch): on CUDA the two go to the GPU as one cuStreamBatchMemOp
  // (backends/cuda/plan_exec.h), so this one takes stream_batch_op_us, not stream_op_us.
  bool batched = false;
  // kRecord / kWaitEvent: the event, and (wait) which record of it must have run
  int event = 0;
  uint64_t seq = 0;
  uint64_t order = 0;      // when the host enqueued it (the call's streams start in this order)
  TimePs enqueued_at = 0;  // eager calls with a host chain (Machine::host_chain): when the host has enqueued it
};

struct Stream {
  int rank = 0, index = 0, tid = 0;
  std::deque<StreamItem> items;
  bool busy = false;          // an item has started and not finished
  bool waiting = false;       // busy in wait_flag / wait_event (deadlock report)
  bool kick_pending = false;  // a kKickStream event will start its next item once the host enqueued it
  TimePs started = 0;         // of the current item (trace)
  VClock clock;
  bool tick_before_store = true;
  Snapshot release_snap;
  // Set when the call's launch kicks the stream, cleared when its first item is done: a kernel or
  // GEMM that is the stream's first item starts at the kick (the call's launch latency, paid once).
  bool at_kick = false;
  // The stream's previous item of this call was a copy: a copy after it starts warm (its engine
  // took its descriptor while the previous copy ran; copy_engines.cpp, ce_launch_us).
  bool after_copy = false;
  // A team machine (gemm.cpp): the current item (a kernel, or a copy within the GPU) waited for the
  // GEMMs running on its GPU when it came up and may start now, whatever GEMM has started since.
  bool sm_cleared = false;
};

// An event of one rank: the latest record enqueued and the latest that has run (records of
// one event run in order: a plan records each event on one stream).
struct EventRec {
  uint64_t enqueued = 0, done = 0;
  VClock clock;  // the recording stream's clock when the latest record ran
};

// The host verbs (core/plan.h) for one rank: each call appends an item to a stream.
class SimHost {
 public:
  SimHost(Simulator* sim, int rank, int streams) : sim_(sim), rank_(rank), streams_(streams) {}
  int rank() const { return rank_; }
  int world() const;
  int streams() const { return streams_; }
  template <class T>
  T* peer(T* p, int r) const {
    return reinterpret_cast<T*>(peer_addr(reinterpret_cast<uintptr_t>(p), r));
  }
  template <class Program, class T>
  void launch(int s, const CollArgs& a, int blocks) {
    StreamItem it;
    it.kind = ItemKind::kLaunch;
    it.fn = &invoke<Program, T>;
    it.name = "kernel";
    it.args = a;
    it.blocks = blocks;
    it.lanes = has_side_lane<Program>() ? 2 : 1;
    push(s, it);
  }
  void copy_engine(int s, void* dst, const void* src, std::size_t bytes);
  void write_flag(int s, int peer, uint32_t slot, uint32_t value);
  void wait_flag(int s, uint32_t slot, uint32_t value);
  void record(int s, int event);
  void wait_event(int s, int event);
  void gemm(int s, const GemmArgs& g);

 private:
  template <class Program, class T>
  static void invoke(BlockCtx& ctx, const CollArgs& a) {
    Program::template run<T>(ctx, a);
  }
  uintptr_t peer_addr(uintptr_t p, int r) const;
  void push(int s, StreamItem& it);

  Simulator* sim_;
  int rank_, streams_;
};

static_assert(HostCtx<SimHost>);
static_assert(HostCtx<CheckedHost<SimHost>>);

// A host plan instantiated for one element type, as the engine runs it.
using PlanFn = void (*)(SimHost&, const PlanArgs&);

}  // namespace symm::sim
