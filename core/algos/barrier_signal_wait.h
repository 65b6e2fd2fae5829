// barrier.signal_wait ("acq_rel"): a blockwise barrier across ranks on signal pads, and the
// barrier() every other barrier-based program is built from.
//
//   1. e = advance(counter[block])            this block's epoch for this barrier (only grows)
//   2. signal every peer's flags[ch][block][me] := e     (relaxed, or release)
//   3. wait until my flags[ch][block][r] >= e for every peer r   (relaxed, or acquire)
//
// Block b of every rank meets block b of every other rank: programs that split work by
// block index therefore synchronise exactly the pieces they exchange. Because epochs only
// grow, a flag already past e (a fast peer at its next barrier) also satisfies the wait, and
// repeated calls or graph replays need no reset. All ranks must run the same sequence of
// barriers on each block index (SPMD), which keeps their counters equal.
#pragma once

#include "core/coll_args.h"
#include "core/descriptor.h"
#include "core/signal_pad.h"
#include "core/verbs.h"

namespace symm {

void barrier_order_outside_the_verb_contract();  // never defined: named in compile errors

// The orders of a barrier's signals and waits, checked against the verb contract when the
// constant is made (a compile error, in both contexts): signal kRelaxed or kRelease, wait
// kRelaxed or kAcquire.
struct BarrierOrder {
  MemOrder signal;
  MemOrder wait;
  consteval BarrierOrder(MemOrder s, MemOrder w) : signal(s), wait(w) {
    if (!is_signal_order(s) || !is_wait_order(w)) barrier_order_outside_the_verb_contract();
  }
};
inline constexpr BarrierOrder kBarrierRelaxed{MemOrder::kRelaxed, MemOrder::kRelaxed};
inline constexpr BarrierOrder kBarrierAcqRel{MemOrder::kRelease, MemOrder::kAcquire};
// Test mutant: releases that no wait acquires (orders execution only, publishes nothing).
inline constexpr BarrierOrder kBarrierRelaxedWait{MemOrder::kRelease, MemOrder::kRelaxed};

// Every rank signals its peers in the order me + 1, me + 2, ... (so that no peer's pad is every
// rank's first target), so rank me - i signals me i-th: a block that waits on its peers' flags in
// the order they land waits on rank signal_order_peer(me, i, n) i-th. Waiting on me + 1 first (the
// flag its sender signals last) left every later wait only the read of a flag already set; this
// order overlaps those reads with the later signals' flight (the simulator's signal_next_us:
// experiments/results/h200x4/README.md, barrier_order).
SYMM_HD int signal_order_peer(int me, int i, int n) { return (me - i + n) % n; }

// The order of a barrier's waits: kLanding, the order the flags land (every program's barrier), or
// kSignals, the order the signals go out, me + 1 first (calibrate's barrier_blocks rows, which every
// calibration run measured so: core/calib_programs.h BarrierRounds).
enum class WaitOrder { kLanding, kSignals };

template <class Ctx>
SYMM_HD void barrier(Ctx& ctx, BarrierOrder order, int channel = 0, WaitOrder waits = WaitOrder::kLanding) {
  const int me = ctx.rank(), n = ctx.world(), b = ctx.block();
  const uint32_t e = ctx.advance(pad::counter(b, 0));
  for (int i = 1; i < n; ++i) ctx.signal((me + i) % n, pad::flag(channel, b, me), e, order.signal);
  for (int i = 1; i < n; ++i) {
    const int from = waits == WaitOrder::kLanding ? signal_order_peer(me, i, n) : (me + i) % n;
    ctx.wait(pad::flag(channel, b, from), e, order.wait);
  }
}

// The barrier as a collective of its own (op "barrier"): useful to measure flag latency.
// Every block must be resident at once (block b of every rank meets block b of every other).
template <BarrierOrder kOrder>
struct BarrierProgram {
  static constexpr BarrierOrder kOrders = kOrder;
  struct Config {
    static constexpr int kBlockLimit = kResidentBlocks;
    static constexpr int kDefaultBlockCap = kResidentBlocks;
    static constexpr std::size_t kBytesPerBlock = 64 << 10;  // unused: a barrier moves no data
  };

  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs&) {
    barrier(ctx, kOrder);
  }
};

struct BarrierAcqRel : BarrierProgram<kBarrierAcqRel> {
  static constexpr Descriptor kDescriptor{
      .op = Op::kBarrier,
      .name = "signal_wait",
      .alias = "acq_rel",
      .summary = "blockwise barrier on signal pads, release signals / acquire waits"};
};

}  // namespace symm
