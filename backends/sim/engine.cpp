// The engine: set-up and tear-down of a run, the event loop, the block fibers (a block runs
// its program on its own fiber and yields to the engine in every verb that takes time), the
// end of a block, and deadlock reports. What the hosts do is in host.cpp; what the verbs do,
// in verbs.cpp / packets.cpp; how transfers move, in transfers.cpp.
#include <algorithm>

#include "backends/sim/recycle.h"
#include "backends/sim/simulator.h"
#include "core/reference.h"
#include "core/signal_pad.h"

namespace symm::sim {

// ---- set-up --------------------------------------------------------------------------------

// The bench times eager host-plan calls back to back (20-100 a sample up to 16M), and the host
// enqueues the next call while the GPU runs this one: with a host chain (sim.h host_*_us), such a call
// continues the chain of the call before (streams.cpp run_plan_call), and a single call is timed
// after an untimed one. Not on a team machine: there the bench times one eager plan call a sample
// and waits for it (apps/harness/cuda/bench.cpp).
bool Simulator::host_ahead(const RunSpec& spec, const Workload& work) {
  return work.on_streams() && !spec.graph && spec.machine.host_chain() && !spec.machine.team;
}

static std::vector<int> timed_calls(const RunSpec& spec, const Workload& work, std::vector<int> calls) {
  if (Simulator::host_ahead(spec, work) && calls.size() == 1) calls.insert(calls.begin(), calls.front());
  return calls;
}

Simulator::Simulator(const RunSpec& spec, Workload work, std::vector<int> call_blocks)
    : spec_(spec),
      m_(spec.machine),
      work_(work),
      call_blocks_(timed_calls(spec, work, std::move(call_blocks))),
      world_(spec.world),
      blocks_(*std::max_element(call_blocks_.begin(), call_blocks_.end())),
      lanes_(spec.lanes == 2 ? 2 : 1),
      stride_(blocks_ * lanes_),
      data_(!spec.timing_only),
      race_(!spec.timing_only && spec.race_check),
      launch_ps_(us_to_ps(spec.graph ? spec.machine.launch_graph_us : spec.machine.launch_eager_us)),
      rtt_ps_(us_to_ps(spec.machine.load_rtt_us)),
      store_ps_(us_to_ps(spec.machine.store_latency_us)),
      flag_ps_(us_to_ps(spec.machine.flag_latency_us)),
      acquire_ps_(us_to_ps(spec.machine.acquire_us)),
      peer_kernel_ps_(us_to_ps(spec.machine.peer_kernel_us)),
      stream_op_ps_(us_to_ps(spec.machine.stream_op_us)),
      stream_batch_op_ps_(us_to_ps(spec.machine.stream_batch_op_us)),
      ll_poll_ps_(us_to_ps(spec.machine.ll_poll_us)),
      local_load_ps_(us_to_ps(spec.machine.local_load_us)),
      fence_ps_(us_to_ps(spec.machine.acquire_us * spec.machine.release_fence_share)),
      acquire_wait_ps_(acquire_ps_ - fence_ps_),
      fence_gap_ps_(us_to_ps(spec.machine.fence_gap_us)),
      local_store_fence_ps_(us_to_ps(spec.machine.local_store_fence_us)),
      fence_crowd_ps_(us_to_ps(spec.machine.fence_crowd_us)),
      crowd_blocks_(spec.machine.fence_crowd_blocks),
      signal_next_ps_(us_to_ps(spec.machine.signal_next_us)),
      wait_next_ps_(us_to_ps(spec.machine.wait_next_us)),
      load_overlap_(spec.machine.load_overlap != 0),
      plan_kernel_ps_(us_to_ps(spec.machine.launch_graph_us)),
      ll_wire_(float(spec.machine.ll_wire_bytes / 8)),
      load_link_(float(spec.machine.load_link_factor)),
      block_bpp_(gbps_to_bpp(spec.machine.block_GBps)),
      block_reduce_bpp_(gbps_to_bpp(spec.machine.reduce_GBps())),
      ll_read_bpp_(gbps_to_bpp(spec.machine.ll_read_GBps)),
      net_([&] {
        std::vector<BytesPerPs> cap;
        const Machine& m = spec.machine;
        for (double g : {m.nvlink_egress_GBps, m.nvlink_ingress_GBps, m.hbm_GBps, m.nvls_GBps})
          cap.insert(cap.end(), std::size_t(spec.world), gbps_to_bpp(g));
        cap.insert(cap.end(), std::size_t(spec.world), 1.0);  // res_tensor: a GPU's whole tensor rate
        // res_l2 (used only with an L2 model: l2_MB > 0)
        cap.insert(cap.end(), std::size_t(spec.world), gbps_to_bpp(m.l2_MB > 0 ? m.l2_GBps : m.hbm_GBps));
        return cap;
      }()) {
  if (spec.serial_tail && spec.algo != nullptr)
    tail_threads_ = spec.algo->kind == EntryKind::kDeviceProgram
                        ? spec.algo->default_threads(spec.bytes, world_, call_blocks_.back())
                        : kDefaultBlockThreads;
  if (m_.load_slowdown > 0 && m_.l2_MB > 0) {  // a block's transfers slow with the GPU's memory traffic
    // load_slowdown is per TB/s (= byte/ps) of reads and writes; res_l2 counts half a unit a byte.
    for (int r = 0; r < world_; ++r) net_.set_slowdown(res_l2(r), 2 * m_.load_slowdown);
    slow_blocks_ = true;
  }
  const bool custom = work_.kind() == Workload::Kind::kCustom;
  SYMM_REQUIRE(custom ? spec.algo == nullptr : spec.algo != nullptr, ErrorCode::kInternal,
               custom ? "a custom run names no registry entry" : "no algorithm given");
  if (work_.on_streams()) {
    streams_n_ = spec.streams;
    check_streams(streams_n_, 1, "streams");
    if (m_.copy_engines < 1) fail(ErrorCode::kInvalidArgument, "machine " + m_.name + " has no copy engine");
    ce_startup_ps_ = us_to_ps(m_.ce_startup_us);
    ce_launch_ps_ = us_to_ps(m_.ce_launch_us);
    plan_launch_ps_ = us_to_ps(m_.launch_eager_us);  // streams.cpp run_plan_call
    host_chain_ = !spec.graph && m_.host_chain();    // plan_record.cpp enqueue
    // An in-process team's ranks are threads of one process: their enqueuing goes through one
    // driver one call at a time, so each item costs every rank's turn (sim.h host_scale).
    const double host_x = m_.host_scale * (m_.team ? double(spec.world) : 1.0);
    host_launch_ps_ = us_to_ps(m_.host_launch_us * host_x);
    host_copy_ps_ = us_to_ps(m_.host_copy_us * host_x);
    host_call_ps_ = us_to_ps(m_.host_call_us * host_x);
    host_event_ps_ = us_to_ps(m_.host_event_us * host_x);
    host_flag_ps_ = us_to_ps(m_.host_flag_us * host_x);
    host_flag_item_ps_ = us_to_ps(m_.host_flag_item_us * host_x);
    host_ahead_ = host_ahead(spec, work_);
    queued_start_ps_ = us_to_ps(m_.launch_graph_us);
    ce_bpp_ = gbps_to_bpp(m_.ce_GBps);
    auto link_w = [&](double link) { return m_.ce_GBps > link && link > 0 ? float(link / m_.ce_GBps) : 1.0f; };
    ce_egress_w_ = link_w(m_.nvlink_egress_GBps);
    ce_ingress_w_ = link_w(m_.nvlink_ingress_GBps);
  }
  if (custom) {  // the custom run owns the whole heap: no in / out / scratch of an entry
    in_bytes_ = out_bytes_ = scratch_bytes_ = 0;
    in_off_ = out_off_ = scratch_off_ = 0;
    heap_bytes_ = align_up(work_.custom().heap_bytes, 256);
    // Reports name its bytes as one buffer from byte 0 (`out`: scratch starts past the end).
    layout_ = HeapLayout{0, 0, heap_bytes_, heap_bytes_};
  } else {
    const AlgoInfo& a = *spec.algo;
    in_bytes_ = a.in_bytes(spec.bytes, world_);
    out_bytes_ = a.out_bytes(spec.bytes, world_);
    scratch_bytes_ = a.scratch_bytes(spec.bytes, world_);
    layout_ = heap_layout(a, spec.bytes, world_, HeapUse::kOneProgram);
    in_off_ = layout_.in;
    out_off_ = layout_.out;
    scratch_off_ = layout_.scratch;
    heap_bytes_ = layout_.total;
  }
  if (heap_bytes_ >= (uint64_t(1) << kSpaceShift))
    fail(ErrorCode::kUnsupported,
         (custom ? std::string("the call's buffers need") : "bytes=" + std::to_string(spec.bytes) + " needs") +
             " a symmetric heap of " + std::to_string(heap_bytes_ >> 30) + " GiB per rank (in, out and scratch), " +
             "over the " + std::to_string((uint64_t(1) << kSpaceShift) >> 30) +
             " GiB the simulator addresses per rank, with data or timing-only; " +
             (custom ? "lower --m, --n or --k" : "lower --bytes"));
  args_.resize(std::size_t(world_));
  for (int r = 0; r < world_ && !custom; ++r) {
    CollArgs& c = args_[r];
    c.in = reinterpret_cast<const void*>(addr(r, in_off_));
    c.out = reinterpret_cast<void*>(addr(r, out_off_));
    c.scratch = reinterpret_cast<void*>(addr(r, scratch_off_));
    c.out_mc = reinterpret_cast<void*>(addr(kMcSpace, out_off_));
    c.count = spec.algo->count(spec.bytes, spec.dtype, world_);
    c.op = spec.op;
  }
  // The L2 as a back-to-back call finds it (the bench times calls on the same buffers): where every
  // buffer of the GPU's ranks fits in it together, the previous call left them all there; where
  // they do not, its scan over more than the L2 holds left nothing this call reads first (a cycle
  // through more than an LRU cache keeps never hits). Scratch counts as far as a call fills it:
  // at most what every rank's input makes (BlockRegions' fixed regions are mostly unused).
  if (m_.l2_MB > 0) {
    l2_.assign(std::size_t(std::max(world_, m_.gpus)), L2(uint64_t(m_.l2_MB * 1e6)));
    net_.track_progress();  // held(): how much of another active read is still to come
    const uint64_t scratch_used = std::min<uint64_t>(scratch_bytes_, uint64_t(in_bytes_) * uint64_t(world_));
    // A GPU's footprint: its ranks' buffers (a custom run names none).
    std::vector<uint64_t> footprint(l2_.size(), 0);
    for (int r = 0; r < world_ && !custom; ++r) footprint[std::size_t(gpu(r))] += scratch_used + in_bytes_ + out_bytes_;
    for (auto [off, n] :
         {std::pair<uint64_t, uint64_t>{scratch_off_, scratch_used}, {in_off_, in_bytes_}, {out_off_, out_bytes_}})
      for (int r = 0; r < world_; ++r) {
        L2& c = l2_[std::size_t(gpu(r))];
        const uint64_t f = footprint[std::size_t(gpu(r))];
        if (f > 0 && f <= c.capacity()) c.touch(L2::address(r, off), L2::address(r, off) + n);
      }
  }
  // Transfers keep their staging buffers' capacity from earlier runs (no fresh pages).
  xfers_ = take_buffer<Transfer>();
  for (std::size_t i = xfers_.size(); i-- > 0;) free_xfers_.push_back(uint32_t(i));
  flags_.reset(std::size_t(world_) * pad::kPadSlots);
  use_w_.assign(std::size_t(kResourceKinds * world_), 0);
  last_load_.assign(std::size_t(3 * world_), -1);
  syncing_.assign(std::size_t(std::max(world_, m_.gpus)), 0);
  ll_waiters_.resize(std::size_t(world_));
  if (!data_) ll_landed_.resize(std::size_t(world_));
  if (data_) {
    heaps_.resize(std::size_t(world_));
    for (Heap& h : heaps_) {
      h.bytes.reset(heap_bytes_);  // every byte 0xFF (NaN in every dtype: unwritten = wrong)
      // Host plans and custom runs reach the bytes through raw pointers (ptr): all materialised.
      if (work_.on_streams()) h.bytes.all();
    }
    checks_.resize(call_blocks_.size());
    frozen_.assign(std::size_t(world_), -1);
  }
  // Race-check entities: hosts, then blocks, then (plans) streams.
  const std::size_t tids = std::size_t(world_) * (1 + std::size_t(stride_) + std::size_t(streams_n_));
  kern_.resize(std::size_t(world_));
  if (work_.on_streams()) {
    streams_.resize(std::size_t(world_) * std::size_t(streams_n_));
    events_.assign(std::size_t(world_), std::vector<EventRec>(std::size_t(kMaxEvents)));
    live_streams_.assign(std::size_t(world_), 0);
    batch_.assign(std::size_t(world_), FlagBatch{});
    front_end_free_.assign(std::size_t(world_), 0);
    host_enqueued_.assign(std::size_t(world_), 0);
    ce_busy_.assign(std::size_t(world_), 0);
    ce_rank_busy_.assign(std::size_t(world_), 0);
    ce_next_.assign(std::size_t(world_), 0);
    ce_waiting_.resize(std::size_t(world_));
    gemms_.assign(std::size_t(world_), 0);
    sm_waiting_.assign(std::size_t(world_), {});
    gpu_gemm_seq_.assign(std::size_t(world_), 0);
    gpu_gemms_.assign(std::size_t(world_), {});
    gpu_sm_waiting_.assign(std::size_t(world_), {});
    for (int r = 0; r < world_; ++r)
      for (int s = 0; s < streams_n_; ++s) {
        Stream& st = stream_at(r, s);
        st.rank = r;
        st.index = s;
        st.tid = world_ * (1 + stride_) + r * streams_n_ + s;
        if (race_) st.clock.assign(tids, 0);
      }
  }
  hosts_.resize(std::size_t(world_));
  blocks_v_.resize(std::size_t(world_) * std::size_t(stride_));
  for (int r = 0; r < world_; ++r) {
    hosts_[r].rank = r;
    if (race_) hosts_[r].clock.assign(tids, 0);
    for (int b = 0; b < stride_; ++b) {
      Block& blk = block_at(r, b);
      blk.rank = r;
      blk.index = b;
      blk.lane = b >= blocks_;
      blk.tid = world_ + r * stride_ + b;
    }
  }
  if (!spec.trace_path.empty()) {
    trace_ = std::make_unique<Trace>(spec.trace_path);
    for (int r = 0; r < world_; ++r) {
      const int pid = Trace::pid(r);
      trace_->process_name(pid, "rank " + std::to_string(r));
      trace_->thread_name(pid, Trace::kHostTid, "host");
      for (int s = 0; s < std::max(streams_n_, 1); ++s)
        trace_->thread_name(pid, Trace::kStreamTid + s, "stream " + std::to_string(s));
      if (work_.on_streams())
        for (int e = 0; e < m_.copy_engines; ++e)
          trace_->thread_name(pid, Trace::kCopyEngineTid + e, "copy engine " + std::to_string(e));
      for (int b = 0; b < stride_; ++b) trace_->thread_name(pid, Trace::block_tid(b), block_name(block_at(r, b)));
    }
  }
}

Simulator::~Simulator() {
  // Fibers still suspended (after an error) unwind their stacks here, before anything they use.
  blocks_v_.clear();
  hosts_.clear();
  flags_.release();
  give_buffer(std::move(xfers_));
}

// ---- blocks --------------------------------------------------------------------------------

void Simulator::resume(Block& b) {
  if (b.state == BlockState::kIdle) {
    b.state = BlockState::kRunning;
    b.started = q_.now();
    b.self = bc::fiber(std::allocator_arg, PooledStack{}, [this, &b](bc::fiber&& caller) {
      b.caller = std::move(caller);
      try {
        BlockCtx ctx(this, &b);
        const Kernel& k = kern_[std::size_t(b.rank)];
        k.fn(ctx, k.args);
        settle_loads(b);   // kernel end: the block's overlapped loads land first
        if (b.inflight) {  // kernel end flushes: the block's posted stores land first
          b.state = BlockState::kStores;
          yield(b);
        }
        end_block(b);
      } catch (const bc::detail::forced_unwind&) {
        throw;
      } catch (...) {
        if (!error_) error_ = std::current_exception();
      }
      b.state = BlockState::kDone;
      return std::move(b.caller);
    });
  }
  b.state = BlockState::kRunning;
  b.self = std::move(b.self).resume();
}

void Simulator::end_block(Block& b) {
  Host& h = hosts_[b.rank];
  const int from_stream = kern_[std::size_t(b.rank)].stream;
  if (race_) {  // the kernel's end joins its blocks into whoever launched it (stream order)
    VClock& into = from_stream >= 0 ? stream_at(b.rank, from_stream).clock : h.clock;
    join(into, b.clock);
    for (const Snapshot& s : b.ll_acq) join(into, *s);
    b.ll_acq.clear();
    // The stream's next release (write_flag) publishes the kernel too: not a snapshot from before.
    if (from_stream >= 0) stream_at(b.rank, from_stream).release_snap.reset();
  }
  if (trace_)
    trace_->slice(Trace::pid(b.rank), Trace::block_tid(b.index), "block", b.started, q_.now(), {},
                  /*encloses=*/true);
  if (from_stream >= 0) {  // the stream goes on from the engine, not from this block's fiber
    if (--h.live_blocks == 0) q_.push(q_.now(), kKernelDone, uint32_t(b.rank), uint64_t(from_stream));
    return;
  }
  if (--h.live_blocks == 0) {
    h.ended = q_.now();
    if (trace_)
      trace_->slice(Trace::pid(h.rank), Trace::kStreamTid, spec_.algo->id.c_str(), h.launched + launch_ps_, h.ended);
    q_.push(q_.now(), kResumeHost, uint32_t(h.rank), 0);
  }
}

// ---- the event loop --------------------------------------------------------------------------

RunResult Simulator::run() {
  for (int r = 0; r < world_; ++r) q_.push(0, kResumeHost, uint32_t(r), 0);
  Event e;
  while (!error_ && q_.pop(e)) {
    switch (e.kind) {
      case kResumeBlock: resume(blocks_v_[e.a]); break;
      case kResumeHost: resume(hosts_[e.a]); break;
      case kFlagLand: on_flag(uint32_t(e.b)); break;
      case kTransferLand: land(uint32_t(e.b)); break;
      case kNetwork: on_network(e.b); break;
      case kStreamFlow: start_stream_flow(uint32_t(e.b)); break;
      case kKickStreams: kick_streams(int(e.a)); break;
      case kKickStream: {
        Stream& s = stream_at(int(e.a), int(e.b));
        s.kick_pending = false;
        kick(s);
        break;
      }
      case kKernelDone: item_done(stream_at(int(e.a), int(e.b))); break;
    }
  }
  if (error_) std::rethrow_exception(error_);
  // A plan's stream still waiting when nothing else can happen: its flag or event never comes.
  for (int r = 0; r < int(live_streams_.size()); ++r)
    if (live_streams_[std::size_t(r)] > 0) {
      bool blocks_stuck = false;
      for (const Block& b : blocks_v_) blocks_stuck |= b.state == BlockState::kFlag || b.state == BlockState::kPackets;
      if (!blocks_stuck && !stream_deadlock())
        fail(ErrorCode::kInternal, "simulation stopped with rank " + std::to_string(r) + "'s streams unfinished");
    }
  // Blocks a call did not launch stay idle (or done from an earlier call); any other is stuck.
  for (const Block& b : blocks_v_)
    if (b.state != BlockState::kDone && b.state != BlockState::kIdle) deadlock();

  RunResult res;
  res.blocks = call_blocks_.back();
  res.events = q_.processed();
  TimePs first = hosts_[0].launched, last = hosts_[0].ended;
  for (const Host& h : hosts_) first = std::min(first, h.launched), last = std::max(last, h.ended);
  res.time_us = ps_to_us(last - first);
  res.err_bound = rel_err_bound(spec_.dtype, world_);
  if (data_) res.max_rel_err = worst_err_;  // every call's, checked as each one ended
  for (const Heap& h : heaps_) res.heap_bytes += h.bytes.pages_materialised() * HeapBytes::kPage;
  if (trace_) trace_->finish();
  return res;
}

// All ranks' outputs of one call (as each host saw them at its call's end) against
// symm::reference. all_reduce is elementwise, so it is checked a chunk at a time: the float64
// copies of 8 ranks x 1 MiB would otherwise dominate the run (and chunks under malloc's mmap

void Simulator::deadlock() {
  const Block* first = nullptr;
  int others = 0;
  for (const Block& b : blocks_v_) {
    if (b.state != BlockState::kFlag && b.state != BlockState::kPackets) continue;
    if (!first)
      first = &b;
    else
      ++others;
  }
  if (!first) fail(ErrorCode::kInternal, "simulation stopped with blocks unfinished but none waiting on a flag");
  const std::string and_others =
      " (and " + std::to_string(others) + " other blocked wait" + (others == 1 ? "" : "s") + ")";
  if (first->state == BlockState::kPackets) {
    const std::string who = "rank " + std::to_string(first->rank) + " " + block_name(*first);
    const uint64_t base = layout_.buffer_at(first->ll_buf).base;
    const std::string buf = where(first->rank, first->ll_buf);  // "rank R's scratch at byte N"
    fail(ErrorCode::kDeadlock, "deadlock: " + who + " waits in reduce_ll for epoch " + std::to_string(first->ll_epoch) +
                                   " on the packet buffer " + buf.substr(0, buf.find(" at byte")) + " bytes [" +
                                   std::to_string(first->ll_buf - base) + "," + std::to_string(first->ll_hi - base) +
                                   ") but the packet at byte " + std::to_string(first->ll_lo - base) + " " +
                                   ll_seen(first->rank, first->ll_lo) + and_others);
  }
  const uint32_t s = first->wait_slot;
  std::string slot = "slot " + std::to_string(s);
  if (s < pad::kFlagSlots) {
    const uint32_t from = s % kPadWorld, blk = (s / kPadWorld) % kPadBlocks, ch = s / (kPadWorld * kPadBlocks);
    slot += " (channel " + std::to_string(ch) + ", block " + std::to_string(blk) + ", from rank " +
            std::to_string(from) + ")";
  } else if (pad::is_plan_flag(s)) {  // a kernel acquiring a stream's progress flag (verbs.cpp wait)
    slot = pad::describe_plan_slot(s);
  }
  fail(ErrorCode::kDeadlock, "deadlock: rank " + std::to_string(first->rank) + " " + block_name(*first) + " waits on " +
                                 slot + " for value >= " + std::to_string(first->wait_value) + " but sees " +
                                 std::to_string(flags_[std::size_t(first->rank) * pad::kPadSlots + s]) + and_others);
}

}  // namespace symm::sim
