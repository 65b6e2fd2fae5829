// The simulator's clock and event queue: a tiny, typed event core.
#pragma once

#include <cmath>
#include <cstdint>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/common.h"

namespace symm::sim {

// Simulated time is an integer number of picoseconds: exact for the round numbers of golden
// tests, and events that should coincide (symmetric ranks) land on the same tick, so the
// flow network re-solves once per tick instead of once per rounding difference.
using TimePs = int64_t;
inline constexpr TimePs kPsPerUs = 1'000'000;
inline TimePs us_to_ps(double us) { return TimePs(std::llround(us * double(kPsPerUs))); }
inline double ps_to_us(TimePs t) { return double(t) / double(kPsPerUs); }
// Bandwidth in bytes per picosecond: 1 GB/s = 1e9 B / 1e12 ps.
using BytesPerPs = double;
inline BytesPerPs gbps_to_bpp(double GBps) { return GBps * 1e-3; }

// What an event does is decided by the engine; the queue only orders them.
struct Event {
  TimePs t;
  uint64_t seq;
  uint32_t kind;
  uint32_t a;
  uint64_t b;
};

// Ordered by (time, phase, sequence): deterministic. The next event is always the one with the
// smallest (time, phase) key among those pending, first pushed first within a key. So phase 1
// (network re-solve) of a tick runs only when no phase-0 event of that tick is pending; a
// phase-0 event pushed *at the current tick* by a phase-1 handler (a re-solve completing a
// local transfer, a block resuming with no round trip) opens a new round: it runs right after
// that handler, before any phase-1 event still queued for the tick, and a re-solve it asks for
// runs after it. A tick can thus be solved more than once; all flows that start or end in one
// round of phase-0 events are solved together.
//
// Symmetric ranks make many events share a tick, so the queue is a heap of distinct
// (time, phase) keys, each with a FIFO bucket: push order within a key *is* sequence order.
// The heap stays small (distinct ticks, not events), which is most of the engine's speed.
// Pushing an event before now() is an engine bug: symm::Error kInternal (in every build).
class EventQueue {
 public:
  void push(TimePs t, uint32_t kind, uint32_t a, uint64_t b, bool late = false) {
    if (t < now_) backwards(t);
    const uint64_t key = uint64_t(t) << 1 | uint64_t(late);
    auto [it, fresh] = index_.try_emplace(key, 0);
    if (fresh) {
      if (free_.empty()) {
        free_.push_back(uint32_t(buckets_.size()));
        buckets_.emplace_back();
      }
      it->second = free_.back();
      free_.pop_back();
      keys_.push(Key{key, it->second});
    }
    buckets_[it->second].events.push_back(Event{t, seq_++, kind, a, b});
  }
  // The next event, or false when none is left.
  bool pop(Event& e) {
    while (!keys_.empty()) {
      const Key k = keys_.top();
      Bucket& b = buckets_[k.bucket];
      if (b.next < b.events.size()) {
        e = b.events[b.next++];
        if (e.t < now_) backwards(e.t);
        now_ = e.t;
        ++processed_;
        return true;
      }
      b.events.clear();
      b.next = 0;
      free_.push_back(k.bucket);
      index_.erase(k.key);
      keys_.pop();
    }
    return false;
  }
  TimePs now() const { return now_; }
  uint64_t processed() const { return processed_; }

 private:
  [[noreturn]] void backwards(TimePs t) const {
    fail(ErrorCode::kInternal, "simulator: time never goes backwards (event at " + std::to_string(t) + " ps, now " +
                                   std::to_string(now_) + " ps)");
  }
  struct Key {
    uint64_t key;  // time << 1 | phase
    uint32_t bucket;
    bool operator>(const Key& o) const { return key > o.key; }
  };
  struct Bucket {
    std::vector<Event> events;
    std::size_t next = 0;
  };
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> keys_;
  std::unordered_map<uint64_t, uint32_t> index_;
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_;
  TimePs now_ = 0;
  uint64_t seq_ = 0;
  uint64_t processed_ = 0;
};

}  // namespace symm::sim
