// Visible memory: the synthetic addresses programs see, the per-rank heaps behind them, and
// the race check's records over them. The check itself (check_read / record_read / store) and
// the saving of outputs a later store would overwrite (keep_output) are Simulator members
// defined in memory.cpp.
//
// Addresses: programs only do pointer arithmetic on the pointers of CollArgs and pass them
// back to verbs, so the simulator hands out *synthetic* addresses, never dereferenced by the
// program: space s (rank s's symmetric heap; kMcSpace = the multicast view of every rank's
// heap) starts at kAddrBase + (s << kSpaceShift). With data the engine maps (space, offset)
// onto a host byte array per rank; timing-only runs have no arrays at all.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "backends/sim/vclock.h"
#include "core/common.h"

namespace symm::sim {

constexpr uintptr_t kAddrBase = uintptr_t(1) << 44;
constexpr int kSpaceShift = 37;  // 128 GiB of symmetric heap per rank
constexpr int kMcSpace = kPadWorld;

inline uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// A decoded address: a space (rank, or kMcSpace) and a byte offset in it.
struct Loc {
  int space;
  uint64_t off;
};

struct WriteSeg {
  uint64_t end;
  int tid;
  uint32_t epoch;
  bool call_end = false;  // not a store: the host took the buffer back at the end of a call
};

struct Access {
  int tid;
  uint32_t epoch;
};

struct ReadSeg {  // the reads of [key, end) since its last store, none happening-before another
  uint64_t end;
  std::vector<Access> reads;
};

struct LlSrcSeg {  // packets [key, end) were last put by a block launched with this clock
  uint64_t end;
  Snapshot launch;
};

struct LlSeg {  // timing-only: packets [key, end) landed with `epoch`
  uint64_t end;
  uint32_t epoch;
};

struct Heap {
  std::vector<uint8_t> bytes;
  // Race check: last writer of every byte range, reads since, and who put the packets.
  std::map<uint64_t, WriteSeg> writes;
  std::map<uint64_t, ReadSeg> reads;
  std::map<uint64_t, LlSrcSeg> ll_src;
};

// What one call leaves for its output check: every rank's inputs (as stored, in float) and, for
// a rank whose `out` was written after its call ended, `out` as it was at that end.
struct CallCheck {
  std::vector<std::vector<float>> in;
  std::vector<std::vector<uint8_t>> out;  // empty: the heap still holds it
  int ended = 0;
};

}  // namespace symm::sim
