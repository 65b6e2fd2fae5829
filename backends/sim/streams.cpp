// Host plans: the stream scheduler. The streams of each rank run what a plan enqueued (streams.h,
// recorded by plan_record.cpp), one item at a time, in order; a copy engine's item is scheduled
// by copy_engines.cpp, a GEMM's by gemm.cpp.
//
// What each item costs, and when its effects become visible:
//   launch      the kernel's blocks start launch latency later from the stream's clock; a
//               stream's first item of the call starts at the kick, which is the call's launch
//               (paid once, not twice; launch_eager_us in either mode for a call with copies,
//               run_plan_call); a later kernel
//               was submitted with the call, so it pays the device-side gap of a kernel after
//               the stream's previous item, launch_graph_us, in either launch mode (the host's
//               eager submission overlaps the stream's earlier items); the item is done when its last block has
//               ended (kernel end: its stores have landed) and the blocks' clocks join the stream.
//               One kernel per rank at a time (the plans of core/ launch on one stream).
//   copy_engine copy_engines.cpp
//   write_flag  release: runs once the stream's earlier items are done (stream order), takes a
//               snapshot of the stream's clock; the flag lands flag_latency_us later (at once on
//               the own rank). A plan flag that lands while it still holds a value (not consumed)
//               is a plan bug, reported (kRace).
//   wait_flag   done when the local flag == value: joins the snapshot the flag carried (acquire),
//               then resets it to 0 (consumed). Never satisfied: a deadlock naming rank, stream,
//               slot, expected and seen value.
//               Both flag items take stream_op_us of the stream's time (the write's flag leaves
//               after it; the wait's stream goes on after it): calibrate's plan_flag row. A flag
//               item enqueued right after another of the same stream (StreamItem::batched: one
//               cuStreamBatchMemOp on CUDA) takes stream_batch_op_us instead: calibrate's
//               plan_flag_batch rows (n pairs a call; on 2x and 4x H200 each pair beyond the first
//               adds about 1.6 us to a call of 4.5: a batched write and a batched wait). A rank's
//               flag operations, on all its streams, take its GPU's front end one at a time
//               (front_end; on a team machine, with every other rank's on that GPU), and so do
//               its copies' cold starts
//               (copy_engines.cpp, Machine::ce_launch_us).
//   record      free; the event holds the stream's clock. wait_event: done once that record ran,
//               joining its clock.
//   gemm        gemm.cpp
#include <algorithm>

#include "backends/sim/simulator.h"
#include "core/signal_pad.h"

namespace symm::sim {

uint32_t Simulator::stream_epoch(Stream& s) {
  if (s.tick_before_store) {
    ++s.clock[std::size_t(s.tid)];
    s.tick_before_store = false;
    s.release_snap.reset();
  }
  return s.clock[std::size_t(s.tid)];
}

// One call of the plan on rank h: the streams fork from the host (its input writes are ordered
// before), the plan enqueues, the streams run; the host resumes when every stream ran dry.
void Simulator::run_plan_call(Host& h) {
  const int r = h.rank;
  for (EventRec& e : events_[std::size_t(r)]) e = EventRec{};
  batch_[std::size_t(r)] = FlagBatch{};  // a call's first flag item starts a batch (CUDA: end_call flushes)
  for (int s = 0; s < streams_n_; ++s) {
    Stream& st = stream_at(r, s);
    st.after_copy = false;
    if (race_) {
      join(st.clock, h.clock);
      st.tick_before_store = true;
      st.release_snap.reset();  // the previous call's snapshot misses what came since (its end, the host)
    }
  }
  // The host's enqueuing starts (sim.h host_*_us): now, or where it enqueued the call before
  // when it runs ahead of the GPU (host_ahead_: the bench's back-to-back eager calls).
  const bool ahead = host_ahead_ && h.call > 0;
  host_enqueued_[std::size_t(r)] = ahead ? std::min(h.chain_end, q_.now()) : q_.now();
  if (host_chain_) host_enqueued_[std::size_t(r)] += host_call_ps_;  // the call's begin and end (sim.h)
  PlanArgs pa;
  pa.coll = args_[std::size_t(r)];
  pa.chunk_bytes = spec_.chunk_bytes;
  pa.sm_percent = spec_.sm_percent;
  pa.blocks = h.blocks;
  SimHost host(this, r, streams_n_);
  if (work_.kind() == Workload::Kind::kCustom)
    work_.custom().plan(host, reinterpret_cast<char*>(addr(r, 0)));
  else
    work_.plan()(host, pa);
  h.launched = q_.now();
  h.chain_end = host_enqueued_[std::size_t(r)];
  h.tick_before_store = true;
  live_streams_[std::size_t(r)] = 0;
  for (int s = 0; s < streams_n_; ++s)
    if (!stream_at(r, s).items.empty()) ++live_streams_[std::size_t(r)];
  if (live_streams_[std::size_t(r)] == 0) return;
  // The streams start launch latency from now: a graph's launch, or the first eager submission.
  // A call with copies (copy_engine: cudaMemcpyAsync, memcpy nodes in a graph) starts
  // launch_eager_us later in either mode: such a graph does not take the launch path of graphs of
  // kernels and memory operations (launch_graph_us); on 2x H200 every copy-engine plan measures
  // the same time in a graph as eager (e.g. the all-gather `ce` at 4K: 24.9 / 25.4 us), where the
  // all-gather `ce_sm` below 1M (kernels and stream flags only, no copy) takes 11.7 us in a graph
  // and 22.4 eager (h200x2/round_c18ea79). Each rank decides by its own items; on a team machine,
  // whose ranks' calls are one graph launched once (backends/cuda/team_graph.h), and whose copies
  // are within one GPU, the rule is not validated (the evidence is copies between GPUs).
  bool copies = false;
  for (int s = 0; s < streams_n_ && !copies; ++s)
    for (const StreamItem& it : stream_at(r, s).items)
      if (it.kind == ItemKind::kCopy) {
        copies = true;
        break;
      }
  // A call whose host ran ahead is queued already: the GPU takes it up as a graph's next node
  // (its items still wait for their enqueuing: kick); one with copies starts launch_eager_us on
  // all the same, as in a graph (on 2x H200 the all-gather `ce` measures the same time eager and
  // in a graph at every size, 4K to 256M).
  q_.push(q_.now() + (copies ? plan_launch_ps_ : ahead ? queued_start_ps_ : launch_ps_), kKickStreams, uint32_t(r), 0);
  h.caller = std::move(h.caller).resume();  // until the last stream runs dry
  h.ended = q_.now();
  if (race_)
    for (int s = 0; s < streams_n_; ++s) join(h.clock, stream_at(r, s).clock);
}

// The call's streams start in the order the host enqueued their first items, as a GPU takes
// work in submission order (a kernel launched before a GEMM on another stream gets its SMs first).
void Simulator::kick_streams(int rank) {
  std::vector<int> order;
  for (int s = 0; s < streams_n_; ++s)
    if (!stream_at(rank, s).items.empty()) order.push_back(s);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return stream_at(rank, a).items.front().order < stream_at(rank, b).items.front().order;
  });
  for (int s : order) {
    stream_at(rank, s).at_kick = true;
    kick(stream_at(rank, s));
  }
}

// Starts the stream's next item if it is idle (items that take no time run in a loop), once the
// host has enqueued it (an eager call with a host chain: StreamItem::enqueued_at).
void Simulator::kick(Stream& s) {
  while (!s.busy && !s.items.empty()) {
    if (s.items.front().enqueued_at > q_.now()) {
      if (!s.kick_pending) q_.push(s.items.front().enqueued_at, kKickStream, uint32_t(s.rank), uint64_t(s.index));
      s.kick_pending = true;
      return;
    }
    s.busy = true;
    s.started = q_.now();
    start_item(s);
  }
}

void Simulator::item_done(Stream& s) {
  StreamItem& it = s.items.front();
  if (trace_ && it.kind != ItemKind::kRecord && it.kind != ItemKind::kWriteFlag) {
    static const char* names[] = {"launch", "copy_engine", "write_flag", "wait_flag", "record", "wait_event", "gemm"};
    std::string args;
    if (it.kind == ItemKind::kCopy || it.kind == ItemKind::kGemm) args = "\"bytes\":" + std::to_string(it.bytes);
    if (it.kind == ItemKind::kWriteFlag || it.kind == ItemKind::kWaitFlag)
      args = "\"slot\":" + std::to_string(it.slot) + ",\"value\":" + std::to_string(it.value) +
             (it.kind == ItemKind::kWriteFlag ? ",\"peer\":" + std::to_string(it.peer) : std::string());
    trace_->slice(Trace::pid(s.rank), Trace::kStreamTid + s.index, names[int(it.kind)], s.started, q_.now(), args);
  }
  s.after_copy = it.kind == ItemKind::kCopy;
  s.items.pop_front();
  s.busy = s.waiting = s.at_kick = false;
  if (s.items.empty()) {
    if (--live_streams_[std::size_t(s.rank)] == 0) q_.push(q_.now(), kResumeHost, uint32_t(s.rank), 0);
    return;
  }
  kick(s);
}

void Simulator::start_item(Stream& s) {
  StreamItem& it = s.items.front();
  const int me = s.rank;
  switch (it.kind) {
    case ItemKind::kLaunch: {
      Host& h = hosts_[std::size_t(me)];
      if (m_.team && gpu_gemm_ahead(me) && !s.sm_cleared) return wait_gpu_gemms(s);  // any rank's GEMM
      s.sm_cleared = false;
      if (!m_.team && gemms_[std::size_t(me)] > 0) {  // the GEMM holds the SMs: the blocks start when it ends
        s.waiting = true;
        sm_waiting_[std::size_t(me)].push_back(s.index);
        return;
      }
      if (h.live_blocks)
        fail(ErrorCode::kUnsupported, "rank " + std::to_string(me) + " stream " + std::to_string(s.index) +
                                          ": a kernel launch while another kernel of the rank runs (the "
                                          "simulator runs one kernel per rank at a time)");
      if (it.blocks < 1 || it.blocks > blocks_)
        fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(me) + ": a plan kernel on " +
                                              std::to_string(it.blocks) + " blocks (the call allows 1.." +
                                              std::to_string(blocks_) + ")");
      Kernel& k = kern_[std::size_t(me)];
      k.fn = it.fn;
      k.args = it.args;
      k.stream = s.index;
      k.lanes = std::min(it.lanes, lanes_);
      h.blocks = it.blocks;
      // The stream's first item starts at the kick, which already paid the call's launch latency
      // (a graph's launch or the first eager submission); a later kernel was submitted with the
      // rest of the call, so it pays only the device's gap between stream items (plan_kernel_ps_).
      start_blocks(h, s.clock, s.at_kick ? 0 : plan_kernel_ps_);
      return;  // done when its last block ends (end_block)
    }
    case ItemKind::kCopy: {
      if (it.bytes == 0) return item_done(s);
      // A team machine: a copy between ranks of one GPU is a device-to-device memcpy, which the
      // driver runs as a kernel (copy_engines.cpp): it waits for the GEMMs running on the GPU.
      if (m_.team && !s.sm_cleared && gpu_gemm_ahead(me)) {
        const Loc src = decode_host(me, s.index, it.src, it.bytes, "copy_engine");
        const Loc dst = decode_host(me, s.index, it.dst, it.bytes, "copy_engine");
        if (src.space >= 0 && dst.space >= 0 && src.space < world_ && dst.space < world_ && gpu(src.space) == gpu(me) &&
            gpu(dst.space) == gpu(me))
          return wait_gpu_gemms(s);
      }
      s.sm_cleared = false;
      ce_waiting_[std::size_t(gpu(me))].push_back(me * streams_n_ + s.index);
      return grant_copy_engines(me);
    }
    case ItemKind::kWriteFlag: {
      Snapshot snap;
      if (race_) {
        if (!s.release_snap) s.release_snap = std::make_shared<const VClock>(s.clock);
        snap = s.release_snap;
        s.tick_before_store = true;
      }
      uint32_t slice = kNoSlice;
      if (trace_)
        slice = trace_->slice(Trace::pid(me), Trace::kStreamTid + s.index, "write_flag", q_.now(), q_.now(),
                              "\"peer\":" + std::to_string(it.peer) + ",\"slot\":" + std::to_string(it.slot) +
                                  ",\"value\":" + std::to_string(it.value));
      const TimePs op = front_end(me, it.batched ? stream_batch_op_ps_ : stream_op_ps_);
      send_flag(me, FlagLand{it.peer, it.slot, it.value, std::move(snap), slice, me, s.index}, op);
      return done_after(s, op);
    }
    case ItemKind::kWaitFlag: {
      const uint64_t key = uint64_t(me) * pad::kPadSlots + it.slot;
      if (flags_[key] != it.value) {
        s.waiting = true;
        stream_waiters_[key] = &s;
        return;  // stream_flag_landed resumes it
      }
      return consume_flag(s, key);
    }
    case ItemKind::kRecord: {
      const int event = it.event;  // `it` is gone once the item is done
      EventRec& e = events_[std::size_t(me)][std::size_t(event)];
      e.done = it.seq;
      if (race_) {
        e.clock = s.clock;
        // A release for the streams that wait for it: the stream's later reads and stores are not
        // ordered before them (a new epoch), as after a write_flag.
        s.tick_before_store = true;
      }
      item_done(s);
      // Streams waiting for this record go on.
      for (int o = 0; o < streams_n_; ++o) {
        Stream& w = stream_at(me, o);
        if (w.waiting && !w.items.empty() && w.items.front().kind == ItemKind::kWaitEvent &&
            w.items.front().event == event && e.done >= w.items.front().seq)
          finish_wait_event(w);
      }
      return;
    }
    case ItemKind::kWaitEvent: {
      const EventRec& e = events_[std::size_t(me)][std::size_t(it.event)];
      if (e.done < it.seq) {
        s.waiting = true;
        return;  // the record resumes it
      }
      return finish_wait_event(s);
    }
    case ItemKind::kGemm: return start_gemm(s);
  }
}

void Simulator::finish_wait_event(Stream& s) {
  const EventRec& e = events_[std::size_t(s.rank)][std::size_t(s.items.front().event)];
  if (race_ && join(s.clock, e.clock)) s.release_snap.reset();
  item_done(s);
}

void Simulator::consume_flag(Stream& s, uint64_t key) {
  if (race_) {
    auto it = flag_snap_.find(key);
    if (it != flag_snap_.end() && it->second && join(s.clock, *it->second)) s.release_snap.reset();
  }
  if (trace_) {  // the arrow from the write_flag ends on a zero-length slice, as for blocks' waits
    auto it = flag_signal_.find(key);
    if (it != flag_signal_.end())
      trace_->arrow(it->second,
                    trace_->slice(Trace::pid(s.rank), Trace::kStreamTid + s.index, "flag seen", q_.now(), q_.now()));
  }
  flags_[key] = 0;
  done_after(s, front_end(s.rank, s.items.front().batched ? stream_batch_op_ps_ : stream_op_ps_));
}

// A stream flag operation (or a copy's cold start, copy_engines.cpp) of `rank` that takes `op` of its
// GPU's front end, one at a time over all the rank's streams: how long from now until it is done
// (its wait for the front end included).
// calibrate's plan_flag_batch rows fit it: a pair beyond the first adds two batched operations (the
// writes' batch on one stream, the waits' on another, one after the other), where streams running
// their flags side by side would add one; held out, that reading put the 4-GPU machines' host plans
// nearer (h100x4 9.4 -> 8.1 %, h200x4 8.7 -> 8.0 %; experiments/results/h200x4/README.md). On a
// team machine the front end is the GPU's, shared by every rank on it: calibrate's plan_flag, all
// ranks of one H200 at once, takes 10.2 us a call at 2 ranks and 20.1 at 4 (one rank alone: 4.5),
// a cost in proportion to the ranks whose operations queue there (fit.cpp divides it out).
TimePs Simulator::front_end(int rank, TimePs op) {
  TimePs& free = front_end_free_[std::size_t(m_.team ? gpu(rank) : rank)];
  free = std::max(free, q_.now()) + op;
  return free - q_.now();
}

void Simulator::done_after(Stream& s, TimePs ps) {
  if (ps <= 0) return item_done(s);
  q_.push(q_.now() + ps, kKernelDone, uint32_t(s.rank), uint64_t(s.index));
}

// A plan flag landed (on_flag): it must have been consumed since its last write.
void Simulator::plan_flag_landed(const FlagLand& l, uint32_t before) {
  if (before != 0)
    fail(ErrorCode::kRace, "race: rank " + std::to_string(l.from_rank) + " stream " + std::to_string(l.from_stream) +
                               "'s write_flag lands on rank " + std::to_string(l.rank) + "'s plan slot " +
                               std::to_string(l.slot) + " while it still holds " + std::to_string(before) +
                               " (written again before its waiter consumed it)");
  const uint64_t key = uint64_t(l.rank) * pad::kPadSlots + l.slot;
  auto it = stream_waiters_.find(key);
  if (it == stream_waiters_.end()) return;
  Stream& s = *it->second;
  if (flags_[key] != s.items.front().value) return;
  stream_waiters_.erase(it);
  consume_flag(s, key);
}

// ---- the transfers of streams (copy engines, GEMMs) ---------------------------------------

// A stream transfer's flow starts (after a copy engine's start-up, or a GEMM's launch or its
// previous slice).
void Simulator::start_stream_flow(uint32_t index) {
  Transfer& x = xfers_[index];
  x.issued = q_.now();
  if (x.kind == TransferKind::kCopyEngine)
    start_copy_flow(x, index);
  else
    start_gemm_flow(x, index);
  uses_.clear();
  mark_dirty();
}

Transfer& Simulator::new_stream_transfer(Stream& s, TransferKind kind, const char* name, uint32_t& index) {
  Transfer& x = take_transfer(name, index);
  x.kind = kind;
  x.stream_owner = &s;
  return x;
}

// A stream transfer's flow ended (complete): its bytes land now, or a store latency later; a
// gemm's slice that is not its last starts the next one at once (at the SMs free then).
void Simulator::complete_stream(uint32_t index) {
  Transfer& x = xfers_[index];
  if (x.kind == TransferKind::kGemm && --x.gemm_slices_left > 0) {  // as an event: no flow starts inside a resolve
    q_.push(q_.now(), kStreamFlow, 0, index);
    return;
  }
  const TimePs land_at = q_.now() + (x.posted ? store_ps_ : 0);
  if (trace_ && x.kind == TransferKind::kCopyEngine)
    trace_->slice(Trace::pid(x.stream_owner->rank), Trace::kCopyEngineTid + x.ce, x.name, x.issued, land_at,
                  "\"bytes\":" + std::to_string(x.bytes));
  q_.push(land_at, kTransferLand, 0, index);
}

// A stream transfer landed (land): a copy engine or the SMs are free again; the item is done.
void Simulator::land_stream(Transfer& x, uint32_t index) {
  Stream& s = *x.stream_owner;
  const TransferKind kind = x.kind;
  x.stream_owner = nullptr;
  free_xfers_.push_back(index);
  if (kind == TransferKind::kCopyEngine)
    copy_landed(s.rank);
  else
    gemm_landed(s.rank, x.gemm_seq);
  item_done(s);
}

}  // namespace symm::sim
