// One GPU's L2 as the simulator sees it (machine keys l2_MB, l2_GBps; sim.h): which bytes of the
// symmetric heaps it holds, so that a transfer's local side is charged to HBM only for the bytes it
// misses. Two ways a byte is held:
//   - resident: touched (read or written) by a transfer, as it started, among the last l2_MB of
//     bytes touched on this GPU (least recently touched evicted first, byte ranges split as needed);
//   - streaming: being read right now by another transfer on this GPU (an active read). Ranks
//     that read the same bytes at the same time (all_reduce.ld_reduce's blocks b of every rank
//     on one GPU) fetch them from HBM once: the others' loads meet them in the L2, however large
//     the whole buffer; a reader that starts as the other ends meets none of them (held()).
// Addresses are Loc's (space, offset), packed as (space << kSpaceShift) | offset.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "backends/sim/memory.h"

namespace symm::sim {

class L2 {
 public:
  static uint64_t address(int space, uint64_t off) { return (uint64_t(space) << kSpaceShift) | off; }

  explicit L2(uint64_t capacity = 0) : cap_(capacity) {}
  uint64_t capacity() const { return cap_; }
  uint64_t resident_bytes() const { return bytes_; }

  // Bytes of [b, e) the L2 holds for a transfer `token` that starts now: the resident ones, or
  // (if more) the overlap with another active read times the share of that read still to come
  // (`remaining`: a reader about done has passed the bytes; one just started brings them all).
  uint64_t held(uint64_t b, uint64_t e, uint32_t token, const std::function<double(uint32_t)>& remaining) const;
  // [b, e) becomes the most recently touched range; older ones are evicted beyond the capacity.
  void touch(uint64_t b, uint64_t e);
  // Transfer `token` reads [b, e) until end_reads(token).
  void begin_read(uint32_t token, uint64_t b, uint64_t e);
  void end_reads(uint32_t token);

 private:
  struct Seg {
    uint64_t end;
    uint64_t stamp;
  };
  struct Active {
    uint64_t e;
    uint32_t token;
  };
  using ActiveMap = std::multimap<uint64_t, Active>;  // active reads by begin
  void erase_range(uint64_t b, uint64_t e);
  void drop_age(uint64_t stamp, uint64_t begin);
  void evict();

  uint64_t cap_;
  uint64_t bytes_ = 0;
  uint64_t next_stamp_ = 0;
  std::map<uint64_t, Seg> segs_;           // resident ranges by begin, disjoint
  std::multimap<uint64_t, uint64_t> age_;  // stamp -> begin of a resident range (oldest first)
  ActiveMap active_;
  std::vector<std::vector<ActiveMap::iterator>> by_token_;  // tokens are transfer indices: dense
  uint64_t longest_ = 0;  // the longest active read ever begun: how far before a range to look
};

}  // namespace symm::sim
