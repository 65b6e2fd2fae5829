// Flagged packets (LL): put_ll, reduce_ll, and what the engine records of landed packets.
//
// Race check: a put_ll's packets are ordinary stores for the race
// check (a plain read of packet memory is checked like any other), but reduce_ll's reads of its
// packet buffers are exempt from the read-after-write check: each 8-byte packet is single-copy
// atomic and carries its own epoch, so a packet seen with the awaited epoch is complete. Within
// the kernel they create no happens-before for other memory (no fence). They are recorded as
// reads (a later store over them must be ordered after them), and for ordering they count at
// kernel granularity: a put_ll carries its block's *launch* clock (the kernel boundary is a full
// fence before the packet), and a reduce_ll that accepts packets joins that clock into its
// host's clock when its kernel ends (a full fence after). That is core/algos/block_regions.h's
// two-halves argument in clocks: rank P rewrites half h of rank Q's region two epochs after Q
// read it, after P's kernel accepted packets that Q sent from a kernel launched after Q's reads.
// reduce_ll waits on *memory* with data (the epoch words in the heap), and on a per-rank record
// of landed packet ranges and their epochs in timing-only runs.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "backends/sim/conv.h"
#include "backends/sim/interval_map.h"
#include "backends/sim/simulator.h"
#include "core/dispatch.h"

namespace symm::sim {

// A packet is 8 bytes, {data word, epoch}; on this (little-endian) host one 64-bit load holds
// the epoch in its high half, which lets the loops below test several packets at once.
static_assert(std::endian::native == std::endian::little, "packet words assume a little-endian host");
constexpr uint64_t kEpochBits = 0xFFFFFFFF00000000ull;
inline uint64_t packet_epoch(uint32_t epoch) { return uint64_t(epoch) << 32; }

// The first packet of [p, end) (8-byte aligned host bytes) whose epoch is not e (end if none).
inline const uint8_t* first_other_epoch(const uint8_t* p, const uint8_t* end, uint64_t e) {
  for (; p + 32 <= end; p += 32) {
    uint64_t w[4];
    std::memcpy(w, p, 32);
    if (((w[0] ^ e) | (w[1] ^ e) | (w[2] ^ e) | (w[3] ^ e)) & kEpochBits) break;
  }
  for (; p < end; p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if ((w ^ e) & kEpochBits) break;
  }
  return p;
}

// put_ll: posted stores of ll_bytes(bytes) = 2 * bytes of packets (the wire carries the epochs
// too): the block spends the issue time of the packet bytes at its per-block / link rate and
// continues; the packets land flag_latency_us after that, as a relaxed flag (a local dst: an HBM
// transfer, landing when it ends). Source bytes are read at issue; a local source's loads delay the
// packets local_load_us, as they do a copy's stores (transfers.cpp, complete).
void Simulator::put_ll(Block& b, uintptr_t dst, uintptr_t src, std::size_t bytes, uint32_t epoch) {
  if (bytes == 0) return;
  const std::size_t pb = ll_bytes(bytes);
  const Loc s = decode(b, src, bytes, "put_ll"), d = decode(b, dst, pb, "put_ll");
  if (s.space == kMcSpace || d.space == kMcSpace)
    fail(ErrorCode::kInvalidArgument, "put_ll() cannot use a multicast address");
  const int me = b.rank;
  if (s.space != me || d.space != me) touch_peer(b);
  b.fence_pending = true;
  b.stored_local |= d.space == me;
  uint32_t index;
  Transfer& x = new_transfer(b, "put_ll", index);
  x.remote_load = s.space != me;
  x.local_load = !x.remote_load;  // its packets wait for their source's local loads, as a copy's stores do
  x.posted = d.space != me;
  x.ll = true;
  x.ll_epoch = epoch;
  x.dst_space = d.space;
  x.dst_off = d.off;
  x.bytes = pb;
  if (data_) {
    if (race_) {
      access_epoch(b);
      check_read(b, s.space, s.off, bytes);
      record_read(b.tid, b.clock, s.space, s.off, bytes);
    }
    // The source bytes as read now; land_ll makes them packets {data word i, epoch} in place.
    const uint8_t* from = read_heap(s.space, s.off, bytes);
    x.data.assign(from, from + bytes);
    // Ordinary stores for the race check (only reduce_ll's reads of packets are exempt), which
    // carry the block's launch clock to the reduce_ll that accepts them (see the top of this file).
    if (race_) {
      store(b, d.space, d.off, pb);
      assign_range(heaps_[d.space].ll_src, d.off, d.off + pb, LlSrcSeg{0, b.launch_snap});
    }
  }
  // One unit of progress = one packet byte: half a byte of source data. Across NVLink a packet
  // byte occupies ll_wire_bytes / 8 link bytes (machine key ll_wire_bytes: 8-byte stores do not
  // fill the link's flits as bulk stores do).
  add_transfer_uses(x, index, me, s, bytes, d, pb, 0.5, x.posted ? ll_wire_ : 1.0f);
  start_flow(b, index, block_bpp_, double(pb));
}

// A put_ll's packets land: packet i = {data word i, epoch}.
void Simulator::land_ll(const Transfer& x) {
  uint8_t* to = heaps_[x.dst_space].bytes.write(x.dst_off, x.bytes);
  const uint8_t* from = x.data.data();
  const uint64_t e = packet_epoch(x.ll_epoch);
  const std::size_t n = x.bytes / 8;  // a local: the stores below may not alias it (vectorises)
  for (std::size_t i = 0; i < n; ++i) {
    uint32_t d;
    std::memcpy(&d, from + 4 * i, 4);
    const uint64_t w = e | d;
    std::memcpy(to + 8 * i, &w, 8);
  }
}

void Simulator::ll_landed(const Transfer& x) {
  const int r = x.dst_space;
  const uint64_t lo = x.dst_off, hi = x.dst_off + x.bytes;
  if (!data_) assign_range(ll_landed_[r], lo, hi, LlSeg{0, x.ll_epoch});
  // Wake the blocks of rank r whose pending packets this landing touches; they re-check.
  std::vector<Block*>& ws = ll_waiters_[r];
  std::size_t keep = 0;
  for (Block* w : ws) {
    if (w->ll_lo < hi && lo < w->ll_hi) {
      w->ll_from = x.slice;
      q_.push(q_.now(), kResumeBlock, uint32_t(w->rank * stride_ + w->index), 0);
    } else {
      ws[keep++] = w;
    }
  }
  ws.resize(keep);
}

uint64_t Simulator::scan_ll(int rank, uint64_t pos, uint64_t end, uint32_t epoch) const {
  if (data_) {
    // Only this epoch: an older (stale) or newer packet is not accepted. An unwritten page is
    // read as it is (every epoch 0xFFFFFFFF) without materialising it.
    const HeapBytes& heap = heaps_[rank].bytes;
    while (pos < end) {
      const uint64_t page_end = std::min(end, (pos | (HeapBytes::kPage - 1)) + 1);
      if (heap.unwritten_page(pos)) {
        if (epoch != 0xFFFFFFFFu) return pos;
        pos = page_end;
        continue;
      }
      const uint8_t* h = heap.data();
      pos = uint64_t(first_other_epoch(h + pos, h + page_end, packet_epoch(epoch)) - h);
      if (pos < page_end) return pos;
    }
    return pos;
  }
  const auto& m = ll_landed_[rank];
  auto it = m.upper_bound(pos);
  if (it != m.begin()) --it;
  for (; pos < end && it != m.end() && it->first <= pos; ++it) {
    if (it->second.end <= pos) continue;
    if (it->second.epoch != epoch) break;
    pos = std::min(end, it->second.end);
  }
  return pos;
}

std::string Simulator::ll_seen(int rank, uint64_t off) const {
  if (data_) {
    const HeapBytes& heap = heaps_[rank].bytes;
    uint32_t e = 0xFFFFFFFFu;
    if (!heap.unwritten_page(off)) std::memcpy(&e, heap.data() + off + 4, 4);
    return e == 0xFFFFFFFFu ? "was never written" : "holds epoch " + std::to_string(e);
  }
  const auto& m = ll_landed_[rank];
  auto it = m.upper_bound(off);
  if (it != m.begin() && (--it)->second.end > off) return "holds epoch " + std::to_string(it->second.epoch);
  return "was never written";
}

// reduce_ll<T>: blocks until every packet of every source buffer carries exactly `epoch` (an
// older or newer epoch is not accepted), then one local flow reading the 2 * count * sizeof(T)
// packet bytes of each source (count * sizeof(T) of source `plain`, a plain buffer read as data,
// never waited on) at HBM rate, at most ll_read_GBps per block (block_GBps models
// remote loads; 0: no per-block cap),
// fp32 accumulation in source order, a store to dst with the rules of copy. The data words are
// read once every packet is valid. Packet reads are synchronising by construction (see the top
// of this file); the plain source's read is an ordinary read for the race check.
void Simulator::reduce_ll(Block& b, DType t, uintptr_t dst, const void* const* srcs, int n, std::size_t count,
                          uint32_t epoch, ReduceOp op, int plain) {
  const std::size_t bytes = count * dtype_size(t);
  if (bytes == 0) return;
  if (n < 1 || n > kPadWorld)
    fail(ErrorCode::kInvalidArgument, "reduce_ll() needs 1.." + std::to_string(kPadWorld) + " sources");
  const int me = b.rank;
  const std::size_t pb = ll_bytes(bytes);
  const Loc d = decode(b, dst, bytes, "reduce_ll");
  if (d.space != b.rank) touch_peer(b);
  if (d.space == kMcSpace) fail(ErrorCode::kInvalidArgument, "reduce_ll() cannot store to a multicast address");
  if (plain >= n)
    fail(ErrorCode::kInvalidArgument,
         "reduce_ll(): plain source " + std::to_string(plain) + " of " + std::to_string(n));
  uint64_t off[kPadWorld];
  for (int k = 0; k < n; ++k) {
    const Loc s = decode(b, reinterpret_cast<uintptr_t>(srcs[k]), k == plain ? bytes : pb, "reduce_ll");
    if (s.space != me)
      fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(me) + " " + block_name(b) +
                                            ": reduce_ll() reads local packet buffers only (source " +
                                            std::to_string(k) + " is on rank " + std::to_string(s.space) + ")");
    off[k] = s.off;
  }
  const TimePs t0 = q_.now();
  b.ll_from = kNoSlice;
  // Spin: walk the sources' packets in order, waiting at the first one not yet valid; a wake-up
  // re-checks from where the walk stopped. With data, the data words are then read in one pass
  // that checks every epoch again: a packet overwritten meanwhile sends the block back to waiting.
  int k = plain == 0 ? 1 : 0;
  uint64_t pos = k < n ? off[k] : 0;
  bool waited = false, polled = false;
  for (;;) {
    while (k < n) {
      pos = scan_ll(me, pos, off[k] + pb, epoch);
      if (pos < off[k] + pb) break;
      if (++k == plain) ++k;
      if (k < n) pos = off[k];
    }
    // The spin's polling (machine key ll_poll_us): a block that waited sees the last packet this
    // long after it landed; the packets are read (and checked again) after it.
    if (k == n && waited && !polled && ll_poll_ps_ > 0) {
      polled = true;
      q_.push(q_.now() + ll_poll_ps_, kResumeBlock, uint32_t(b.rank * stride_ + b.index), 0);
      b.state = BlockState::kTransfer;
      yield(b);
      continue;
    }
    if (k == n && data_) {
      ll_unpacked_.resize(std::size_t(n) * bytes);
      for (int s = 0; s < n && k == n; ++s) {
        uint8_t* o = ll_unpacked_.data() + std::size_t(s) * bytes;
        if (s == plain) {  // data as it is, no packets
          const uint8_t* h = read_heap(me, off[s], bytes);
          std::memcpy(o, h, bytes);
          continue;
        }
        const uint8_t* h = read_heap(me, off[s], pb);
        const uint8_t* stale = first_other_epoch(h, h + pb, packet_epoch(epoch));
        if (stale != h + pb) {
          k = s, pos = off[s] + uint64_t(stale - h);
          break;
        }
        for (std::size_t i = 0; i < pb / 8; ++i) {  // the data word of every packet
          uint64_t w;
          std::memcpy(&w, h + 8 * i, 8);
          const uint32_t d = uint32_t(w);
          std::memcpy(o + 4 * i, &d, 4);
        }
      }
    }
    if (k == n) break;
    b.ll_buf = off[k];
    b.ll_lo = pos;
    b.ll_hi = off[k] + pb;
    b.ll_epoch = epoch;
    ll_waiters_[me].push_back(&b);
    b.state = BlockState::kPackets;
    waited = true;
    yield(b);
  }
  if (race_) {
    // The packets were read (a later store over them must be ordered after this); the launch
    // clocks of the blocks that put them reach this rank's host when this kernel ends.
    access_epoch(b);
    for (int k = 0; k < n; ++k) {
      if (k == plain) {  // an ordinary read
        check_read(b, me, off[k], bytes);
        record_read(b.tid, b.clock, me, off[k], bytes);
        continue;
      }
      record_read(b.tid, b.clock, me, off[k], pb);
      const auto& m = heaps_[me].ll_src;
      auto it = m.upper_bound(off[k]);
      if (it != m.begin()) --it;
      for (; it != m.end() && it->first < off[k] + pb; ++it) {
        if (it->second.end <= off[k] || !it->second.launch) continue;
        if (std::find(b.ll_acq.begin(), b.ll_acq.end(), it->second.launch) == b.ll_acq.end())
          b.ll_acq.push_back(it->second.launch);
      }
    }
  }
  // The arrow from the put_ll whose packets woke it last ends on a zero-length slice now (the
  // reduce_ll slice itself starts with the spin, possibly before that put_ll).
  if (trace_ && b.ll_from != kNoSlice)
    trace_->arrow(b.ll_from,
                  trace_->slice(Trace::pid(me), Trace::block_tid(b.index), "packets seen", q_.now(), q_.now()));
  b.fence_pending = true;
  b.stored_local |= d.space == me;
  uint32_t index;
  Transfer& x = new_transfer(b, "reduce_ll", index);
  x.issued = t0;  // the slice shows the spin too
  x.posted = d.space != me;
  x.dst_space = d.space;
  x.dst_off = d.off;
  x.bytes = bytes;
  if (data_) {
    if (n == 1) {
      x.data.assign(ll_unpacked_.begin(), ll_unpacked_.begin() + std::ptrdiff_t(bytes));
    } else {
      const void* host_src[kPadWorld];
      for (int s = 0; s < n; ++s) host_src[s] = ll_unpacked_.data() + std::size_t(s) * bytes;
      with_type(t,
                [&]<class T>() { reduce_data<T>(x.data, reinterpret_cast<const T* const*>(host_src), n, count, op); });
    }
    if (race_) store(b, d.space, d.off, bytes);
  }
  // A local read of the n packet buffers (2 bytes each per byte of result, half weight on HBM;
  // the plain source 1 byte), then the result's store; the block reads at ll_read_GBps at most
  // (machine key; 0: no per-block cap), 2 bytes of each packet source and 1 of the plain source
  // per byte of result.
  const int npk = n - (plain >= 0 ? 1 : 0);
  const double read_per_byte = 2.0 * npk + (plain >= 0 ? 1.0 : 0.0);
  const bool link = x.posted && over_link(me, d.space);  // a store to a rank on my GPU is an HBM write
  add_use(res_hbm(me), float(read_per_byte / 2) + float(link ? 0 : 0.5));
  if (link) {
    add_use(res_egress(me), 1);
    add_use(res_ingress(d.space), 1);
  }
  start_flow(b, index, ll_read_bpp_ > 0 ? ll_read_bpp_ / read_per_byte : std::numeric_limits<double>::infinity(),
             double(bytes));
}

}  // namespace symm::sim
