// The simulator's clock and event queue (STYLE.md 9: a tiny, typed event core).
#pragma once

#include <cassert>
#include <cmath>
#include <cstdint>
#include <queue>
#include <vector>

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
  uint64_t key;  // phase in the top bit, then the sequence number: ties break by phase, then FIFO
  uint32_t kind;
  uint32_t a;
  uint64_t b;
};

// Ordered by (time, phase, sequence): deterministic, and phase 1 (network re-solve) runs after
// every phase-0 event of the same tick, so all flows that start or end at one tick are
// solved together.
class EventQueue {
 public:
  static constexpr uint64_t kLatePhase = uint64_t(1) << 63;

  void push(TimePs t, uint32_t kind, uint32_t a, uint64_t b, bool late = false) {
    assert(t >= now_ && "time never goes backwards");
    heap_.push(Event{t, (late ? kLatePhase : 0) | seq_++, kind, a, b});
  }
  bool empty() const { return heap_.empty(); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    assert(e.t >= now_ && "time never goes backwards");
    now_ = e.t;
    ++processed_;
    return e;
  }
  TimePs now() const { return now_; }
  uint64_t processed() const { return processed_; }

 private:
  struct Later {
    bool operator()(const Event& x, const Event& y) const { return x.t != y.t ? x.t > y.t : x.key > y.key; }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  TimePs now_ = 0;
  uint64_t seq_ = 0;
  uint64_t processed_ = 0;
};

}  // namespace symm::sim
