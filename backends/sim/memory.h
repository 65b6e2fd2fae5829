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
#include <memory>
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

// A rank's heap bytes, materialised a page at a time. A page nothing has written reads as
// 0xFF bytes (NaN in every dtype, an epoch no packet carries: unwritten = wrong) without being
// touched, so a run pays host memory only for the bytes its program uses: a flagged-packet
// program's fixed regions are 32 MiB per rank on 8 ranks, of which a 1 MiB call uses half.
// Every access says which bytes it reads or overwrites; the storage comes from a per-thread pool
// (a sweep reuses pages already faulted in) and is never zeroed.
class HeapBytes {
 public:
  static constexpr int kPageShift = 12;
  static constexpr std::size_t kPage = std::size_t(1) << kPageShift;

  struct Free {  // of the storage (std::aligned_alloc)
    void operator()(uint8_t* p) const;
  };

  HeapBytes() = default;
  HeapBytes(HeapBytes&&) noexcept = default;
  HeapBytes& operator=(HeapBytes&&) noexcept = default;
  ~HeapBytes() { release(); }

  // `bytes` bytes, every one unwritten (0xFF); no page is touched.
  void reset(std::size_t bytes);
  // The storage back to the pool (the destructor does it too).
  void release();
  std::size_t size() const { return size_; }
  // Bytes [off, off + n) to read: their unwritten pages are filled with 0xFF first.
  const uint8_t* read(uint64_t off, std::size_t n) {
    if (unready_) materialise(off, n, /*overwrite=*/false);
    return data_ + off;
  }
  // Bytes [off, off + n) that the caller overwrites, every one of them, before anyone reads
  // them: pages wholly inside are not filled first.
  uint8_t* write(uint64_t off, std::size_t n) {
    if (unready_) materialise(off, n, /*overwrite=*/true);
    return data_ + off;
  }
  // Bytes [off, off + n) become unwritten (0xFF) again; whole pages are only marked so.
  void poison(uint64_t off, std::size_t n);
  // Whether the page holding byte `off` is still unwritten (every byte of it reads 0xFF).
  bool unwritten_page(uint64_t off) const { return !ready_[off >> kPageShift]; }
  // Every page materialised: raw pointers stay valid for any access (host plans, custom runs).
  uint8_t* all() {
    if (unready_) materialise(0, size_, /*overwrite=*/false);
    return data_;
  }
  // Raw bytes, for reads that check unwritten_page themselves.
  const uint8_t* data() const { return data_; }
  // Pages materialised now (for tests: what the run touched).
  std::size_t pages_materialised() const;

 private:
  void materialise(uint64_t off, std::size_t n, bool overwrite);

  std::unique_ptr<uint8_t, Free> own_;  // page-aligned
  std::size_t cap_ = 0, size_ = 0;
  uint8_t* data_ = nullptr;
  std::vector<uint8_t> ready_;  // per page: 1 = its bytes are in data_, 0 = unwritten (0xFF)
  std::size_t unready_ = 0;     // pages with ready_ == 0
};

struct Heap {
  HeapBytes bytes;
  // Race check: last writer of every byte range, reads since, and who put the packets.
  std::map<uint64_t, WriteSeg> writes;
  std::map<uint64_t, ReadSeg> reads;
  std::map<uint64_t, LlSrcSeg> ll_src;
};

// What one call leaves for its output check (its inputs are drawn again from the seed): for a
// rank whose `out` was written after its call ended, `out` as it was at that end (a custom run:
// its whole heap, as its check reads).
struct CallCheck {
  std::vector<std::vector<uint8_t>> out;  // empty: the heap still holds it
  int ended = 0;
};

}  // namespace symm::sim
