// Transfers: every verb's data movement is one transfer, run as one flow in the flow network
// (flow_net.h) on the source GPUs' NVLink egress, the destination's ingress, local HBM and
// (multimem) the NVSwitch, capped per block. Resources are a GPU's (simulator.h res_*): ranks on
// one GPU (a team machine) share them, and bytes between them stay on its HBM. A flow's end
// completes the transfer (the issuing block resumes, after a load round trip if it loaded
// remotely); its bytes land in the destination then, or store_latency_us later for posted stores.
// The network is re-solved once per tick in which flows started or ended; with a trace, link use
// is written as it changes.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/sim/simulator.h"

namespace symm::sim {

// A free transfer slot, reset (recycled transfers come from blocks, streams or an earlier run).
Transfer& Simulator::take_transfer(const char* name, uint32_t& index) {
  if (free_xfers_.empty()) {
    free_xfers_.push_back(uint32_t(xfers_.size()));
    xfers_.emplace_back();
  }
  index = free_xfers_.back();
  free_xfers_.pop_back();
  Transfer& x = xfers_[index];
  x.kind = TransferKind::kBlock;
  x.owner = nullptr;
  x.stream_owner = nullptr;
  x.ce = 0;
  x.name = name;
  x.issued = q_.now();
  x.remote_load = x.posted = x.ll = x.overlapped = x.local_load = false;
  x.slice = kNoSlice;
  x.rows = 0;
  x.l2_gpus.clear();
  return x;
}

Transfer& Simulator::new_transfer(Block& b, const char* name, uint32_t& index) {
  Transfer& x = take_transfer(name, index);
  x.owner = &b;
  return x;
}

// A flag store (a block's signal or a stream's write_flag) lands flag_latency_us from now (at
// once on the own rank).
void Simulator::send_flag(int from_rank, FlagLand l, TimePs after) {
  if (free_lands_.empty()) {
    free_lands_.push_back(uint32_t(lands_.size()));
    lands_.emplace_back();
  }
  const uint32_t li = free_lands_.back();
  free_lands_.pop_back();
  const int to = l.rank;
  lands_[li] = std::move(l);
  q_.push(q_.now() + after + (to == from_rank ? 0 : flag_ps_), kFlagLand, 0, li);
}

void Simulator::add_use(uint32_t res, float w) {
  if (w == 0) return;
  if (use_w_[res] == 0) uses_.push_back(Use{res, 0});
  use_w_[res] += w;
}

void Simulator::start_flow(Block& b, uint32_t index, BytesPerPs cap, double size) {
  for (Use& u : uses_) u.weight = use_w_[u.res], use_w_[u.res] = 0;
  net_.start(q_.now(), uses_, cap, size, index, slow_blocks_ ? int32_t(res_l2(b.rank)) : -1);
  uses_.clear();
  mark_dirty();
  if (xfers_[index].posted) ++b.inflight;
  b.state = BlockState::kTransfer;
  yield(b);
}

void Simulator::mark_dirty() {
  if (net_dirty_) return;
  net_dirty_ = true;
  q_.push(q_.now(), kNetwork, 0, ++net_gen_, /*late=*/true);
}

void Simulator::on_network(uint64_t gen) {
  if (gen != net_gen_) return;  // superseded by a later re-solve
  net_dirty_ = false;
  done_.clear();
  const TimePs next = net_.resolve(q_.now(), done_);
  for (uint64_t token : done_) complete(uint32_t(token));
  if (next >= 0) q_.push(next, kNetwork, 0, ++net_gen_, /*late=*/true);
  if (trace_) {
    const std::vector<double>& load = net_.load();
    for (int g = 0; g < world_; ++g) {
      // One counter track per GPU and direction, written when its value changes (bytes/ps -> GB/s).
      const uint32_t res[3] = {res_egress(g), res_ingress(g), res_hbm(g)};
      const char* name[3] = {"nvlink egress", "nvlink ingress", "hbm"};
      for (int k = 0; k < 3; ++k) {
        const double v = load[res[k]] * 1e3;
        if (v == last_load_[3 * g + k]) continue;
        last_load_[3 * g + k] = v;
        trace_->counter(Trace::pid(g), name[k], q_.now(), v);
      }
    }
  }
}

void Simulator::complete(uint32_t index) {
  Transfer& x = xfers_[index];
  if (!x.l2_gpus.empty()) l2_done(x, index);
  if (x.kind != TransferKind::kBlock) return complete_stream(index);
  // An overlapped load (verbs.cpp, copy): the block goes on once the bytes have crossed; they land
  // (and a verb that needs them waits, settle_loads) a round trip later. A copy or reduce of
  // local sources only waits local_load_us instead (sim.h).
  // A serial tail (RunSpec::serial_tail) pays the remote round trip again for each of its extra
  // steps; a tail of local loads does not show on the GPU (stores to peers, local copies: sim.h).
  const TimePs tail = x.remote_load ? rtt_ps_ * x.tail_trips : 0;
  const TimePs landed_at = q_.now() + tail + (x.remote_load ? rtt_ps_ : x.local_load ? local_load_ps_ : 0);
  const TimePs resume_at = x.overlapped ? q_.now() + tail : landed_at;
  if (trace_) {
    x.slice = trace_->slice(Trace::pid(x.owner->rank), Trace::block_tid(x.owner->index), x.name, x.issued, resume_at,
                            "\"bytes\":" + std::to_string(x.bytes));
  }
  if (x.posted) {
    q_.push(resume_at, kResumeBlock, uint32_t(x.owner->rank * stride_ + x.owner->index), 0);
    // Flagged packets are relaxed stores that the reader polls for, as a relaxed flag is: they
    // become visible a flag's one-way latency after they leave (the relaxed ping-pong measures
    // exactly that); other posted stores land store_latency_us later (before a release orders them).
    q_.push(resume_at + (x.ll ? flag_ps_ : store_ps_), kTransferLand, 0, index);
  } else if (x.overlapped) {
    q_.push(resume_at, kResumeBlock, uint32_t(x.owner->rank * stride_ + x.owner->index), 0);
    q_.push(landed_at, kTransferLand, 0, index);
  } else {
    q_.push(resume_at, kTransferLand, 0, index);
  }
}

void Simulator::land(uint32_t index) {
  Transfer& x = xfers_[index];
  // What lands: the bytes moved, but for a gemm only C (its flow counted A, B and C).
  const std::size_t lands = x.kind == TransferKind::kGemm ? x.gemm_c_bytes : x.bytes;
  if (data_) {
    if (!x.rows) keep_outputs_under(x.dst_space, x.dst_off, lands);
    if (x.rows) {  // strided (mma_tile's C): row by row
      for (uint32_t i = 0; i < x.rows; ++i) {
        const uint64_t off = x.dst_off + uint64_t(i) * x.dst_pitch;
        keep_outputs_under(x.dst_space, off, x.row_bytes);
        std::memcpy(heaps_[x.dst_space].bytes.write(off, x.row_bytes), x.data.data() + i * x.row_bytes, x.row_bytes);
      }
    } else if (x.ll) {
      land_ll(x);
    } else if (x.dst_space == kMcSpace) {
      for (int r = 0; r < world_; ++r) std::memcpy(heaps_[r].bytes.write(x.dst_off, lands), x.data.data(), lands);
    } else {
      std::memcpy(heaps_[x.dst_space].bytes.write(x.dst_off, lands), x.data.data(), lands);
    }
  }
  if (x.kind != TransferKind::kBlock) return land_stream(x, index);
  if (x.ll) ll_landed(x);
  Block& b = *x.owner;
  free_xfers_.push_back(index);
  if (x.overlapped) {
    if (--b.loads_inflight == 0) {
      b.load_peers = 0;
      if (b.state == BlockState::kLoads) resume(b);
    }
  } else if (!x.posted) {
    resume(b);
  } else if (--b.inflight == 0 && b.state == BlockState::kStores) {
    resume(b);
  }
}

void Simulator::add_transfer_uses(Transfer& x, uint32_t index, int me, Loc src, std::size_t src_bytes, Loc dst,
                                  std::size_t dst_bytes, float load_w, float store_w) {
  // A peer on my own GPU (a team machine) is not across NVLink: its side is my GPU's HBM.
  const bool link_load = x.remote_load && over_link(src.space, me), link_store = x.posted && over_link(me, dst.space);
  if (link_load) {
    add_use(res_egress(src.space), load_w);
    add_use(res_ingress(me), load_w);
  }
  if (link_store) {
    add_use(res_egress(me), store_w);
    add_use(res_ingress(dst.space), store_w);
  }
  // HBM is rated for copies (read + write): a local read or a local write alone is half, of the
  // bytes the L2 does not hold.
  const float load_local = link_load ? 0 : load_w / 2, store_local = link_store ? 0 : store_w / 2;
  add_use(res_hbm(me), (load_local > 0 ? load_local * l2_miss(x, index, me, src, src_bytes, true) : 0) +
                           (store_local > 0 ? store_local * l2_miss(x, index, me, dst, dst_bytes, false) : 0));
  if (!l2_.empty()) add_use(res_l2(me), load_local + store_local);
}

float Simulator::l2_miss(Transfer& x, uint32_t index, int me, Loc l, std::size_t bytes, bool read) {
  if (l2_.empty() || bytes == 0 || l.space == kMcSpace) return 1;
  const int g = gpu(me);
  L2& c = l2_[std::size_t(g)];
  const uint64_t b = L2::address(l.space, l.off), e = b + bytes;
  const uint64_t held = c.held(b, e, index, [&](uint32_t t) { return net_.remaining(t, q_.now()); });
  // Touched as it starts: its bytes stream through the L2 while it runs, beside those of every
  // transfer running with it, so a range the GPU's concurrent transfers have since pushed past
  // l2_MB is gone by the time the next transfer asks for it.
  c.touch(b, e);
  if (read) {
    c.begin_read(index, b, e);
    if (std::find(x.l2_gpus.begin(), x.l2_gpus.end(), g) == x.l2_gpus.end()) x.l2_gpus.push_back(g);
  }
  // In 64ths: the flow network groups flows by their exact weights (flow_net.h classes), and a
  // share that follows another read's progress continuously would give nearly every flow a class of
  // its own (a team of 32's sweep ran 13x slower).
  return float(std::round(64.0 * double(bytes - held) / double(bytes)) / 64.0);
}

void Simulator::l2_done(Transfer& x, uint32_t index) {
  for (int g : x.l2_gpus) l2_[std::size_t(g)].end_reads(index);
  x.l2_gpus.clear();
}

}  // namespace symm::sim
