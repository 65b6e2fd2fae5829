// reduce_scatter.st_ll_reduce ("push_ll"): send slice q of the input to rank q as flagged
// packets; each rank reduces the `world` packet buffers it received. No barrier
// (core/algos/st_ll_reduce.h, kScatter true). Small messages only (LlLayout::kPieceBytes per
// block of the per-rank output).
#pragma once

#include "core/algos/st_ll_reduce.h"

namespace symm {

struct ReduceScatterStLlReduce : StLlReduceT<true> {
  static constexpr Descriptor kDescriptor{
      .op = Op::kReduceScatter,
      .name = "st_ll_reduce",
      .alias = "push_ll",
      .summary = "push slice q to peer q as flagged packets, reduce the packets received with my own slice"};
};

}  // namespace symm
