// Host plans: the streams of each rank run what a plan enqueued (streams.h), one item at a time.
//
// What each item costs, and when its effects become visible:
//   launch      the kernel's blocks start launch latency later (graph or eager, as for device
//               programs) from the stream's clock; the item is done when its last block has
//               ended (kernel end: its stores have landed) and the blocks' clocks join the stream.
//               One kernel per rank at a time (the plans of core/ launch on one stream).
//   copy_engine waits for a free copy engine of the rank (the machine's copy_engines), then
//               ce_startup_us, then one flow at up to ce_GBps through the network: a remote
//               source on its egress and my ingress, a remote destination on my egress and its
//               ingress, local sides on my HBM, shared max-min fairly with every other transfer
//               (SM traffic included). The source is read when the flow starts; the bytes land
//               in the destination when it ends (store_latency_us later for a remote one), and
//               the item is done then.
//   write_flag  release: runs once the stream's earlier items are done (stream order), takes a
//               snapshot of the stream's clock; the flag lands flag_latency_us later (at once on
//               the own rank). A plan flag that lands while it still holds a value (not consumed)
//               is a plan bug, reported (kRace).
//   wait_flag   done when the local flag == value: joins the snapshot the flag carried (acquire),
//               then resets it to 0 (consumed). Never satisfied: a deadlock naming rank, stream,
//               slot, expected and seen value.
//               Both flag items take stream_op_us of the stream's time (the write's flag leaves
//               after it; the wait's stream goes on after it): calibrate's plan_flag row.
//   record      free; the event holds the stream's clock. wait_event: done once that record ran,
//               joining its clock.
//   gemm        one flow on my HBM of the bytes of A, B and C, capped so that alone it takes
//               Machine::gemm_time_us (a fixed cost + whole waves of output tiles at the
//               machine file's matmul rate + the operands' bytes at a streaming rate, fitted to
//               a cuBLASLt sweep), after launch latency;
//               C may be a peer's (its tiles stored over NVLink: C's share of the flow also uses
//               my egress and the peer's ingress);
//               with data, C = A x B in fp32 (Eigen), stored as the element type when it ends.
//               SMs (measured on one H200, experiments/results/h200x1/calibrate_h200x1.csv,
//               conc_* rows: a copy kernel launched beside a running cuBLASLt GEMM ends after
//               the GEMM, which is not slowed; a copy kernel launched first keeps its speed and
//               the GEMM after it takes 7-13% longer): a kernel launched while a GEMM of the
//               rank runs starts when the GEMM ends; a GEMM runs in kGemmSlices equal slices,
//               each at the rate of the SMs no kernel of the rank holds when it starts
//               (sms - B of sms). (The data also show the copy running 2.6-4x its own time after
//               the GEMM ends; not modelled.)
#include <Eigen/Core>
#include <algorithm>
#include <cstring>

#include "backends/sim/conv.h"
#include "backends/sim/simulator.h"
#include "core/dispatch.h"
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

// ---- the engine's side ---------------------------------------------------------------------

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
  for (int s = 0; s < streams_n_; ++s) {
    Stream& st = stream_at(r, s);
    if (race_) {
      join(st.clock, h.clock);
      st.tick_before_store = true;
    }
  }
  PlanArgs pa;
  pa.coll = args_[std::size_t(r)];
  pa.chunk_bytes = spec_.chunk_bytes;
  pa.sm_percent = spec_.sm_percent;
  pa.blocks = h.blocks;
  SimHost host(this, r, streams_n_);
  if (custom_)
    custom_->plan(host, reinterpret_cast<char*>(addr(r, 0)));
  else
    plan_fn_(host, pa);
  h.launched = q_.now();
  h.tick_before_store = true;
  live_streams_[std::size_t(r)] = 0;
  for (int s = 0; s < streams_n_; ++s)
    if (!stream_at(r, s).items.empty()) ++live_streams_[std::size_t(r)];
  if (live_streams_[std::size_t(r)] == 0) return;
  // The streams start launch latency from now: a graph's launch, or the first eager submission.
  q_.push(q_.now() + launch_ps_, kKickStreams, uint32_t(r), 0);
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
  for (int s : order) kick(stream_at(rank, s));
}

// Starts the stream's next item if it is idle (items that take no time run in a loop).
void Simulator::kick(Stream& s) {
  while (!s.busy && !s.items.empty()) {
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
  s.items.pop_front();
  s.busy = s.waiting = false;
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
      if (gemms_[std::size_t(me)] > 0) {  // the GEMM holds the SMs: the blocks start when it ends
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
      h.blocks = it.blocks;
      start_blocks(h, s.clock);
      return;  // done when its last block ends (end_block)
    }
    case ItemKind::kCopy: {
      if (it.bytes == 0) return item_done(s);
      ce_waiting_[std::size_t(me)].push_back(s.index);
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
      send_flag(me, FlagLand{it.peer, it.slot, it.value, std::move(snap), slice, me, s.index}, stream_op_ps_);
      return done_after(s, stream_op_ps_);
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
      if (race_) e.clock = s.clock;
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
  done_after(s, stream_op_ps_);
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

// ---- copy engines ----------------------------------------------------------------------------

void Simulator::grant_copy_engines(int rank) {
  std::deque<int>& waiting = ce_waiting_[std::size_t(rank)];
  while (!waiting.empty() && ce_busy_[std::size_t(rank)] < m_.copy_engines) {
    Stream& s = stream_at(rank, waiting.front());
    waiting.pop_front();
    const int engine = ce_next_[std::size_t(rank)]++ % m_.copy_engines;
    ++ce_busy_[std::size_t(rank)];
    start_copy(s, engine);
  }
}

void Simulator::start_copy(Stream& s, int engine) {
  StreamItem& it = s.items.front();
  const int me = s.rank;
  const Loc src = decode_host(me, s.index, it.src, it.bytes, "copy_engine");
  const Loc dst = decode_host(me, s.index, it.dst, it.bytes, "copy_engine");
  uint32_t index;
  Transfer& x = new_stream_transfer(s, "copy_engine", index);
  x.remote_load = src.space != me;
  x.posted = dst.space != me;
  x.dst_space = dst.space;
  x.dst_off = dst.off;
  x.bytes = it.bytes;
  x.ce = engine;
  x.src_space = src.space;
  x.src_off = src.off;
  // The engine's start-up, then the flow (started by on_stream_start).
  q_.push(q_.now() + ce_startup_ps_, kStreamFlow, 0, index);
}

// A copy engine's flow starts: its source is read now.
void Simulator::start_stream_flow(uint32_t index) {
  Transfer& x = xfers_[index];
  Stream& s = *x.stream_owner;
  const int me = s.rank;
  x.issued = q_.now();
  if (x.ce >= 0) {
    if (data_) {
      if (race_) {
        stream_epoch(s);
        check_stream_read(s, x.src_space, x.src_off, x.bytes);
        record_read(s.tid, s.clock, x.src_space, x.src_off, x.bytes);
        store(s.tid, s.clock, x.dst_space, x.dst_off, x.bytes);
      }
      x.data.assign(ptr(x.src_space, x.src_off), ptr(x.src_space, x.src_off) + x.bytes);
    }
    add_transfer_uses(x, me, x.src_space, x.dst_space, 1, 1);
    if (use_w_[res_hbm(me)] == 0)
      uses_.erase(std::remove_if(uses_.begin(), uses_.end(), [&](const Use& u) { return u.res == res_hbm(me); }),
                  uses_.end());
    for (Use& u : uses_) u.weight = use_w_[u.res], use_w_[u.res] = 0;
    net_.start(q_.now(), uses_, ce_bpp_, double(x.bytes), index);
  } else {  // gemm: HBM traffic, capped at the compute rate on the SMs no kernel holds now
    // Weight 1/2: each operand byte is one read or one write, and hbm_GBps counts a copy's bytes
    // (a read and a write each), as a local copy's flow does (add_transfer_uses).
    add_use(res_hbm(me), 0.5f);
    if (x.dst_space != me) {  // C's share of the flow crosses NVLink
      const float w = float(double(x.gemm_c_bytes) / double(x.bytes));
      add_use(res_egress(me), w);
      add_use(res_ingress(x.dst_space), w);
    }
    for (Use& u : uses_) u.weight = use_w_[u.res], use_w_[u.res] = 0;
    const Host& h = hosts_[std::size_t(me)];
    const int held = h.live_blocks ? std::min(h.blocks, m_.sms - 1) : 0;
    const double share = double(m_.sms - held) / double(m_.sms);
    net_.start(q_.now(), uses_, BytesPerPs(x.gemm_cap * share), double(x.bytes) / kGemmSlices, index);
  }
  uses_.clear();
  mark_dirty();
}

Transfer& Simulator::new_stream_transfer(Stream& s, const char* name, uint32_t& index) {
  Transfer& x = take_transfer(name, index);
  x.stream_owner = &s;
  return x;
}

// A stream transfer's flow ended (complete): its bytes land now, or a store latency later; a
// gemm's slice that is not its last starts the next one at once (at the SMs free then).
void Simulator::complete_stream(uint32_t index) {
  Transfer& x = xfers_[index];
  if (x.ce < 0 && --x.gemm_slices_left > 0) {  // as an event: no flow starts inside a resolve
    q_.push(q_.now(), kStreamFlow, 0, index);
    return;
  }
  const TimePs land_at = q_.now() + (x.posted ? store_ps_ : 0);
  if (trace_ && x.ce >= 0)
    trace_->slice(Trace::pid(x.stream_owner->rank), Trace::kCopyEngineTid + x.ce, x.name, x.issued, land_at,
                  "\"bytes\":" + std::to_string(x.bytes));
  q_.push(land_at, kTransferLand, 0, index);
}

// A stream transfer landed (land): the item is done; a copy engine is free again.
void Simulator::land_stream(Transfer& x, uint32_t index) {
  Stream& s = *x.stream_owner;
  const int ce = x.ce;
  x.stream_owner = nullptr;
  free_xfers_.push_back(index);
  if (ce >= 0) {
    --ce_busy_[std::size_t(s.rank)];
    grant_copy_engines(s.rank);
  }
  // A GEMM's end frees the SMs first: a kernel that waited for them starts before the stream's
  // next item (a next GEMM then gets the SMs the kernel leaves), as the block scheduler serves
  // work in the order it was launched.
  if (ce < 0 && --gemms_[std::size_t(s.rank)] == 0) {
    std::deque<int>& w = sm_waiting_[std::size_t(s.rank)];
    while (!w.empty()) {
      Stream& k = stream_at(s.rank, w.front());
      w.pop_front();
      k.waiting = false;
      start_item(k);
    }
  }
  item_done(s);
}

// ---- gemm --------------------------------------------------------------------------------------

namespace {
template <class T>
void gemm_data(const uint8_t* a, const uint8_t* b, const uint8_t* c_in, uint8_t* c, const GemmArgs& g) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Mat A(g.m, g.k), B(g.k, g.n);
  const T* pa = reinterpret_cast<const T*>(a);
  const T* pb = reinterpret_cast<const T*>(b);
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.k; ++j) A(i, j) = Conv<T>::load(pa[std::size_t(i) * g.lda + std::size_t(j)]);
  for (int i = 0; i < g.k; ++i)
    for (int j = 0; j < g.n; ++j) B(i, j) = Conv<T>::load(pb[std::size_t(i) * g.ldb + std::size_t(j)]);
  Mat C = A * B;
  if (c_in) {
    const T* pi = reinterpret_cast<const T*>(c_in);
    for (int i = 0; i < g.m; ++i)
      for (int j = 0; j < g.n; ++j) C(i, j) += Conv<T>::load(pi[std::size_t(i) * g.ldc + std::size_t(j)]);
  }
  T* pc = reinterpret_cast<T*>(c);
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) pc[std::size_t(i) * g.n + std::size_t(j)] = Conv<T>::store(C(i, j));
}
}  // namespace

void Simulator::start_gemm(Stream& s) {
  const GemmArgs& g = s.items.front().gemm;
  const int me = s.rank;
  const std::size_t es = dtype_size(g.dtype);
  const std::size_t a_bytes = ((std::size_t(g.m) - 1) * g.lda + std::size_t(g.k)) * es;
  const std::size_t b_bytes = ((std::size_t(g.k) - 1) * g.ldb + std::size_t(g.n)) * es;
  const std::size_t c_bytes = std::size_t(g.m) * std::size_t(g.n) * es;
  const Loc la = decode_host(me, s.index, reinterpret_cast<uintptr_t>(g.a), 0, "gemm A");
  const Loc lb = decode_host(me, s.index, reinterpret_cast<uintptr_t>(g.b), 0, "gemm B");
  const Loc lc = decode_host(me, s.index, reinterpret_cast<uintptr_t>(g.c), 0, "gemm C");
  const Loc li = g.c_in ? decode_host(me, s.index, reinterpret_cast<uintptr_t>(g.c_in), 0, "gemm C_in") : la;
  for (const Loc* l : {&la, &lb, &li})
    if (l->space != me)
      fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(me) + ": gemm A, B and C_in must be local memory");
  if (g.c_in && li.off + c_bytes > heap_bytes_)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(me) + ": gemm C_in outside the symmetric heap");
  if (lc.space < 0 || lc.space >= world_)  // C may be a peer's: the epilogue stores over NVLink
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(me) + ": gemm C must be a rank's memory");
  if (la.off + a_bytes > heap_bytes_ || lb.off + b_bytes > heap_bytes_ || lc.off + c_bytes > heap_bytes_)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(me) + ": gemm operands outside the symmetric heap");
  uint32_t index;
  Transfer& x = new_stream_transfer(s, "gemm", index);
  x.dst_space = lc.space;
  x.dst_off = lc.off;
  x.bytes = a_bytes + b_bytes + c_bytes * (g.c_in ? 2 : 1);  // HBM traffic of one pass over the operands
  const double compute_ps = m_.gemm_time_us(g.m, g.n, g.k, double(es)) * 1e6;
  x.gemm_slices_left = kGemmSlices;
  ++gemms_[std::size_t(me)];
  x.gemm_cap = BytesPerPs(double(x.bytes) / std::max(compute_ps, 1.0));
  x.gemm_c_bytes = c_bytes;
  if (data_) {
    if (race_) {
      stream_epoch(s);
      for (int i = 0; i < g.m; ++i) {
        const uint64_t off = la.off + std::size_t(i) * g.lda * es;
        check_stream_read(s, me, off, std::size_t(g.k) * es);
        record_read(s.tid, s.clock, me, off, std::size_t(g.k) * es);
      }
      for (int i = 0; i < g.k; ++i) {
        const uint64_t off = lb.off + std::size_t(i) * g.ldb * es;
        check_stream_read(s, me, off, std::size_t(g.n) * es);
        record_read(s.tid, s.clock, me, off, std::size_t(g.n) * es);
      }
      if (g.c_in) {
        check_stream_read(s, me, li.off, c_bytes);
        record_read(s.tid, s.clock, me, li.off, c_bytes);
      }
      store(s.tid, s.clock, lc.space, lc.off, c_bytes);
    }
    x.data.resize(c_bytes);
    with_type(g.dtype, [&]<class T>() {
      gemm_data<T>(ptr(me, la.off), ptr(me, lb.off), g.c_in ? ptr(me, li.off) : nullptr, x.data.data(), g);
    });
  }
  q_.push(q_.now() + launch_ps_, kStreamFlow, 0, index);
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
