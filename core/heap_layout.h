// The symmetric heap's layout, the same in both backends: where each rank's `in`, `out` and
// `scratch` lie (the same offsets on every rank, so ctx.peer() works on them).
//
//   [0, fixed)           one fixed region per resident program on per-block regions
//                        (core/algos/block_regions.h: the LL programs and st_reduce), the same
//                        for every size and block count and written by nothing else
//   in, out, scratch     this call's buffers (scratch here only for programs without fixed
//                        regions), each on a kHeapAlign boundary
//
// The CUDA backend keeps one heap for every program of the registry (kEveryProgram: calls of
// different programs and sizes share it); a simulator run holds one program (kOneProgram).
#pragma once

#include <cstddef>

#include "core/registry.h"

namespace symm {

inline constexpr std::size_t kHeapAlign = 4096;

enum class HeapUse : int { kOneProgram = 0, kEveryProgram = 1 };

struct HeapLayout {
  std::size_t in = 0, out = 0, scratch = 0;  // byte offsets
  std::size_t total = 0;                     // bytes of heap this call needs

  // The buffer byte `off` belongs to ("in", "out" or "scratch": the one starting last at or
  // before off) and where it starts.
  struct Buffer {
    const char* name;
    std::size_t base;
  };
  Buffer buffer_at(std::size_t off) const;
};

// Bytes of the fixed regions at the start of the heap: every program's of the registry
// (kEveryProgram) or `a`'s alone (kOneProgram).
std::size_t fixed_scratch_bytes(int world);
HeapLayout heap_layout(const AlgoInfo& a, std::size_t bytes, int world, HeapUse use = HeapUse::kEveryProgram);

}  // namespace symm
