// all_gather.ld ("pull"): each rank loads every peer's input into its output.
//
//   1. barrier (release/acquire): every rank's `in` is published
//   2. out[r * count + piece] = peer(in, r)[piece] for every rank r
//   3. barrier (release/acquire): no rank returns while a peer may still load its `in`
//
// all_gather.st's program (all_gather_st.h) with loads in place of stores.
#pragma once

#include "core/algos/all_gather_st.h"

namespace symm {

struct AllGatherLd : AllGatherT<false> {
  static constexpr Descriptor kDescriptor{.op = Op::kAllGather,
                                          .name = "ld",
                                          .alias = "pull",
                                          .summary = "each rank loads every peer's input into its output"};
};

}  // namespace symm
