// Vector clocks of the race check (memory.h): one entry per entity (every rank's host, every
// (rank, block)); a snapshot is a clock frozen at a release (or a launch) and shared by those
// that observe it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace symm::sim {

using VClock = std::vector<uint32_t>;
using Snapshot = std::shared_ptr<const VClock>;

// Joins b into a; true if a changed.
inline bool join(VClock& a, const VClock& b) {
  bool changed = false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (b[i] > a[i]) a[i] = b[i], changed = true;
  return changed;
}

}  // namespace symm::sim
