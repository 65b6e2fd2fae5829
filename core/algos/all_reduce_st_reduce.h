// all_reduce.st_reduce ("one_shot_push"): every rank pushes its input into every peer's
// scratch, then each reduces the `world` copies it received from local memory.
//
//   1. e = advance(counter); p = e & 1            parity picks one of two scratch halves
//   2. peer(scratch[p][me], r)[piece] = in[piece] for every rank r       (stores, posted)
//   3. signal every peer flags[1][block][me] := e (release: the stores above land first)
//   4. wait my flags[1][block][r] >= e for every peer (acquire)
//   5. out[piece] = reduce over r of scratch[p][r][piece]                 (local loads)
//
// One flag trip and no end barrier: a rank cannot reach call k+2 (which reuses half p)
// before every peer has entered call k+1, i.e. finished reading half p of call k. So the
// scratch must belong to this algorithm alone. Scratch: 2 * world * bytes.
#pragma once

#include "core/algos/barrier_signal_wait.h"
#include "core/partition.h"

namespace symm {

struct AllReduceStReduce {
  struct Config {
    static constexpr int kMaxBlocks = kSymmMaxBlocks;
    static constexpr int kDefaultMaxBlocks = 32;
    static constexpr std::size_t kBytesPerBlock = 2 << 10;
    static constexpr int kChannel = 1;
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world(), b = ctx.block();
    const Range piece = split_vec<T>(a.count, ctx.blocks(), b);
    const uint32_t e = ctx.advance(pad::counter(b, 1));
    T* half = static_cast<T*>(a.scratch) + std::size_t(e & 1) * n * a.count;
    const T* in = static_cast<const T*>(a.in) + piece.begin;

    const std::size_t bytes = piece.count * sizeof(T);
    for (int i = 0; i < n; ++i) {
      const int r = (me + i) % n;
      if (bytes) ctx.copy(ctx.peer(half + std::size_t(me) * a.count + piece.begin, r), in, bytes);
    }
    for (int i = 1; i < n; ++i)
      ctx.signal((me + i) % n, pad::flag(Config::kChannel, b, me), e, MemOrder::kRelease);
    for (int i = 1; i < n; ++i)
      ctx.wait(pad::flag(Config::kChannel, b, (me + i) % n), e, MemOrder::kAcquire);

    const T* srcs[kMaxWorld];
    for (int r = 0; r < n; ++r) srcs[r] = half + std::size_t(r) * a.count + piece.begin;
    if (piece.count)
      ctx.template reduce<T>(static_cast<T*>(a.out) + piece.begin, srcs, n, piece.count, a.op);
  }
};

}  // namespace symm
