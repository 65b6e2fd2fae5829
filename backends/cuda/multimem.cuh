// Multimem PTX (NVLS) of the verb multimem_reduce (block_ctx.cuh): one 16-byte multimem.ld_reduce
// (the switch reduces every rank's copy of the address) and one 16-byte multimem.st (stores to
// every rank's copy), on a multicast address NCCL set up (Runtime::heap_mc). The host launches a
// multimem program only where it has one and no safety variable forbids it (host_logic.h,
// multicast_refusal), never on the lent machines.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/common.h"

namespace symm::cuda::detail {

// One multimem.ld_reduce of 16 bytes; `op_type` is the PTX "<op>.<vector type>" suffix.
#define SYMM_MM_LD_REDUCE(op_type)                                                      \
  asm volatile("multimem.ld_reduce.relaxed.sys.global." op_type " {%0,%1,%2,%3}, [%4];" \
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)                             \
               : "l"(p)                                                                 \
               : "memory")
template <class T>
__device__ inline void mm_ld_reduce(const uint4* p, uint4& v, ReduceOp op) {
  if constexpr (std::is_same_v<T, bf16>) {
    if (op == ReduceOp::kSum)
      SYMM_MM_LD_REDUCE("add.acc::f32.v4.bf16x2");
    else if (op == ReduceOp::kMax)
      SYMM_MM_LD_REDUCE("max.v4.bf16x2");
    else
      SYMM_MM_LD_REDUCE("min.v4.bf16x2");
  } else if constexpr (std::is_same_v<T, fp16>) {
    if (op == ReduceOp::kSum)
      SYMM_MM_LD_REDUCE("add.acc::f32.v4.f16x2");
    else if (op == ReduceOp::kMax)
      SYMM_MM_LD_REDUCE("max.v4.f16x2");
    else
      SYMM_MM_LD_REDUCE("min.v4.f16x2");
  } else {
    // multimem.ld_reduce has no fp32 min/max: check_args refuses those (never launched anyway).
    if (op != ReduceOp::kSum) __trap();
    SYMM_MM_LD_REDUCE("add.v4.f32");
  }
}
#undef SYMM_MM_LD_REDUCE

// One multimem.st of 16 bytes (the bits of v, whatever T: a store converts nothing).
__device__ __forceinline__ void mm_st(uint4* p, const uint4& v) {
  asm volatile("multimem.st.relaxed.sys.global.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
}

}  // namespace symm::cuda::detail
