// Visible memory and the race check (data mode): decoding addresses, naming bytes and
// entities in reports, check_read / record_read / store, and keep_output (a store into an
// `out` whose call is not checked yet first saves that output).
//
// Race check (data mode): happens-before with vector clocks, FastTrack style. Every rank's
// host (stream) and every (rank, block) has an entry. An access (load or store) after a release
// starts a new epoch of the accessor's own entry, so a release publishes exactly what came
// before it. A release signal carries a snapshot of the signaller's clock in the flag; an
// acquire wait that observes the flag joins it; a launch inherits the host's clock and the
// kernel's end joins its blocks back (stream order).
//   - read after write: a read of bytes whose last writer is neither the reader nor
//     happens-before it is a race;
//   - write after read / write: every byte range keeps its reads since the last store (per
//     reader entity the latest epoch; reads that happen-before a newer read are dropped); a
//     store requires every recorded read and the last store of its bytes to happen-before it
//     (or to be its own);
//   - end of a call = the host takes `in` and `out` back: when a rank's kernel has ended, its
//     host reads its whole `out` (every peer store into it must be ordered before the end),
//     every read of its `in` and `out` by anyone must be ordered before the end (the caller may
//     overwrite them once the call returns), and both are recorded as written by the host at
//     that moment (a peer that reads them later without being ordered after it is a race).
// The output is checked against the reference per call, as the host saw it at its call's end
// (a store that lands later does not count): keep_output saves an `out` before such a store.
//
// Flagged packets are ordinary stores here; reduce_ll's reads of them are exempt from the
// read-after-write check (packets.cpp says why).
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backends/sim/interval_map.h"
#include "backends/sim/simulator.h"
#include "core/signal_pad.h"

namespace symm::sim {

// ---- heap bytes --------------------------------------------------------------------------

namespace {
// Storage of earlier runs on this thread, largest first taken (as recycle.h does for vectors).
struct Storage {
  std::unique_ptr<uint8_t, HeapBytes::Free> p;
  std::size_t cap = 0;
};
std::vector<Storage>& storage_pool() {
  thread_local std::vector<Storage> pool;
  return pool;
}
}  // namespace

void HeapBytes::reset(std::size_t bytes) {
  if (cap_ < bytes) {
    release();
    auto& pool = storage_pool();
    auto big =
        std::max_element(pool.begin(), pool.end(), [](const Storage& a, const Storage& b) { return a.cap < b.cap; });
    if (big != pool.end() && big->cap >= bytes) {
      own_ = std::move(big->p);
      cap_ = big->cap;
      *big = std::move(pool.back());
      pool.pop_back();
    } else {
      // Room for a slightly larger run later; the bytes are left alone, so the pages cost
      // nothing until written.
      cap_ = align_up(bytes + bytes / 4, 1 << 20);
      own_.reset(static_cast<uint8_t*>(std::aligned_alloc(kPage, cap_)));
      if (!own_) throw std::bad_alloc();
    }
  }
  data_ = own_.get();
  size_ = bytes;
  ready_.assign((bytes + kPage - 1) >> kPageShift, 0);
  unready_ = ready_.size();
}

void HeapBytes::release() {
  if (!own_) return;
  auto& pool = storage_pool();
  if (pool.size() < std::size_t(kPadWorld) && cap_ <= (std::size_t(256) << 20)) pool.push_back({std::move(own_), cap_});
  own_.reset();
  cap_ = size_ = 0;
  data_ = nullptr;
  ready_.clear();
  unready_ = 0;
}

void HeapBytes::Free::operator()(uint8_t* p) const { std::free(p); }

void HeapBytes::materialise(uint64_t off, std::size_t n, bool overwrite) {
  if (n == 0) return;
  const uint64_t end = off + n, last = (end - 1) >> kPageShift;
  uint64_t populated = 0;  // pages below it were populated by this call
  for (uint64_t p = off >> kPageShift; p <= last; ++p) {
    if (ready_[p]) continue;
#ifdef MADV_POPULATE_WRITE
    // A run of fresh pages costs one call instead of a fault per page (about half the time);
    // pages already resident (storage from an earlier run) make it a cheap no-op.
    if (p >= populated) {
      uint64_t q = p;
      while (q < last && !ready_[q + 1]) ++q;
      if (q > p) madvise(data_ + (p << kPageShift), (q - p + 1) << kPageShift, MADV_POPULATE_WRITE);
      populated = q + 1;
    }
#endif
    const uint64_t lo = p << kPageShift, hi = std::min<uint64_t>(lo + kPage, size_);
    if (!(overwrite && off <= lo && hi <= end)) std::memset(data_ + lo, 0xFF, hi - lo);
    ready_[p] = 1;
    --unready_;
  }
}

void HeapBytes::poison(uint64_t off, std::size_t n) {
  if (n == 0) return;
  const uint64_t end = off + n;
  for (uint64_t p = off >> kPageShift, last = (end - 1) >> kPageShift; p <= last; ++p) {
    const uint64_t lo = p << kPageShift, hi = std::min<uint64_t>(lo + kPage, size_);
    if (off <= lo && hi <= end) {  // the whole page: marked, not written
      unready_ += ready_[p];
      ready_[p] = 0;
    } else if (ready_[p]) {  // part of a page: its other bytes keep their values
      const uint64_t a = std::max(lo, off), b = std::min(hi, end);
      std::memset(data_ + a, 0xFF, b - a);
    }
  }
}

std::size_t HeapBytes::pages_materialised() const { return ready_.size() - unready_; }

// ---- addresses -----------------------------------------------------------------------------

Loc Simulator::decode(const Block& b, uintptr_t a, std::size_t bytes, const char* verb) const {
  const uintptr_t rel = a - kAddrBase;
  const Loc l{int(rel >> kSpaceShift), uint64_t(rel & ((uintptr_t(1) << kSpaceShift) - 1))};
  const bool space_ok = a >= kAddrBase && (l.space < world_ || l.space == kMcSpace);
  if (!space_ok || l.off + bytes > heap_bytes_ || l.off % kVecBytes || bytes % kVecBytes)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(b.rank) + " " + block_name(b) + ": " + verb + " of " +
                                          std::to_string(bytes) +
                                          " bytes at an address outside the symmetric heap or not 16-byte aligned");
  return l;
}

std::string Simulator::where(int rank, uint64_t off) const {
  const HeapLayout::Buffer b = layout_.buffer_at(off);
  return "rank " + std::to_string(rank) + "'s " + b.name + " at byte " + std::to_string(off - b.base);
}

std::string Simulator::who(int tid) const {
  if (tid < world_) return "the host of rank " + std::to_string(tid);
  if (tid >= world_ * (1 + stride_)) {
    const int t = tid - world_ * (1 + stride_);
    return "rank " + std::to_string(t / streams_n_) + " stream " + std::to_string(t % streams_n_);
  }
  const int t = tid - world_;
  return "rank " + std::to_string(t / stride_) + " " + block_name(blocks_v_[std::size_t(t)]);
}

uint32_t Simulator::access_epoch(Block& b) {
  if (b.tick_before_store) {
    ++b.clock[b.tid];
    b.tick_before_store = false;
    b.release_snap.reset();
  }
  return b.clock[b.tid];
}

std::string Simulator::range(int rank, uint64_t lo, uint64_t hi) const {
  const auto [buf, base] = layout_.buffer_at(lo);
  std::string s = "[";  // appended piecewise: GCC 12 warns (-Wrestrict) on one long "+" chain here
  s += std::to_string(lo - base);
  s += ',';
  s += std::to_string(hi - base);
  s += ") of rank ";
  s += std::to_string(rank);
  s += "'s ";
  s += buf;
  return s;
}

void Simulator::check_read(int tid, const VClock& clock, const Block* blk, int rank, uint64_t off, std::size_t bytes,
                           const Stream* st) {
  const auto& m = heaps_[rank].writes;
  const uint64_t e = off + bytes;
  auto it = m.upper_bound(off);
  if (it != m.begin()) --it;
  for (; it != m.end() && it->first < e; ++it) {
    const WriteSeg& s = it->second;
    if (s.end <= off || s.tid == tid || clock[s.tid] >= s.epoch) continue;
    const uint64_t lo = std::max(off, it->first), hi = std::min(e, s.end);
    if (st)  // a plan's copy engine or gemm reads bytes not ordered before it
      fail(ErrorCode::kRace, "race: " + who(tid) + " reads " + range(rank, lo, hi) + ", written by " + who(s.tid) +
                                 " without a release/acquire chain (no wait_flag or wait_event orders that "
                                 "store before this stream's read)");
    if (!blk)  // the host at the end of its call: a store into its `out` not ordered before it
      fail(ErrorCode::kRace, "race: the host of rank " + std::to_string(rank) + " reads " + range(rank, lo, hi) +
                                 " at the end of its call, written by " + who(s.tid) +
                                 " without a release/acquire chain (the store is not ordered before "
                                 "the end of the call: missing end barrier?)");
    if (s.call_end)
      fail(ErrorCode::kRace, "race: " + who(tid) + " reads " + range(rank, lo, hi) + " after " + who(s.tid) +
                                 " ended its call, without a release/acquire chain from that end to the "
                                 "read (the caller may have overwritten it)");
    std::string last = "no wait before the read";
    if (blk->last_wait != UINT32_MAX) {
      const uint32_t w = blk->last_wait;
      last = "last wait: slot " + std::to_string(w);
      if (w < pad::kFlagSlots)
        last += " = channel " + std::to_string(w / (kPadWorld * kPadBlocks)) + ", block " +
                std::to_string((w / kPadWorld) % kPadBlocks) + ", from rank " + std::to_string(w % kPadWorld);
    }
    fail(ErrorCode::kRace, "race: " + who(tid) + " reads [" + std::to_string(lo) + "," + std::to_string(hi) + ") of " +
                               where(rank, lo) + " written by " + who(s.tid) + " without a release/acquire chain (" +
                               last + ")");
  }
}

void Simulator::record_read(int tid, const VClock& clock, int rank, uint64_t off, std::size_t bytes) {
  if (bytes == 0) return;
  auto& m = heaps_[rank].reads;
  const uint64_t e = off + bytes;
  const uint32_t epoch = clock[tid];
  split_at(m, off);
  split_at(m, e);
  uint64_t pos = off;
  auto it = m.lower_bound(off);
  while (pos < e) {
    if (it == m.end() || it->first > pos) {  // a gap: nothing read there since the last store
      const uint64_t gap_end = it == m.end() ? e : std::min(e, it->first);
      it = m.emplace_hint(it, pos, ReadSeg{gap_end, {Access{tid, epoch}}});
      pos = gap_end;
      ++it;
      continue;
    }
    // Reads that happen-before this one are implied by it (this one included, by program order).
    std::vector<Access>& rs = it->second.reads;
    std::size_t keep = 0;
    for (const Access& a : rs)
      if (clock[a.tid] < a.epoch) rs[keep++] = a;
    rs.resize(keep);
    rs.push_back(Access{tid, epoch});
    pos = it->second.end;
    ++it;
  }
}

void Simulator::store(int tid, const VClock& clock, int rank, uint64_t off, std::size_t bytes, bool call_end) {
  if (bytes == 0) return;
  Heap& heap = heaps_[rank];
  const uint64_t e = off + bytes;
  auto writer = [&] { return who(tid) + (call_end ? " ends its call" : " overwrites " + range(rank, off, e)); };
  // Write after write: the last store of these bytes must be ordered before this one.
  {
    auto it = heap.writes.upper_bound(off);
    if (it != heap.writes.begin()) --it;
    for (; it != heap.writes.end() && it->first < e; ++it) {
      const WriteSeg& s = it->second;
      if (s.end <= off || s.tid == tid || clock[s.tid] >= s.epoch) continue;
      const uint64_t lo = std::max(off, it->first), hi = std::min(e, s.end);
      fail(ErrorCode::kRace,
           "race: " + writer() + " while " + range(rank, lo, hi) + " was last " +
               (s.call_end ? "taken back by " + who(s.tid) + " at the end of its call" : "written by " + who(s.tid)) +
               " (no release/acquire chain from that to this write)");
    }
  }
  // Write after read: every read since must be ordered before this store.
  auto& m = heap.reads;
  auto it = m.upper_bound(off);
  if (it != m.begin()) --it;
  for (; it != m.end() && it->first < e; ++it) {
    if (it->second.end <= off) continue;
    for (const Access& a : it->second.reads) {
      if (a.tid == tid || clock[a.tid] >= a.epoch) continue;
      const uint64_t lo = std::max(off, it->first), hi = std::min(e, it->second.end);
      fail(ErrorCode::kRace,
           "race: " + (call_end ? who(tid) + " ends its call while " + who(a.tid) + " may still be reading " +
                                      range(rank, lo, hi) +
                                      " (no release/acquire chain from the read to the end of the call, "
                                      "after which the caller may overwrite it: missing end barrier?)"
                                : who(tid) + " overwrites " + range(rank, lo, hi) + " while " + who(a.tid) +
                                      " may still be reading it (no release/acquire chain from the read to "
                                      "this write)"));
    }
  }
  // The store supersedes them: later stores are checked against it (and it against them).
  split_at(m, off);
  split_at(m, e);
  m.erase(m.lower_bound(off), m.lower_bound(e));
  assign_range(heap.writes, off, e, WriteSeg{0, tid, clock[tid], call_end});
}

void Simulator::keep_output_slow(int r) {
  CallCheck& c = checks_[std::size_t(frozen_[r])];
  if (c.out.empty()) c.out.resize(std::size_t(world_));
  // Not from the heap pool: these are small and rare (outputs of calls before the last).
  const uint8_t* out = heaps_[r].bytes.read(out_off_, out_bytes_);
  c.out[std::size_t(r)].assign(out, out + out_bytes_);
  frozen_[r] = -1;
}

// A custom run's check reads the whole heap (workload.h): all of it, as the rank's call ended.
void Simulator::keep_heap(int r) {
  CallCheck& c = checks_[std::size_t(frozen_[r])];
  if (c.out.empty()) c.out.resize(std::size_t(world_));
  const uint8_t* heap = ptr(r, 0);
  c.out[std::size_t(r)].assign(heap, heap + heap_bytes_);
  frozen_[r] = -1;
}

void Simulator::keep_outputs_under(int space, uint64_t off, std::size_t bytes) {
  if (off >= out_off_ + out_bytes_ || off + bytes <= out_off_) return;
  if (space != kMcSpace) return keep_output(space);
  for (int r = 0; r < world_; ++r) keep_output(r);
}

}  // namespace symm::sim
