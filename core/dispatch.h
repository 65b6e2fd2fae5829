// The registry's entries as type lists, and the switches from run-time (entry, DType) to
// compile-time (Program, T) that every backend instantiates its kernels and plans through.
// Header-only so nvcc instantiates device code.
//
// Adding an algorithm (a device program, a host plan or a fused plan): its file in core/algos/
// (the program or plan, its Config and its Descriptor), its #include and one entry in
// DevicePrograms, HostPlans or FusedPlans below. The registry (core/registry.cpp: algorithms(),
// fused_algorithms()), `symmcoll list`, the commands' --algo and both backends read the rest
// from the entry itself.
#pragma once

#include <type_traits>

#include "core/algos/ag_mm_ce_bulk_gemm.h"
#include "core/algos/ag_mm_ce_chunk_gemm.h"
#include "core/algos/ag_mm_ce_tile_gemm.h"
#include "core/algos/ag_mm_st_bulk_gemm.h"
#include "core/algos/all_gather_ce_sm_st.h"
#include "core/algos/all_gather_ce_st.h"
#include "core/algos/all_gather_ld.h"
#include "core/algos/all_gather_st.h"
#include "core/algos/all_gather_st_copy.h"
#include "core/algos/all_gather_st_ll.h"
#include "core/algos/all_reduce_ld_reduce.h"
#include "core/algos/all_reduce_mc_ld_reduce_mc_st.h"
#include "core/algos/all_reduce_rs_ld_ag_ld.h"
#include "core/algos/all_reduce_rs_ld_ag_st.h"
#include "core/algos/all_reduce_st_ll_reduce.h"
#include "core/algos/all_reduce_st_reduce.h"
#include "core/algos/barrier_signal_wait.h"
#include "core/algos/barrier_signal_wait_relaxed.h"
#include "core/algos/mm_rs_gemm_ce_acc.h"
#include "core/algos/mm_rs_gemm_ce_ring_reduce.h"
#include "core/algos/mm_rs_gemm_ce_tile_acc.h"
#include "core/algos/mm_rs_gemm_st_chunk_reduce.h"
#include "core/algos/mm_rs_tile_acc.h"
#include "core/algos/mm_rs_tile_reduce.h"
#include "core/algos/reduce_scatter_ce_st_chunk_reduce.h"
#include "core/algos/reduce_scatter_ce_st_ring_reduce.h"
#include "core/algos/reduce_scatter_ld_reduce.h"
#include "core/algos/reduce_scatter_st_ll_reduce.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/registry.h"

namespace symm {

template <class... Ts>
struct TypeList {
  static constexpr int kSize = int(sizeof...(Ts));
};

// Every entry of the registry, in `symmcoll list` order: the device programs, then the host
// plans (core/plan.h; Descriptor::kind = kHostPlan).
using DevicePrograms = TypeList<BarrierAcqRel, BarrierRelaxed,                            //
                                AllReduceLdReduce, AllReduceStReduce, AllReduceRsLdAgSt,  //
                                AllReduceRsLdAgLd, AllReduceMcLdReduceMcSt,               //
                                ReduceScatterLdReduce, AllGatherSt, AllGatherLd,          //
                                AllReduceStLlReduce, ReduceScatterStLlReduce, AllGatherStLl, AllGatherStCopy>;
using HostPlans = TypeList<AllGatherCeSt, AllGatherCeSmSt, ReduceScatterCeStRingReduce, ReduceScatterCeStChunkReduce>;
// The fused matmul + collective plans (core/fused.h; Descriptor::kind = kFusedPlan), in `symmcoll
// list` order: fused_algorithms(), apart from Algorithms (their arguments are matrices).
// The device-program variants (a persistent tile kernel: ag_mm_ce_tile_gemm.h, mm_rs_tile_reduce.h)
// follow their op's host-plan variants.
using FusedPlans =
    TypeList<AgMmCeChunkGemm, AgMmCeBulkGemm, AgMmStBulkGemm, AgMmCeTileGemm, MmRsGemmCeRingReduce, MmRsGemmCeAcc,
             MmRsGemmStChunkReduce, MmRsTileStLdReduce, MmRsTileStPeerReduce, MmRsTileStPeerAcc, MmRsGemmCeTileAcc>;

template <class... A, class... B>
TypeList<A..., B...> concat(TypeList<A...>, TypeList<B...>);
using Algorithms = decltype(concat(DevicePrograms{}, HostPlans{}));

// f.template operator()<Entry>() for every entry, in order (i: its index in the list).
template <class F, class... Ts>
void for_each_entry(TypeList<Ts...>, F&& f) {
  int i = 0;
  (f.template operator()<Ts>(i++), ...);
}

// The index of Entry in Algorithms (AlgoInfo::index).
template <class Entry, class... Ts>
consteval int index_of(TypeList<Ts...>) {
  int i = 0, found = -1;
  ((std::is_same_v<Entry, Ts> ? (found = i, ++i) : ++i), ...);
  return found;
}
template <class Entry>
inline constexpr int kEntryIndex = index_of<Entry>(Algorithms{});

namespace detail {
// f.template operator()<the index-th entry of the list>() (the last one for an index past it:
// the callers check the index first).
template <class F, class T, class... Ts>
decltype(auto) with_nth(int index, F&& f, TypeList<T, Ts...>) {
  if constexpr (sizeof...(Ts) == 0) {
    return f.template operator()<T>();
  } else {
    if (index <= 0) return f.template operator()<T>();
    return with_nth(index - 1, f, TypeList<Ts...>{});
  }
}
template <EntryKind K, class... Ts>
consteval bool all_of_kind(TypeList<Ts...>) {
  return ((Ts::kDescriptor.kind == K) && ...);
}
static_assert(all_of_kind<EntryKind::kDeviceProgram>(DevicePrograms{}));
static_assert(all_of_kind<EntryKind::kHostPlan>(HostPlans{}));
static_assert(all_of_kind<EntryKind::kFusedPlan>(FusedPlans{}));
}  // namespace detail

// f.template operator()<Program>() for the device program of registry entry `a` (host code).
template <class F>
decltype(auto) with_program(const AlgoInfo& a, F&& f) {
#if !defined(__CUDA_ARCH__)
  SYMM_REQUIRE(a.kind == EntryKind::kDeviceProgram && a.index >= 0 && a.index < DevicePrograms::kSize,
               ErrorCode::kInternal, a.id + " is not a device program of the registry");
#endif
  return detail::with_nth(a.index, f, DevicePrograms{});
}

// f.template operator()<Plan>() for the host plan of registry entry `a` (host code).
template <class F>
decltype(auto) with_plan(const AlgoInfo& a, F&& f) {
  const int i = a.index - DevicePrograms::kSize;
#if !defined(__CUDA_ARCH__)
  SYMM_REQUIRE(a.kind == EntryKind::kHostPlan && i >= 0 && i < HostPlans::kSize, ErrorCode::kInternal,
               a.id + " is not a host plan of the registry");
#endif
  return detail::with_nth(i, f, HostPlans{});
}

// f.template operator()<Plan>() for the fused plan `a` of fused_algorithms() (host code); a
// baseline (fused_baselines(), index -1) is no plan.
template <class F>
decltype(auto) with_fused_plan(const FusedAlgo& a, F&& f) {
#if !defined(__CUDA_ARCH__)
  SYMM_REQUIRE(a.index >= 0 && a.index < FusedPlans::kSize, ErrorCode::kInternal,
               std::string(a.id) + " is not a fused plan of the registry");
#endif
  return detail::with_nth(a.index, f, FusedPlans{});
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
