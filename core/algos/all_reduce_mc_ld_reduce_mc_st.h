// all_reduce.mc_ld_reduce_mc_st ("multimem"): NVSwitch reduces, NVSwitch broadcasts.
//
//   1. out[piece of every slice] = in[...]      local copy: the reduction runs in place on `out`
//   2. barrier (release/acquire): every rank's `out` holds its input, published
//   3. multimem_reduce(out_mc[slice me][piece]): the switch loads and reduces slice me over
//      all ranks (multimem.ld_reduce) and stores the result to every rank (multimem.st)
//   4. barrier (release/acquire): every slice has landed on every rank
//
// Bytes over NVLink per rank: bytes/world out and (about) bytes in, independent of world.
// Needs NVLS (multicast): refused at run time where multicast is disabled. kOrder is the
// barriers' ordering (tests instantiate weaker ones).
#pragma once

#include "core/algos/barrier_signal_wait.h"
#include "core/partition.h"

namespace symm {

template <BarrierOrder kOrder = kBarrierAcqRel>
struct AllReduceMcLdReduceMcStT {
  static constexpr Descriptor kDescriptor{
      .op = Op::kAllReduce,
      .name = "mc_ld_reduce_mc_st",
      .alias = "multimem",
      .summary = "NVSwitch multimem.ld_reduce + multimem.st on each rank's slice (NVLS)",
      .needs_multicast = true};
  struct Config {
    static constexpr int kBlockLimit = kResidentBlocks;
    static constexpr int kDefaultBlockCap = 64;
    static constexpr std::size_t kBytesPerBlock = 128 << 10;
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world(), nb = ctx.blocks(), b = ctx.block();
    const T* in = static_cast<const T*>(a.in);
    T* out = static_cast<T*>(a.out);
    // The block that reduces a piece of slice s on some rank is block b everywhere, so block b
    // copies-in piece b of every slice and the barrier below covers exactly what it reads.
    for (int s = 0; s < n; ++s) {
      const Range p = split_vec<T>(split_vec<T>(a.count, n, s), nb, b);
      if (p.count) ctx.copy(out + p.begin, in + p.begin, p.count * sizeof(T));
    }
    barrier(ctx, kOrder);
    const Range mine = split_vec<T>(split_vec<T>(a.count, n, me), nb, b);
    if (mine.count) ctx.template multimem_reduce<T>(static_cast<T*>(a.out_mc) + mine.begin, mine.count, a.op);
    barrier(ctx, kOrder);
  }
};
using AllReduceMcLdReduceMcSt = AllReduceMcLdReduceMcStT<>;

}  // namespace symm
