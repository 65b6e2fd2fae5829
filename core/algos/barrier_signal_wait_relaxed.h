// barrier.signal_wait_relaxed ("relaxed"): the barrier of barrier_signal_wait.h with relaxed
// signals and waits: it orders execution only (no store is published), so its time is the
// flags' alone.
#pragma once

#include "core/algos/barrier_signal_wait.h"

namespace symm {

struct BarrierRelaxed : BarrierProgram<kBarrierRelaxed> {
  static constexpr Descriptor kDescriptor{
      .op = Op::kBarrier,
      .name = "signal_wait_relaxed",
      .alias = "relaxed",
      .summary = "blockwise barrier on signal pads, relaxed (orders execution only)"};
};

}  // namespace symm
