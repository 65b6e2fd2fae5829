// all_reduce.rs_ld_ag_ld ("two_shot_ld"): reduce-scatter by loads, barrier, all-gather by loads.
//
//   1. barrier (release/acquire): every rank's `in` is published
//   2. RS by loads: out[slice me][piece] = reduce over r of peer(in, r)[slice me][piece]
//   3. barrier (release/acquire): every slice is reduced and published
//   4. out[slice r][piece] = peer(out, r)[slice r][piece] for every peer r
//   5. barrier (release/acquire): no rank returns while a peer may still load its `out`
//
// all_reduce.rs_ld_ag_st's program (all_reduce_rs_ld_ag_st.h) with its all-gather by loads.
#pragma once

#include "core/algos/all_reduce_rs_ld_ag_st.h"

namespace symm {

struct AllReduceRsLdAgLd : AllReduceRsLdAgT<false> {
  static constexpr Descriptor kDescriptor{.op = Op::kAllReduce,
                                          .name = "rs_ld_ag_ld",
                                          .alias = "two_shot_ld",
                                          .summary = "reduce-scatter by loads, barrier, all-gather by loads"};
};

}  // namespace symm
