#include "core/heap_layout.h"

namespace symm {
namespace {

std::size_t up(std::size_t x) { return (x + kHeapAlign - 1) / kHeapAlign * kHeapAlign; }

}  // namespace

std::size_t fixed_scratch_bytes(int world) {
  std::size_t total = 0;
  for (const AlgoInfo& a : algorithms())
    if (a.piece_bytes) total += up(a.scratch_bytes(0, world));
  return total;
}

HeapLayout heap_layout(const AlgoInfo& a, std::size_t bytes, int world, HeapUse use) {
  HeapLayout h;
  std::size_t fixed = 0, at = 0;  // at: a's fixed region
  if (use == HeapUse::kEveryProgram) {
    bool found = false;
    for (const AlgoInfo& x : algorithms()) {
      if (!x.piece_bytes) continue;
      if (x.index == a.index) found = true;
      if (!found) at += up(x.scratch_bytes(0, world));
    }
    fixed = fixed_scratch_bytes(world);
  } else if (a.piece_bytes) {
    fixed = up(a.scratch_bytes(0, world));
  }
  h.in = fixed;
  h.out = h.in + up(a.in_bytes(bytes, world));
  if (a.piece_bytes) {
    h.scratch = at;
    h.total = h.out + up(a.out_bytes(bytes, world));
  } else {
    h.scratch = h.out + up(a.out_bytes(bytes, world));
    h.total = h.scratch + up(a.scratch_bytes(bytes, world));
  }
  return h;
}

HeapLayout::Buffer HeapLayout::buffer_at(std::size_t off) const {
  Buffer best{"in", in};
  bool any = off >= in;
  for (const Buffer& b : {Buffer{"out", out}, Buffer{"scratch", scratch}})  // later wins a tie
    if (off >= b.base && (!any || b.base >= best.base)) best = b, any = true;
  return best;
}

}  // namespace symm
