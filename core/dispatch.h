// From run-time (AlgoKind, DType) to compile-time (Program, T): the one switch every
// backend instantiates its kernels through. Header-only so nvcc instantiates device code.
#pragma once

#include "core/algos/all_gather_ce_st.h"
#include "core/algos/all_gather_st.h"
#include "core/algos/all_gather_st_ll.h"
#include "core/algos/all_reduce_ld_reduce.h"
#include "core/algos/all_reduce_mc_ld_reduce_mc_st.h"
#include "core/algos/all_reduce_rs_ld_ag_st.h"
#include "core/algos/all_reduce_st_ll_reduce.h"
#include "core/algos/all_reduce_st_reduce.h"
#include "core/algos/barrier_signal_wait.h"
#include "core/algos/reduce_scatter_ce_st_chunk_reduce.h"
#include "core/algos/reduce_scatter_ce_st_ring_reduce.h"
#include "core/algos/reduce_scatter_ld_reduce.h"
#include "core/algos/reduce_scatter_st_ll_reduce.h"
#include "core/registry.h"

namespace symm {

// f.template operator()<Program>() for the program of `kind`.
template <class F>
decltype(auto) with_program(AlgoKind kind, F&& f) {
  switch (kind) {
    case AlgoKind::kBarrierAcqRel: return f.template operator()<BarrierAcqRel>();
    case AlgoKind::kBarrierRelaxed: return f.template operator()<BarrierRelaxed>();
    case AlgoKind::kAllReduceLdReduce: return f.template operator()<AllReduceLdReduce>();
    case AlgoKind::kAllReduceStReduce: return f.template operator()<AllReduceStReduce>();
    case AlgoKind::kAllReduceRsLdAgSt: return f.template operator()<AllReduceRsLdAgSt>();
    case AlgoKind::kAllReduceRsLdAgLd: return f.template operator()<AllReduceRsLdAgLd>();
    case AlgoKind::kAllReduceMcLdReduceMcSt: return f.template operator()<AllReduceMcLdReduceMcSt>();
    case AlgoKind::kReduceScatterLdReduce: return f.template operator()<ReduceScatterLdReduce>();
    case AlgoKind::kAllGatherSt: return f.template operator()<AllGatherSt>();
    case AlgoKind::kAllGatherLd: return f.template operator()<AllGatherLd>();
    case AlgoKind::kAllReduceStLlReduce: return f.template operator()<AllReduceStLlReduce>();
    case AlgoKind::kReduceScatterStLlReduce: return f.template operator()<ReduceScatterStLlReduce>();
    case AlgoKind::kAllGatherStLl: return f.template operator()<AllGatherStLl>();
    case AlgoKind::kPlanAllGatherCeSt:
    case AlgoKind::kPlanReduceScatterCeStRingReduce:
    case AlgoKind::kPlanReduceScatterCeStChunkReduce: break;  // host plans: with_plan
  }
  return f.template operator()<BarrierAcqRel>();  // unreachable: callers check AlgoInfo::plan
}

// f.template operator()<Plan>() for the host plan of `kind` (AlgoInfo::plan).
template <class F>
decltype(auto) with_plan(AlgoKind kind, F&& f) {
  switch (kind) {
    case AlgoKind::kPlanReduceScatterCeStRingReduce: return f.template operator()<ReduceScatterCeStRingReduce>();
    case AlgoKind::kPlanReduceScatterCeStChunkReduce: return f.template operator()<ReduceScatterCeStChunkReduce>();
    default: break;
  }
  return f.template operator()<AllGatherCeSt>();  // kPlanAllGatherCeSt (callers check AlgoInfo::plan)
}

// f.template operator()<T>() for the element type of `t`.
template <class F>
decltype(auto) with_type(DType t, F&& f) {
  switch (t) {
    case DType::kBF16: return f.template operator()<bf16>();
    case DType::kFP16: return f.template operator()<fp16>();
    case DType::kFP32: return f.template operator()<float>();
  }
  return f.template operator()<float>();
}

}  // namespace symm
