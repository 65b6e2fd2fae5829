// The host of each rank: a fiber per rank that runs the rank's host-side plan. Today the plan
// is one kernel per call: write fresh inputs, launch (blocks start launch latency later, with
// the host's clock), wait for the stream (the kernel's last block), then end the call (the
// caller takes `in` and `out` back; see the race check in memory.cpp). Host-side verbs (streams,
// copy engines, GEMMs) belong here.
#include <cstring>

#include "backends/sim/conv.h"
#include "backends/sim/recycle.h"
#include "backends/sim/simulator.h"
#include "core/dispatch.h"

namespace symm::sim {
void Simulator::resume(Host& h) {
  if (!h.self) {
    h.self = bc::fiber(std::allocator_arg, PooledStack{}, [this, &h](bc::fiber&& caller) {
      h.caller = std::move(caller);
      try {
        host_plan(h);
      } catch (const bc::detail::forced_unwind&) {
        throw;
      } catch (...) {
        if (!error_) error_ = std::current_exception();
      }
      return std::move(h.caller);
    });
  }
  h.self = std::move(h.self).resume();
}

// One host plan per rank: for each call, fresh inputs, launch, wait for the stream. Later
// plans (copy engines, stream flags, GEMMs) add host verbs here.
void Simulator::host_plan(Host& h) {
  for (int call = 0; call < int(call_blocks_.size()); ++call) {
    h.call = call;
    h.blocks = call_blocks_[std::size_t(call)];
    const bool custom = work_.kind() == Workload::Kind::kCustom;
    if (data_ && custom) {
      // The previous call's check waits for a slower rank: keep this rank's heap as it ended.
      if (frozen_[std::size_t(h.rank)] >= 0) keep_heap(h.rank);
      work_.custom().write_inputs(h.rank, ptr(h.rank, 0));
    } else if (data_) {
      with_type(spec_.dtype, [&]<class T>() { write_inputs<T>(h, call); });
    }
    if (work_.on_streams()) {
      run_plan_call(h);
      end_call(h);
      continue;
    }
    launch(h);
    h.caller = std::move(h.caller).resume();  // until the kernel's last block ends
    end_call(h);
  }
}

// The kernel of rank h's current call has ended and the host resumes: the caller gets `out`
// (and may overwrite `in` and `out` from now on). See the race check in memory.cpp.
void Simulator::end_call(Host& h) {
  if (trace_)
    trace_->slice(Trace::pid(h.rank), Trace::kHostTid, "call", h.launched, q_.now(),
                  "\"call\":" + std::to_string(h.call), /*encloses=*/true);
  const int r = h.rank;
  if (race_) {
    check_read(r, h.clock, nullptr, r, out_off_, out_bytes_);
    ++h.clock[r];
    h.tick_before_store = false;
    store(r, h.clock, r, in_off_, in_bytes_, /*call_end=*/true);
    store(r, h.clock, r, out_off_, out_bytes_, /*call_end=*/true);
  }
  const bool custom = work_.kind() == Workload::Kind::kCustom;
  if (!data_ || (!custom && spec_.algo->op == Op::kBarrier)) return;
  // Rank r's output of this call is what `out` holds now: kept there until something writes it.
  const int call = h.call;
  frozen_[r] = call;
  CallCheck& c = checks_[std::size_t(call)];
  if (++c.ended < world_) return;
  if (custom) {
    std::vector<const uint8_t*> heaps;
    for (int q = 0; q < world_; ++q)
      heaps.push_back(c.out.empty() || c.out[std::size_t(q)].empty() ? ptr(q, 0) : c.out[std::size_t(q)].data());
    worst_err_ = std::max(worst_err_, work_.custom().check(heaps));
  } else {
    worst_err_ = std::max(worst_err_, check_outputs(call));
  }
  c = CallCheck{};
  for (int& f : frozen_)
    if (f == call) f = -1;
}

template <class T>
void Simulator::write_inputs(Host& h, int call) {
  const int r = h.rank;
  const std::size_t n = in_bytes_ / sizeof(T);
  T* p = reinterpret_cast<T*>(heaps_[r].bytes.write(in_off_, in_bytes_));
  // Not kept: check_outputs draws the same values again (input_stream / draw_input), which
  // costs less than 4 bytes per element of fresh memory per rank.
  if (spec_.user_in.empty())
    draw_inputs<T>(input_stream(call, r), 0, n, p);
  else
    std::memcpy(p, spec_.user_in[std::size_t(r)], in_bytes_);
  // The previous call's output is garbage for this one: poison it so an unwritten element fails.
  keep_output(r);
  heaps_[r].bytes.poison(out_off_, out_bytes_);
  if (race_) {
    if (h.tick_before_store) ++h.clock[r], h.tick_before_store = false;
    store(r, h.clock, r, in_off_, in_bytes_);
    store(r, h.clock, r, out_off_, out_bytes_);
  }
}

void Simulator::launch(Host& h) {
  h.launched = q_.now();
  kern_[std::size_t(h.rank)] = Kernel{work_.program(), args_[std::size_t(h.rank)], -1};
  start_blocks(h, h.clock, launch_ps_);
  h.tick_before_store = true;  // host stores after the launch are not ordered before it
}

// The blocks start `delay` from now: launch latency for a device program's call and for a plan's
// later kernels; 0 for a plan kernel that is its stream's first item (the call's launch, paid by
// the streams' kick, is its launch).
// With side lanes (Kernel::lanes 2) every block's lane starts with it, at index blocks_ + b.
void Simulator::start_blocks(Host& h, const VClock& parent, TimePs delay) {
  const int lanes = kern_[std::size_t(h.rank)].lanes;
  h.live_blocks = h.blocks * lanes;
  const TimePs start = q_.now() + delay;
  Snapshot launch_snap;
  if (race_) launch_snap = std::make_shared<const VClock>(parent);
  for (int i = 0; i < h.blocks * lanes; ++i) {
    const int b = i < h.blocks ? i : blocks_ + i - h.blocks;
    Block& blk = block_at(h.rank, b);
    blk.state = BlockState::kIdle;
    blk.inflight = 0;
    blk.loads_inflight = 0;
    blk.load_peers = 0;
    blk.touched_peer = false;
    blk.fence_pending = true;
    blk.acquired = false;
    blk.stored_local = false;
    blk.run_kind = Block::kRunOther;
    blk.last_wait = UINT32_MAX;
    if (race_) {
      blk.clock = parent;
      blk.release_snap.reset();
      blk.tick_before_store = true;
      blk.launch_snap = launch_snap;
      blk.ll_acq.clear();
    }
    q_.push(start, kResumeBlock, uint32_t(h.rank * stride_ + b), 0);
  }
  if (trace_) trace_->slice(Trace::pid(h.rank), Trace::kHostTid, "launch", q_.now(), start);
}

}  // namespace symm::sim
