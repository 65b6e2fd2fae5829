// Interval maps over byte offsets: std::map<begin, Seg> where Seg has `end`; segments never
// overlap. Used for the race check's per-byte-range records and for landed packets.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>

namespace symm::sim {

// Sets [b, e) of an interval map (key = begin, value has .end) to v, splitting what overlaps.
template <class Seg>
void assign_range(std::map<uint64_t, Seg>& m, uint64_t b, uint64_t e, Seg v) {
  auto it = m.lower_bound(b);
  if (it != m.begin()) {
    auto p = std::prev(it);
    if (p->second.end > b) {
      const Seg whole = p->second;
      p->second.end = b;
      if (whole.end > e) m.emplace(e, whole);
    }
  }
  it = m.lower_bound(b);
  while (it != m.end() && it->first < e) {
    if (it->second.end > e) {
      const Seg rest = it->second;
      m.erase(it);
      m.emplace(e, rest);
      break;
    }
    it = m.erase(it);
  }
  v.end = e;
  m.emplace(b, v);
}

// Splits the segment of an interval map that straddles x (if any) at x.
template <class Seg>
void split_at(std::map<uint64_t, Seg>& m, uint64_t x) {
  auto it = m.upper_bound(x);
  if (it == m.begin()) return;
  --it;
  if (it->first < x && it->second.end > x) {
    Seg rest = it->second;
    it->second.end = x;
    m.emplace_hint(std::next(it), x, std::move(rest));
  }
}

}  // namespace symm::sim
