// The fused matmul + collective plans as one type list, and the switch from a run-time id to the
// compile-time plan that both backends run them through (the simulator in backends/sim/fused.cpp,
// CUDA in backends/cuda/plans.cu). Header-only, as core/dispatch.h, so nvcc instantiates it.
//
// Adding a fused plan: its file in core/algos/ (the plan with its `kFused` descriptor: id, alias,
// op, summary) and one entry in FusedPlans below; fused_algorithms() (core/fused.cpp), `symmcoll
// list`, the commands' --algo and both backends read the rest from the entry.
#pragma once

#include <string>

#include "core/algos/ag_mm_ce_bulk_gemm.h"
#include "core/algos/ag_mm_ce_chunk_gemm.h"
#include "core/algos/ag_mm_ce_tile_gemm.h"
#include "core/algos/ag_mm_st_bulk_gemm.h"
#include "core/algos/mm_rs_gemm_ce_acc.h"
#include "core/algos/mm_rs_gemm_ce_ring_reduce.h"
#include "core/algos/mm_rs_gemm_st_chunk_reduce.h"
#include "core/algos/mm_rs_tile_reduce.h"
#include "core/dispatch.h"
#include "core/fused.h"

namespace symm {

// Every fused plan, in `symmcoll list` order.
// The device-program variants (a persistent tile kernel: ag_mm_ce_tile_gemm.h, mm_rs_tile_reduce.h)
// follow their op's host-plan variants.
using FusedPlans = TypeList<AgMmCeChunkGemm, AgMmCeBulkGemm, AgMmStBulkGemm, AgMmCeTileGemm, MmRsGemmCeRingReduce,
                            MmRsGemmCeAcc, MmRsGemmStChunkReduce, MmRsTileStLdReduce, MmRsTileStPeerReduce>;

namespace detail {
template <class F, class P, class... Ps>
bool with_fused_plan_in(const std::string& id, F& f, TypeList<P, Ps...>) {
  if (id == P::kFused.id) {
    f.template operator()<P>();
    return true;
  }
  if constexpr (sizeof...(Ps) > 0)
    return with_fused_plan_in(id, f, TypeList<Ps...>{});
  else
    return false;
}
}  // namespace detail

// f.template operator()<Plan>() for the fused plan called `id` (a FusedAlgo::id); false if none is.
template <class F>
bool with_fused_plan(const std::string& id, F&& f) {
  return detail::with_fused_plan_in(id, f, FusedPlans{});
}

}  // namespace symm
