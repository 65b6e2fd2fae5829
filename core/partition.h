// Splitting work into ranks' slices and blocks' pieces, in whole 16-byte vectors.
#pragma once

#include "core/common.h"

namespace symm {

struct Range {
  std::size_t begin;  // first element
  std::size_t count;  // number of elements (may be 0)
};

// Piece i of `parts` balanced pieces of n items (the first n % parts get one more).
SYMM_HD Range split(std::size_t n, int parts, int i) {
  std::size_t base = n / std::size_t(parts), extra = n % std::size_t(parts);
  std::size_t ii = std::size_t(i);
  std::size_t begin = ii * base + (ii < extra ? ii : extra);
  return Range{begin, base + (ii < extra ? 1 : 0)};
}

// Piece i of `parts` of `count` elements of T, cut on 16-byte vector boundaries.
template <class T>
SYMM_HD Range split_vec(std::size_t count, int parts, int i) {
  constexpr std::size_t kPer = kVecBytes / sizeof(T);
  Range v = split(count / kPer, parts, i);
  return Range{v.begin * kPer, v.count * kPer};
}

// Sub-piece j of `parts` of a range, on vector boundaries.
template <class T>
SYMM_HD Range split_vec(Range r, int parts, int j) {
  Range s = split_vec<T>(r.count, parts, j);
  return Range{r.begin + s.begin, s.count};
}

// Piece i of `parts` of `count` elements of T for a program that streams its bytes through HBM:
// whole vectors as split_vec, and every piece starting on a boundary of g vectors, g the largest
// power of two up to 64 KiB and a sixteenth of the even share (so the pieces stay within ~6 % of
// each other); the vectors past the last whole g go to the last piece, which has the fewest g. On
// one H200 a copy's pieces cut on 16-byte boundaries run 5-20 % slower beyond the L2 than the same
// bytes cut on 128 KiB ones (experiments/results/h200x1/hbm_blocks_ec5f63a). Flagged-packet
// programs keep split_vec: their pieces have a capacity.
inline constexpr std::size_t kAlignVecs = (64 << 10) / kVecBytes;
template <class T>
SYMM_HD Range split_aligned(std::size_t count, int parts, int i) {
  constexpr std::size_t kPer = kVecBytes / sizeof(T);
  const std::size_t vecs = count / kPer, share = vecs / (std::size_t(parts) * 16);
  std::size_t g = 1;
  while (g * 2 <= share && g * 2 <= kAlignVecs) g *= 2;
  const Range v = split(vecs / g, parts, i);
  const std::size_t tail = i == parts - 1 ? vecs % g : 0;
  return Range{v.begin * g * kPer, (v.count * g + tail) * kPer};
}

// Sub-piece j of `parts` of a range, as split_aligned (the range's start is the caller's).
template <class T>
SYMM_HD Range split_aligned(Range r, int parts, int j) {
  Range s = split_aligned<T>(r.count, parts, j);
  return Range{r.begin + s.begin, s.count};
}

// A plan's kernel (a device program a host plan launches, not a collective of its own): its
// Config, and the block count over `count` elements of T when the plan is not told one: a block
// per kBytes, at most kCap, never more blocks than 16-byte vectors, at least 1.
template <int kCap, std::size_t kBytes>
struct PlanKernel {
  struct Config {
    static constexpr int kBlockLimit = kResidentBlocks;
    static constexpr int kDefaultBlockCap = kCap;
    static constexpr std::size_t kBytesPerBlock = kBytes;
  };
  // `cap` (default kCap): a plan whose kernel runs alone at the end of its call may take more.
  template <class T>
  static int default_blocks(std::size_t count, int cap = kCap) {
    const std::size_t want = (count * sizeof(T) + kBytes - 1) / kBytes;
    const std::size_t vecs = count * sizeof(T) / kVecBytes;
    std::size_t b = want < std::size_t(cap) ? want : std::size_t(cap);
    if (b > vecs) b = vecs;
    return b ? int(b) : 1;
  }
};

}  // namespace symm
