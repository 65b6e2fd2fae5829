// Vector math of the CUDA verbs (block_ctx.cuh): a 16-byte vector (uint4) of T unpacked to fp32
// and packed back (round to nearest), the reduction operator, and the block-cooperative reduction
// of up to kN sources that keeps kN x kU loads in flight per thread. Accumulation is in fp32.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/common.h"

namespace symm::cuda::detail {

template <class T>
struct Vec {
  static constexpr int kPer = int(kVecBytes / sizeof(T));
};

template <class T>
__device__ __forceinline__ void unpack(const uint4& v, float* f) {
  if constexpr (std::is_same_v<T, float>) {
    f[0] = __uint_as_float(v.x);
    f[1] = __uint_as_float(v.y);
    f[2] = __uint_as_float(v.z);
    f[3] = __uint_as_float(v.w);
  } else {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float2 p;
      if constexpr (std::is_same_v<T, bf16>)
        p = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w[i]));
      else
        p = __half22float2(*reinterpret_cast<const __half2*>(&w[i]));
      f[2 * i] = p.x;
      f[2 * i + 1] = p.y;
    }
  }
}

template <class T>
__device__ __forceinline__ uint4 pack(const float* f) {
  uint4 v;
  if constexpr (std::is_same_v<T, float>) {
    v.x = __float_as_uint(f[0]);
    v.y = __float_as_uint(f[1]);
    v.z = __float_as_uint(f[2]);
    v.w = __float_as_uint(f[3]);
  } else {
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (std::is_same_v<T, bf16>) {
        __nv_bfloat162 p = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
        w[i] = *reinterpret_cast<uint32_t*>(&p);
      } else {
        __half2 p = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
        w[i] = *reinterpret_cast<uint32_t*>(&p);
      }
    }
    v = make_uint4(w[0], w[1], w[2], w[3]);
  }
  return v;
}

__device__ __forceinline__ float apply(float a, float b, ReduceOp op) {
  // max/min propagate NaN like symm::combine (fmaxf/fminf would drop it and hide a poisoned,
  // unwritten source).
  if (op == ReduceOp::kSum) return a + b;
  if (a != a || b != b) return a + b;
  return op == ReduceOp::kMax ? (a > b ? a : b) : (a < b ? a : b);
}

// kN sources (at most; nsrc <= kN is predicated), kU vectors per thread from vector i (stride
// apart): all kN * kU 16-byte loads are issued before the first use, which is what hides the
// ~1 us NVLink load round trip: the sources' round trips overlap instead of adding up.
// With kTail, vector i + u * stride is there only while it is below n (the guarded last step).
template <class T, int kN, int kU, bool kTail = false>
__device__ __forceinline__ void reduce_vectors(uint4* dst, const uint4* const* src, int nsrc, std::size_t i,
                                               std::size_t stride, ReduceOp op, std::size_t n = 0) {
  constexpr int kPer = Vec<T>::kPer;
  uint4 v[kN][kU];
#pragma unroll
  for (int s = 0; s < kN; ++s)
#pragma unroll
    for (int u = 0; u < kU; ++u)
      if (s < nsrc && (!kTail || i + u * stride < n)) v[s][u] = src[s][i + u * stride];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    if (kTail && i + u * stride >= n) continue;
    float acc[kPer], f[kPer];
    unpack<T>(v[0][u], acc);
#pragma unroll
    for (int s = 1; s < kN; ++s) {
      if (s < nsrc) {
        unpack<T>(v[s][u], f);
#pragma unroll
        for (int k = 0; k < kPer; ++k) acc[k] = apply(acc[k], f[k], op);
      }
    }
    dst[i + u * stride] = pack<T>(acc);
  }
}

// A block's n-vector reduction of nsrc <= kN sources: kU vectors per thread per step, then the
// rest (fewer than kU a thread): two or more in one guarded step, every load of a step in flight
// together; one alone unguarded (block_ctx.cuh copy says why).
// (The rest once loaded one source after another, each waiting for the one before: a reduce of
// a peer's vector and its own cost two round trips where a copy costs one; every small reduce
// took that path: verb traces on 2x / 4x H100, experiments/tables/verbs_*.md. Then it took one
// vector a thread per step: two sources' 16-KiB piece at 512 threads paid two round trips.)
template <class T, int kN, int kU>
__device__ __forceinline__ void reduce_n(uint4* dst, const uint4* const* src, int nsrc, std::size_t n, ReduceOp op) {
  const std::size_t stride = blockDim.x;
  std::size_t i = threadIdx.x;
  for (; i + (kU - 1) * stride < n; i += kU * stride) reduce_vectors<T, kN, kU>(dst, src, nsrc, i, stride, op);
  if constexpr (kU > 2) {
    if (i + stride < n) return reduce_vectors<T, kN, kU - 1, true>(dst, src, nsrc, i, stride, op, n);
  }
  if (i < n) reduce_vectors<T, kN, 1>(dst, src, nsrc, i, stride, op);
}

}  // namespace symm::cuda::detail
