// all_reduce.st_ll_reduce ("one_shot_ll"): push the input as flagged packets into every rank's
// scratch, then reduce the `world` packet buffers received, with no barrier at all
// (core/algos/st_ll_reduce.h, kScatter false). 1 MiB at most (64 blocks of LlLayout::kPieceBytes).
#pragma once

#include "core/algos/st_ll_reduce.h"

namespace symm {

struct AllReduceStLlReduce : StLlReduceT<false> {
  static constexpr Descriptor kDescriptor{
      .op = Op::kAllReduce,
      .name = "st_ll_reduce",
      .alias = "one_shot_ll",
      .summary = "push input as flagged packets to every peer, reduce the packets received with my own input"};
};

}  // namespace symm
