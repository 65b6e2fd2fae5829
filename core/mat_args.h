// The operands of the matrix device programs (core/algos/tile_gemm.h and the fused programs built
// on it): plain data that travels inside CollArgs (CollArgs::mat), so a host plan launches them
// through the same launch verb as every other device program. Collectives leave it empty.
#pragma once

#include <cstdint>

namespace symm {

// Row-major, dense (leading dimension = column count) unless a program says otherwise. Which
// pointers a program reads is stated in its file; all are this rank's addresses, and those that
// peers reach lie in symmetric memory.
struct MatArgs {
  const void* a = nullptr;       // A rows this rank holds (ag_mm: the shard; mm_rs: M x K/world)
  const void* a2 = nullptr;      // ag_mm: the gathered A (peers' rows land here; symmetric)
  const void* b = nullptr;       // B
  void* c = nullptr;             // C
  void* work = nullptr;          // mm_rs: the symmetric tiles (pull) or the owners' slots (push)
  uint32_t m = 0, n = 0, k = 0;  // the product this rank computes: m x n, k deep
  uint32_t chunk_rows = 0;       // ag_mm: rows per progress flag of the copy-engine all-gather;
                                 // mm_rs tiles: rows per band (core/algos/mm_rs_tile_reduce.h)
  uint32_t reduce_blocks = 0;    // mm_rs tiles: blocks that reduce while the others compute
};

}  // namespace symm
