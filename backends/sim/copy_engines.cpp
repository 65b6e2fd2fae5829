// Host plans: copy engines. A copy item (copy_engine) waits for a free copy engine of the rank
// (the machine's copy_engines, dealt round-robin; at most ce_per_rank of them the rank's at once),
// then ce_startup_us (plus ce_launch_us for a cold peer copy, below), then one flow at up to
// ce_GBps through the network: a remote source on its egress and my ingress, a remote destination
// on my egress and its ingress (a peer copy's local side is not charged to HBM: start_copy_flow),
// shared max-min fairly with every other transfer (SM traffic included); where ce_GBps is above a
// link direction's rate (nvlink_*_GBps, what SM copies reach), each of its bytes takes that ratio of
// the direction's time. The source is
// read when the flow starts; the bytes land in the destination when it ends (store_latency_us later for a remote one),
// and the item is done then. Cold start: a copy with a peer side (source or destination on another GPU) whose stream's
// previous item of the call was not a copy pays ce_launch_us on top of ce_startup_us. Back-to-back copies on one stream
// (calibrate's ce_copy rows, whose intercept is ce_startup_us) let the engine take the next copy while the previous one
// runs; after a flag, an event or the call's start the stream hands the engine its copy only when it gets there, and
// the copy pays the engine's whole start (the 2x H200 all-gather `ce`: ~25 us per call at 4K where the warm costs sum
// to ~15). A copy within one GPU is left out: the driver runs a device-to-device memcpy as a kernel (calibrate's
// ce_copy_local rows: ~1 us, and they wait for a running GEMM's SMs). On a team machine (Machine::team) the engines are
// the GPU's, shared by its ranks, and a copy between two ranks of one GPU (calibrate's team ce_copy rows, whose rate
// ce_GBps then is) weighs on that GPU's HBM, its read and its write, and waits for the GEMMs running on that GPU when
// it comes up (gemm.cpp; streams.cpp's copy item).
#include <algorithm>

#include "backends/sim/simulator.h"

namespace symm::sim {

// The engines are the GPU's: ranks on one GPU (a team machine) queue for the same ones.
// A rank holds at most Machine::ce_per_rank of them at once (0: no such bound): a waiting copy of
// a rank at its bound lets the copies queued behind it, other ranks' (a team machine), go first.
void Simulator::grant_copy_engines(int rank) {
  const std::size_t g = std::size_t(gpu(rank));
  std::deque<int>& waiting = ce_waiting_[g];
  const int per_rank = m_.ce_per_rank > 0 ? m_.ce_per_rank : m_.copy_engines;
  while (ce_busy_[g] < m_.copy_engines) {
    auto next = std::find_if(waiting.begin(), waiting.end(),
                             [&](int w) { return ce_rank_busy_[std::size_t(w / streams_n_)] < per_rank; });
    if (next == waiting.end()) return;
    Stream& s = stream_at(*next / streams_n_, *next % streams_n_);
    waiting.erase(next);
    const int engine = ce_next_[g]++ % m_.copy_engines;
    ++ce_busy_[g];
    ++ce_rank_busy_[std::size_t(s.rank)];
    start_copy(s, engine);
  }
}

void Simulator::start_copy(Stream& s, int engine) {
  StreamItem& it = s.items.front();
  const int me = s.rank;
  const Loc src = decode_host(me, s.index, it.src, it.bytes, "copy_engine");
  const Loc dst = decode_host(me, s.index, it.dst, it.bytes, "copy_engine");
  uint32_t index;
  Transfer& x = new_stream_transfer(s, TransferKind::kCopyEngine, "copy_engine", index);
  x.remote_load = src.space != me;
  x.posted = dst.space != me;
  x.dst_space = dst.space;
  x.dst_off = dst.off;
  x.bytes = it.bytes;
  x.ce = engine;
  x.src_space = src.space;
  x.src_off = src.off;
  // The engine's start-up, then the flow (start_stream_flow, then start_copy_flow).
  // A peer copy that does not follow a copy on its stream starts cold: ce_launch_us more, taken
  // from the GPU's front end (streams.cpp front_end), one at a time with the rank's other cold
  // starts and its flag operations, whatever their streams.
  const bool cold = (x.posted || x.remote_load) && !s.after_copy;
  q_.push(q_.now() + ce_startup_ps_ + (cold && ce_launch_ps_ > 0 ? front_end(me, ce_launch_ps_) : 0), kStreamFlow, 0,
          index);
}

// A copy engine's flow starts: its source is read now.
void Simulator::start_copy_flow(Transfer& x, uint32_t index) {
  Stream& s = *x.stream_owner;
  const int me = s.rank;
  if (data_) {
    if (race_) {
      stream_epoch(s);
      check_stream_read(s, x.src_space, x.src_off, x.bytes);
      record_read(s.tid, s.clock, x.src_space, x.src_off, x.bytes);
      store(s.tid, s.clock, x.dst_space, x.dst_off, x.bytes);
    }
    x.data.assign(ptr(x.src_space, x.src_off), ptr(x.src_space, x.src_off) + x.bytes);
  }
  add_transfer_uses(x, index, me, Loc{x.src_space, x.src_off}, x.bytes, Loc{x.dst_space, x.dst_off}, x.bytes, 1, 1);
  // Over NVLink each direction takes ce_egress_w_ / ce_ingress_w_ of its time per byte of the
  // engine's (where ce_GBps is above that direction's nvlink_*_GBps, what SM copies reach: the
  // engine is held to its own rate, not theirs); within a GPU (a team machine) the bytes are HBM's.
  const bool to_peer = x.posted && over_link(me, x.dst_space), from_peer = x.remote_load && over_link(x.src_space, me);
  const bool link = to_peer || from_peer;
  if (to_peer) use_w_[res_egress(me)] *= ce_egress_w_, use_w_[res_ingress(x.dst_space)] *= ce_ingress_w_;
  if (from_peer) use_w_[res_egress(x.src_space)] *= ce_egress_w_, use_w_[res_ingress(me)] *= ce_ingress_w_;
  // A peer copy's local side stays off HBM: the engine's ~0.4 TB/s is a small part of HBM's raw
  // rate, which hbm_GBps (a copy kernel's rate, read + write, all SMs) leaves room beside; shared
  // per flow against it, the blocks of a kernel beside the engine took nearly all of it (64 local
  // copy blocks held all_gather.ce_st's peer copy to ~5 % of its rate).
  // A copy between two ranks on one GPU (a team machine) is all HBM, its read and its write.
  if (link) {
    use_w_[res_hbm(me)] = 0;
    if (!l2_.empty()) use_w_[res_l2(me)] = 0;
  }
  uses_.erase(std::remove_if(uses_.begin(), uses_.end(), [&](const Use& u) { return use_w_[u.res] == 0; }),
              uses_.end());
  for (Use& u : uses_) u.weight = use_w_[u.res], use_w_[u.res] = 0;
  net_.start(q_.now(), uses_, ce_bpp_, double(x.bytes), index);
}

// A copy landed: its engine serves the next stream waiting for one.
void Simulator::copy_landed(int rank) {
  --ce_busy_[std::size_t(gpu(rank))];
  --ce_rank_busy_[std::size_t(rank)];
  grant_copy_engines(rank);
}

}  // namespace symm::sim
