// The verbs of core/verbs.h on a block (data movement and flags), with their timing: every verb
// that takes time yields to the engine until it is done. Flagged packets are in packets.cpp.
//
// A block ends when its program returns and its stores have landed (kernel end flushes). A call
// ends when its last block has: the host then reads `out` (the output checked for that call is
// what `out` holds at that moment) and takes `in` and `out` back for its caller, so every store
// into `out` and every read of `in` / `out` by any rank must be ordered before it (race check).
//
// Visibility vs timing. With the shipped machine files (experiments/machines/*.ini, and
// tests/sim/tiny.ini) store_latency_us == flag_latency_us: a relaxed flag signalled right after a
// posted store lands at the same tick as the store, and symmetric ranks finish their stores when
// their peers do. A missing release (or a missing end barrier) therefore rarely shows up as wrong
// data; it shows up through the race check (happens-before, independent of timing), and not at
// all in timing-only runs, which check nothing.
#include <algorithm>
#include <limits>

#include "backends/sim/conv.h"
#include "backends/sim/simulator.h"
#include "core/dispatch.h"
#include "core/signal_pad.h"

namespace symm::sim {

uintptr_t Simulator::peer_addr(Block& b, uintptr_t p, int r) {
  const Loc l = decode(b, p, 0, "peer()");
  if (l.space >= world_ || r < 0 || r >= world_)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(b.rank) + " " + block_name(b) + ": peer(p, " +
                                          std::to_string(r) + ") needs a rank's symmetric address and 0 <= r < world");
  return addr(r, l.off);
}

// copy: by where its ends are,
//   remote src (load)        the block waits for the transfer, then load_rtt_us; the bytes land in
//                            dst at that moment. Source bytes are read when the verb is issued:
//                            reads see only stores that have landed.
//                            Loads from different peers overlap: a load into this rank's memory
//                            from a peer with no load of this block in flight does not wait for
//                            the round trips of the block's earlier loads (the GPU has them in
//                            flight together: they are independent, on different links), and the
//                            block goes on after its own transfer; any other verb (a load from a
//                            peer already in flight included) and the block's end first wait until
//                            every such load has landed (settle_loads). n consecutive loads from n
//                            peers thus pay their transfers and one round trip, not n. With the
//                            machine's load_overlap 0 they pay n: each copy waits for its own
//                            round trip (its stores need its loads) before the block goes on.
//   local src, remote dst    posted stores: the block spends the transfer (issue) time and its
//                            loads' round trip (local_load_us) and continues; the bytes land
//                            store_latency_us after that and stay "in flight" until then
//   local -> local           an HBM transfer and local_load_us; the bytes land when it ends
// RunSpec::serial_tail: the round trips a copy or reduce of `bytes` pays beyond one step's, on the
// CUDA kernels before the change: each thread moves `unroll` vectors a step (all loads in flight),
// then its last (vectors mod unroll) one a step; now those take one step. A block waits for its
// slowest thread: the ones with the most vectors and (when the vectors do not divide evenly) one
// fewer. 16 KiB at 512 threads: 2 vectors a thread, one trip more; 8 and 32 KiB: none.
int Simulator::tail_trips(std::size_t bytes, int unroll) const {
  if (tail_threads_ <= 0 || unroll <= 1) return 0;
  const std::size_t vecs = bytes / kVecBytes, threads = std::size_t(tail_threads_);
  const std::size_t most = (vecs + threads - 1) / threads, u = std::size_t(unroll);
  auto steps = [&](std::size_t v, bool serial) { return v / u + (serial ? v % u : std::size_t(v % u != 0)); };
  std::size_t before = steps(most, true), now = steps(most, false);
  if (most > 1 && vecs % threads != 0) {
    before = std::max(before, steps(most - 1, true));
    now = std::max(now, steps(most - 1, false));
  }
  return int(before - now);
}

void Simulator::copy(Block& b, uintptr_t dst, uintptr_t src, std::size_t bytes) {
  if (bytes == 0) return;
  const Loc s = decode(b, src, bytes, "copy"), d = decode(b, dst, bytes, "copy");
  if (s.space == kMcSpace || d.space == kMcSpace)
    fail(ErrorCode::kInvalidArgument, "copy() cannot use a multicast address (use multimem_reduce)");
  const int me = b.rank;
  const bool overlap = load_overlap_ && s.space != me && d.space == me && s.space < 64;
  if (!overlap || (b.load_peers >> s.space & 1)) settle_loads(b);
  if (s.space != me || d.space != me) touch_peer(b);
  b.fence_pending = true;
  b.stored_local |= d.space == me;
  uint32_t index;
  Transfer& x = new_transfer(b, "copy", index);
  x.remote_load = s.space != me;
  x.local_load = !x.remote_load;  // its stores wait for its local loads: local_load_us (transfers.cpp)
  x.posted = d.space != me;
  x.tail_trips = uint8_t(tail_trips(bytes, 4));  // backends/cuda/block_ctx.cuh copy: 4 vectors a step
  if (overlap) {
    x.overlapped = true;
    ++b.loads_inflight;
    b.load_peers |= uint64_t(1) << s.space;
  }
  x.dst_space = d.space;
  x.dst_off = d.off;
  x.bytes = bytes;
  if (data_) {
    if (race_) {
      access_epoch(b);
      check_read(b, s.space, s.off, bytes);
      record_read(b.tid, b.clock, s.space, s.off, bytes);
      store(b, d.space, d.off, bytes);
    }
    const uint8_t* from = read_heap(s.space, s.off, bytes);
    x.data.assign(from, from + bytes);
  }
  // A remote source's bytes take load_link_factor of the link's time per byte (machine key); a
  // source on my own GPU is an HBM read like a local one.
  add_transfer_uses(x, index, me, s, bytes, d, bytes, x.remote_load && over_link(s.space, me) ? load_link_ : 1.0f, 1);
  start_flow(b, index, block_bpp_, double(bytes));
}

// reduce<T>: one flow loading all sources at once (remote ones pay the round trip as copy's
// loads; with none remote, machine key local_load_us, sim.h), fp32
// accumulation, one rounding to T, then a store to dst with the rules of copy.
void Simulator::reduce(Block& b, DType t, uintptr_t dst, const void* const* srcs, int n, std::size_t count,
                       ReduceOp op) {
  const std::size_t bytes = count * dtype_size(t);
  if (bytes == 0) return;
  if (n < 1 || n > kPadWorld)
    fail(ErrorCode::kInvalidArgument, "reduce() needs 1.." + std::to_string(kPadWorld) + " sources");
  const int me = b.rank;
  const Loc d = decode(b, dst, bytes, "reduce");
  if (!b.touched_peer) {  // before the transfer is made: touch_peer may yield
    bool peer = d.space != me;
    for (int k = 0; k < n && !peer; ++k)
      peer = decode(b, reinterpret_cast<uintptr_t>(srcs[k]), bytes, "reduce").space != me;
    if (peer) touch_peer(b);
  }
  b.fence_pending = true;
  b.stored_local |= d.space == me;
  uint32_t index;
  Transfer& x = new_transfer(b, "reduce", index);
  x.posted = d.space != me;
  x.dst_space = d.space;
  x.dst_off = d.off;
  x.bytes = bytes;
  const void* host_src[kPadWorld];
  bool linked = false;  // a source across NVLink
  if (race_) access_epoch(b);
  for (int k = 0; k < n; ++k) {
    const Loc s = decode(b, reinterpret_cast<uintptr_t>(srcs[k]), bytes, "reduce");
    if (s.space == kMcSpace) fail(ErrorCode::kInvalidArgument, "reduce() cannot load a multicast address");
    if (s.space != me) x.remote_load = true;
    if (over_link(s.space, me)) {
      linked = true;
      add_use(res_egress(s.space), load_link_);  // machine key load_link_factor, as copy's loads
      add_use(res_ingress(me), load_link_);
    } else {
      add_use(res_hbm(me), 0.5f * l2_miss(x, index, me, s, bytes, true));
      if (!l2_.empty()) add_use(res_l2(me), 0.5);
    }
    if (data_) {
      if (race_) {
        check_read(b, s.space, s.off, bytes);
        record_read(b.tid, b.clock, s.space, s.off, bytes);
      }
      host_src[k] = read_heap(s.space, s.off, bytes);
    }
  }
  x.local_load = !x.remote_load;                                           // waits local_load_us (transfers.cpp)
  x.tail_trips = uint8_t(tail_trips(bytes, n <= 2 ? 4 : n <= 4 ? 2 : 1));  // vec_math.cuh reduce_n's steps
  if (x.posted && over_link(me, d.space)) {
    add_use(res_egress(me), 1);
    add_use(res_ingress(d.space), 1);
  } else {
    add_use(res_hbm(me), 0.5f * l2_miss(x, index, me, d, bytes, false));
    if (!l2_.empty()) add_use(res_l2(me), 0.5);
  }
  if (data_) {
    with_type(t, [&]<class T>() { reduce_data<T>(x.data, reinterpret_cast<const T* const*>(host_src), n, count, op); });
    if (race_) store(b, d.space, d.off, bytes);
  }
  // The per-block cap is on everything the block loads: n sources per unit of progress, at a
  // reduce's own rate (machine block_reduce_GBps, calibrated on one GPU: reduce_peers) when every
  // source is in its GPU's memory; with one across NVLink the links' round trips bind it as they
  // bind a copy's loads (block_GBps: the trial recorded in experiments/Makefile beside
  // REDUCE_CALIB_H200X1, where 4x H200's ld_reduce rows at 1-4 blocks ran 21-34 % slower than the
  // reduce rate said, within 12 % of the copy's).
  start_flow(b, index, (linked ? block_bpp_ : block_reduce_bpp_) / n, double(bytes));
}

// multimem_reduce<T>: one flow through the NVSwitch: loads [mc, mc+count) from every rank,
// reduces in fp32, multicasts the result back; pays the round trip like a load, and the
// multicast stores are posted.
void Simulator::multimem(Block& b, DType t, uintptr_t mc, std::size_t count, ReduceOp op) {
  const std::size_t bytes = count * dtype_size(t);
  if (bytes == 0) return;
  const Loc l = decode(b, mc, bytes, "multimem_reduce");
  if (l.space != kMcSpace)
    fail(ErrorCode::kInvalidArgument, "multimem_reduce() needs a multicast address (CollArgs::out_mc)");
  const int me = b.rank;
  touch_peer(b);
  b.fence_pending = true;
  uint32_t index;
  Transfer& x = new_transfer(b, "multimem_reduce", index);
  x.remote_load = x.posted = true;
  x.dst_space = kMcSpace;
  x.dst_off = l.off;
  x.bytes = bytes;
  // The switch pulls the range from every rank and pushes the result to every rank.
  add_use(res_nvls(me), 1);
  for (int r = 0; r < world_; ++r) {
    add_use(res_egress(r), 1);
    add_use(res_ingress(r), 1);
  }
  if (data_) {
    const void* host_src[kPadWorld];
    if (race_) access_epoch(b);
    for (int r = 0; r < world_; ++r) {
      if (race_) {
        check_read(b, r, l.off, bytes);
        record_read(b.tid, b.clock, r, l.off, bytes);
      }
      host_src[r] = read_heap(r, l.off, bytes);
    }
    with_type(
        t, [&]<class T>() { reduce_data<T>(x.data, reinterpret_cast<const T* const*>(host_src), world_, count, op); });
    if (race_)
      for (int r = 0; r < world_; ++r) store(b, r, l.off, bytes);
  }
  start_flow(b, index, block_bpp_, double(bytes));
}

// signal: costs nothing to issue; the flag lands flag_latency_us later. kRelease first waits
// until every earlier store of the block has landed (and publishes them with the flag), then, if
// the block has something to publish since its last fence (a data verb, an acquire, or its
// start), pays its fence: release_fence_share of acquire_us (machine keys), as the CUDA block
// fences once and lets later signals with nothing new in between reuse that fence; plus
// local_store_fence_us if the block stored into its own memory since its last fence (its stores'
// acknowledgement; a peer's stores it waited for above, store_latency_us); plus
// fence_gap_us for every other block of its GPU that is fencing or waiting for a flag as it starts.
void Simulator::signal(Block& b, int peer, uint32_t slot, uint32_t value, MemOrder order) {
  if (peer < 0 || peer >= world_ || slot >= pad::kFlagSlots)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(b.rank) + " " + block_name(b) +
                                          ": signal(peer=" + std::to_string(peer) + ", slot=" + std::to_string(slot) +
                                          ") is outside the world or the pad's flags");
  const TimePs t0 = q_.now();  // the slice holds the block's first reach to a peer, as copy's does
  if (peer != b.rank) touch_peer(b);
  const bool release = order == MemOrder::kRelease;
  released_ |= release;
  const bool pushed = release && b.inflight;  // its stores still on their way (fence_crowd_us below)
  if (pushed) {
    b.state = BlockState::kStores;
    yield(b);
  }
  // A signal right after the block's previous one, to another peer (a barrier's later signals),
  // pays signal_next_us to issue: the GPU's verb traces show each about 0.2 us at world 4
  // (experiments/tables/verbs_h200x4.md); the first signal's issue is part of flag_latency_us. A
  // run of signals to one peer is not charged: calibrate's acquire_peer_flags, a run of up to 32
  // to one peer before a release, grows by 0.18 us a flag on 4x H200, all of it its acquires'.
  if (b.run_kind == Block::kRunSignal && peer != b.run_peer && signal_next_ps_ > 0) {
    q_.push(q_.now() + signal_next_ps_, kResumeBlock, uint32_t(b.rank * stride_ + b.index), 0);
    b.state = BlockState::kTransfer;
    yield(b);
  }
  b.run_kind = Block::kRunSignal;
  b.run_peer = peer;
  if (release && b.fence_pending) {
    b.fence_pending = false;
    // fence_gap_us more for each other block of the GPU in a fence or a wait as this one starts.
    int& syncing = syncing_[std::size_t(m_.gpu_of(b.rank))];
    TimePs t = fence_ps_ + fence_gap_ps_ * TimePs(syncing) + (b.stored_local ? local_store_fence_ps_ : 0);
    // After an acquire of this kernel, fence_crowd_us per other syncing block (at most
    // fence_crowd_blocks), unless the block waited above for its stores to land: a push's release
    // waits for them anyway, and the crowd's cost hides behind that wait (on 4x H200 the pushes'
    // rows grow 0.3 us from 1 to 16 blocks where the pulls' grow 1.2; sim.h).
    if (b.acquired && !pushed && fence_crowd_ps_ > 0) t += fence_crowd_ps_ * TimePs(std::min(syncing, crowd_blocks_));
    b.stored_local = false;
    if (t > 0) {
      ++syncing;
      q_.push(q_.now() + t, kResumeBlock, uint32_t(b.rank * stride_ + b.index), 0);
      b.state = BlockState::kTransfer;
      yield(b);
      --syncing;
    }
  }
  Snapshot snap;
  if (race_ && release) {
    if (!b.release_snap) b.release_snap = std::make_shared<const VClock>(b.clock);
    snap = b.release_snap;
    b.tick_before_store = true;
  }
  uint32_t slice = kNoSlice;
  if (trace_)
    slice = trace_->slice(Trace::pid(b.rank), Trace::block_tid(b.index), release ? "signal.release" : "signal", t0,
                          q_.now(),
                          "\"peer\":" + std::to_string(peer) + ",\"slot\":" + std::to_string(slot) +
                              ",\"value\":" + std::to_string(value));
  send_flag(b.rank, FlagLand{peer, slot, value, std::move(snap), slice});
}

// A signal's flag lands: set it and wake the waiters it satisfies.
void Simulator::on_flag(uint32_t index) {
  FlagLand& l = lands_[index];
  const uint64_t key = uint64_t(l.rank) * pad::kPadSlots + l.slot;
  const uint32_t before = flags_[key];
  flags_[key] = l.value;
  if (race_) flag_snap_[key] = std::move(l.snap);
  if (trace_) flag_signal_[key] = l.signal_slice;
  l.snap.reset();
  free_lands_.push_back(index);
  if (pad::is_plan_flag(l.slot)) {
    plan_flag_landed(FlagLand(l), before);
    // A block may acquire a plan flag too (wait): it is woken below unless a stream consumed it.
    if (!waiters_.count(key)) return;
  }
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  // Wake every waiter the new value satisfies; keep the rest in order.
  Block** link = &it->second;
  while (*link) {
    Block* w = *link;
    if (flags_[key] >= w->wait_value) {
      *link = w->next_waiter;
      w->next_waiter = nullptr;
      q_.push(q_.now(), kResumeBlock, uint32_t(w->rank * stride_ + w->index), 0);
    } else {
      link = &w->next_waiter;
    }
  }
  if (!it->second) waiters_.erase(it);
}

// wait: blocks until the local flag >= value; kAcquire makes the stores published by the
// matching release visible. The flag is a block flag, or a plan flag (pad::plan_flag) that a
// stream's write_flag sets: a kernel that acquires a copy engine's progress flag (ag_mm's tile
// GEMM); the block only reads it, a stream consumes it later (core/plan.h).
void Simulator::wait(Block& b, uint32_t slot, uint32_t value, MemOrder order) {
  if ((slot >= pad::kFlagSlots && !pad::is_plan_flag(slot)) || slot >= pad::kPadSlots)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(b.rank) + " " + block_name(b) + ": wait(slot=" +
                                          std::to_string(slot) + ") is outside the signal pad's block and plan flags");
  const uint64_t key = uint64_t(b.rank) * pad::kPadSlots + slot;
  const TimePs t0 = q_.now();
  // A wait right after the block's wait on a flag another rank writes (a barrier's later waits) first
  // reads its flag, which takes wait_next_us, and then, if the flag has not landed, waits for it;
  // the acquire's own cost below is in that read (a further peer costs a barrier round about the
  // same relaxed or acquiring, ~0.45 us on 4x H200, where calibrate's chain of acquires of one
  // peer's flags pays 0.18 an acquire: calib.h, barrier_landing; fit.cpp).
  const int from = pad::from_of(slot);
  const bool next = b.run_kind == Block::kRunWait && from != b.run_peer && wait_next_ps_ > 0;
  b.run_kind = Block::kRunWait;
  b.run_peer = from;
  if (next) {
    q_.push(q_.now() + wait_next_ps_, kResumeBlock, uint32_t(b.rank * stride_ + b.index), 0);
    b.state = BlockState::kTransfer;
    yield(b);
  }
  if (flags_[key] < value) {
    b.wait_slot = slot;
    b.wait_value = value;
    Block*& head = waiters_[key];
    Block** tail = &head;
    while (*tail) tail = &(*tail)->next_waiter;
    *tail = &b;
    b.state = BlockState::kFlag;
    int& syncing = syncing_[std::size_t(m_.gpu_of(b.rank))];
    ++syncing;
    yield(b);
    --syncing;
  }
  // The acquire's own cost once the flag is seen (machine key acquire_us less the release's fence
  // share, release_fence_share; 0 in a machine file whose calibration has not measured it, and
  // then no event at all). What it made visible, the block's next release fences again.
  if (order == MemOrder::kAcquire) {
    b.fence_pending = true;
    b.acquired = true;
    if (!next && acquire_wait_ps_ > 0) {
      q_.push(q_.now() + acquire_wait_ps_, kResumeBlock, uint32_t(b.rank * stride_ + b.index), 0);
      b.state = BlockState::kTransfer;
      yield(b);
    }
  }
  b.last_wait = slot;
  if (race_ && order == MemOrder::kAcquire) {  // a relaxed wait joins nothing
    auto it = flag_snap_.find(key);
    if (it != flag_snap_.end() && it->second && join(b.clock, *it->second)) b.release_snap.reset();
  }
  if (trace_) {
    const int pid = Trace::pid(b.rank), tid = Trace::block_tid(b.index);
    const std::string args = "\"slot\":" + std::to_string(slot) + ",\"value\":" + std::to_string(value);
    trace_->slice(pid, tid, order == MemOrder::kRelaxed ? "wait" : "wait.acquire", t0, q_.now(), args);
    // The arrow from the signal that set the flag ends on a zero-length slice when the wait
    // returns (Perfetto binds arrow ends in time order: the wait itself may start before it).
    auto it = flag_signal_.find(key);
    if (it != flag_signal_.end())
      trace_->arrow(it->second, trace_->slice(pid, tid, "flag seen", q_.now(), q_.now(), args));
  }
}

// advance: the block's epoch counter, read and bumped in its own memory (one fiber is the whole
// block: no race): a local load's round trip (machine key local_load_us), as the GPU's verb traces
// show it, 0.20-0.54 us a call (experiments/tables/verbs_*.md; the CUDA threads read the counter
// themselves, so nothing else is in it).
uint32_t Simulator::advance(Block& b, uint32_t slot) {
  if (slot >= pad::kPadSlots)
    fail(ErrorCode::kInvalidArgument, "advance(slot=" + std::to_string(slot) + ") is outside the signal pad");
  const uint32_t v = ++flags_[uint64_t(b.rank) * pad::kPadSlots + slot];
  const TimePs t0 = q_.now();
  if (local_load_ps_ > 0) {
    q_.push(q_.now() + local_load_ps_, kResumeBlock, uint32_t(b.rank * stride_ + b.index), 0);
    b.state = BlockState::kTransfer;
    yield(b);
  }
  if (trace_)
    trace_->slice(Trace::pid(b.rank), Trace::block_tid(b.index), "advance", t0, q_.now(),
                  "\"slot\":" + std::to_string(slot) + ",\"value\":" + std::to_string(v));
  return v;
}

}  // namespace symm::sim
