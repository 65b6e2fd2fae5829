// Host plans: what a plan's `run` does on the host. SimHost's verbs (core/plan.h) become items on
// the rank's streams (streams.h), checked as they are recorded for what only the simulator
// requires (CheckedHost checked the contract); and the reports of a plan's streams (a deadlock
// naming rank, stream and slot; a stream's read in the race check).
#include "backends/sim/simulator.h"
#include "core/signal_pad.h"

namespace symm::sim {

// ---- SimHost: the verbs append items -------------------------------------------------------

int SimHost::world() const { return sim_->world(); }

uintptr_t SimHost::peer_addr(uintptr_t p, int r) const { return sim_->host_peer_addr(rank_, p, r); }

// The verbs' arguments were checked by core/plan.h's CheckedHost, which every plan runs through;
// only what the simulator alone requires is checked here.
void SimHost::push(int s, StreamItem& it) { sim_->enqueue(rank_, s, it); }

void SimHost::copy_engine(int s, void* dst, const void* src, std::size_t bytes) {
  StreamItem it;
  it.kind = ItemKind::kCopy;
  it.dst = reinterpret_cast<uintptr_t>(dst);
  it.src = reinterpret_cast<uintptr_t>(src);
  it.bytes = bytes;
  push(s, it);
}

void SimHost::write_flag(int s, int peer, uint32_t slot, uint32_t value) {
  StreamItem it;
  it.kind = ItemKind::kWriteFlag;
  it.peer = peer;
  it.slot = slot;
  it.value = value;
  push(s, it);
}

void SimHost::wait_flag(int s, uint32_t slot, uint32_t value) {
  StreamItem it;
  it.kind = ItemKind::kWaitFlag;
  it.slot = slot;
  it.value = value;
  push(s, it);
}

void SimHost::record(int s, int event) {
  StreamItem it;
  it.kind = ItemKind::kRecord;
  it.event = event;
  push(s, it);
}

void SimHost::wait_event(int s, int event) {
  StreamItem it;
  it.kind = ItemKind::kWaitEvent;
  it.event = event;
  push(s, it);
}

void SimHost::gemm(int s, const GemmArgs& g) {
  if (g.ldc != std::size_t(g.n))  // the simulator's own limit (cuBLASLt takes ldc >= n)
    fail(ErrorCode::kUnsupported, "rank " + std::to_string(rank_) + " stream " + std::to_string(s) +
                                      ": gemm with ldc " + std::to_string(g.ldc) + " != n " + std::to_string(g.n) +
                                      ": the simulator stores packed C only");
  StreamItem it;
  it.kind = ItemKind::kGemm;
  it.gemm = g;
  push(s, it);
}

// ---- the engine's side: recording ---------------------------------------------------------------------

uintptr_t Simulator::host_peer_addr(int rank, uintptr_t p, int r) const {
  const uintptr_t rel = p - kAddrBase;
  const int space = int(rel >> kSpaceShift);
  if (p < kAddrBase || space >= world_ || r < 0 || r >= world_)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank) + ": peer(p, " + std::to_string(r) +
                                          ") needs a rank's symmetric address and 0 <= r < world");
  return addr(r, uint64_t(rel & ((uintptr_t(1) << kSpaceShift) - 1)));
}

Loc Simulator::decode_host(int rank, int s, uintptr_t a, std::size_t bytes, const char* verb) const {
  const uintptr_t rel = a - kAddrBase;
  const Loc l{int(rel >> kSpaceShift), uint64_t(rel & ((uintptr_t(1) << kSpaceShift) - 1))};
  if (a < kAddrBase || l.space >= world_ || l.off + bytes > heap_bytes_ || l.off % kVecBytes || bytes % kVecBytes)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank) + " stream " + std::to_string(s) + ": " + verb +
                                          " of " + std::to_string(bytes) +
                                          " bytes at an address outside the symmetric heap or not 16-byte aligned");
  return l;
}

void Simulator::enqueue(int rank, int s, StreamItem& it) {
  Stream& st = stream_at(rank, s);
  it.order = ++enqueued_;
  // A flag item joins the batch of the flag item enqueued just before it on the same stream (a
  // write: unless that batch holds a wait), as the CUDA backend batches them (plan_exec.h); not
  // in a team's graph (there each flag is also a graph edge from its own node: no batches), nor in
  // a team's eager call where ranks share a GPU (there the ranks enqueue in lockstep, meeting after
  // each flag write, and CUDA batches nothing while it steps: PlanExec::batching). Not modelled:
  // CUDA also starts a new batch after 128 operations, batches nothing while a call is traced or
  // with SYMM_PLAN_BATCH_MEMOPS=0, and on a team in eager mode runs its waits as a kernel after the
  // writes' batch (plan_exec.cpp); the lockstep's own meetings cost the host, not modelled; the
  // traced timelines compare unbatched measured flags with batched simulated ones.
  FlagBatch& b = batch_[std::size_t(rank)];
  const bool batches = !(m_.team && (spec_.graph || m_.ranks_per_gpu(world_) > 1));
  if (batches && (it.kind == ItemKind::kWriteFlag || it.kind == ItemKind::kWaitFlag)) {
    it.batched = b.stream == s && !(it.kind == ItemKind::kWriteFlag && b.waits);
    if (!it.batched) b = FlagBatch{s, false};
    if (it.kind == ItemKind::kWaitFlag) b.waits = true;
  } else {
    b = FlagBatch{};
  }
  if (host_chain_) {  // an eager call: the host enqueues its items one after another (sim.h host_*_us)
    TimePs cost = 0;
    switch (it.kind) {
      case ItemKind::kLaunch:
      case ItemKind::kGemm: cost = host_launch_ps_; break;
      case ItemKind::kCopy: cost = host_copy_ps_; break;
      case ItemKind::kRecord:
      case ItemKind::kWaitEvent: cost = host_event_ps_; break;
      case ItemKind::kWriteFlag:
      case ItemKind::kWaitFlag: cost = host_flag_item_ps_ + (it.batched ? 0 : host_flag_ps_); break;
    }
    host_enqueued_[std::size_t(rank)] += cost;
    it.enqueued_at = host_enqueued_[std::size_t(rank)];
  }
  if (it.kind == ItemKind::kRecord) it.seq = ++events_[std::size_t(rank)][std::size_t(it.event)].enqueued;
  if (it.kind == ItemKind::kWaitEvent) {
    // CUDA semantics: a wait binds to the latest record enqueued before it; none is a plan bug.
    it.seq = events_[std::size_t(rank)][std::size_t(it.event)].enqueued;
    if (it.seq == 0)
      fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank) + " stream " + std::to_string(s) +
                                            ": wait_event(" + std::to_string(it.event) +
                                            ") before any record of that event (plan bug)");
  }
  st.items.push_back(it);
}

// ---- reports ------------------------------------------------------------------------------------

std::string Simulator::plan_slot_name(uint32_t slot) { return pad::describe_plan_slot(slot); }

bool Simulator::stream_deadlock() {
  const Stream* first = nullptr;
  int others = 0;
  for (const Stream& s : streams_) {
    if (!s.waiting) continue;
    if (!first)
      first = &s;
    else
      ++others;
  }
  if (!first) return false;
  const StreamItem& it = first->items.front();
  const std::string and_others =
      others ? " (and " + std::to_string(others) + " other blocked stream" + (others == 1 ? "" : "s") + ")" : "";
  const std::string who = "rank " + std::to_string(first->rank) + " stream " + std::to_string(first->index);
  if (it.kind == ItemKind::kWaitEvent)
    fail(ErrorCode::kDeadlock,
         "deadlock: " + who + " waits for event " + std::to_string(it.event) + " whose record never runs" + and_others);
  fail(ErrorCode::kDeadlock,
       "deadlock: " + who + " waits on " + plan_slot_name(it.slot) + " for value " + std::to_string(it.value) +
           " but sees " + std::to_string(flags_[std::size_t(first->rank) * pad::kPadSlots + it.slot]) + and_others);
}

void Simulator::check_stream_read(Stream& s, int rank, uint64_t off, std::size_t bytes) {
  check_read(s.tid, s.clock, nullptr, rank, off, bytes, &s);
}

}  // namespace symm::sim
