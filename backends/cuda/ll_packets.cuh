// Flagged packets (NCCL's LL protocol) on CUDA, the bodies of the verbs put_ll and reduce_ll
// (block_ctx.cuh). A packet is one 64-bit word, (epoch << 32) | data, i.e. {4 data bytes, 4-byte
// epoch} in memory. The writer stores two packets per instruction with st.relaxed.sys.global.v2.u64
// and the reader polls with
// ld.relaxed.sys.global.v2.u64. The PTX memory model treats a vector access as a set of
// scalar accesses of its element size (in unspecified order), and an aligned 64-bit scalar
// access is single-copy atomic: so the reader sees each packet either entirely old or
// entirely new, and a packet whose epoch half equals the epoch it waits for carries this
// call's data half. (The .v4.u32 form NCCL uses would put the same bytes on the wire, but the
// model only promises 32-bit atomicity for its elements; .v2.u64 states the 8-byte atomicity
// the protocol relies on.) Nothing orders packets among themselves, and nothing needs to:
// every packet carries its own flag, so no fence and no separate flag. Stale packets hold
// older epochs of the same block (core/algos/ll_layout.h), hence the exact-equality test.
// Waits are bounded and reported as every wait of a verb is (wait_report.cuh).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/vec_math.cuh"
#include "backends/cuda/wait_report.cuh"
#include "core/common.h"

namespace symm::cuda::detail {

// Two packets (16 bytes) per access; each 64-bit element is single-copy atomic (see the top).
__device__ __forceinline__ void st_packets(ulonglong2* p, unsigned long long a, unsigned long long b) {
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1,%2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
__device__ __forceinline__ ulonglong2 ld_packets(const ulonglong2* p) {
  ulonglong2 v;
  asm volatile("ld.relaxed.sys.global.v2.u64 {%0,%1}, [%2];" : "=l"(v.x), "=l"(v.y) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long packet(uint32_t data, uint32_t epoch) {
  return (static_cast<unsigned long long>(epoch) << 32) | data;
}
// put_ll of up to kN transfers, kU vectors each per thread per step: every load of a step is in
// flight before the first packet store, so n transfers cost one load latency, not n. When every
// transfer sends the same source (all_reduce, all_gather) one load serves all destinations.
template <int kN, int kU>
__device__ __forceinline__ void put_ll_n(ulonglong2* const* dst, const uint4* const* src, int n, bool same,
                                         std::size_t nv, uint32_t epoch) {
  const std::size_t stride = blockDim.x;
  for (std::size_t i = threadIdx.x; i < nv; i += kU * stride) {
    uint4 v[kN][kU];
#pragma unroll
    for (int s = 0; s < kN; ++s)
#pragma unroll
      for (int u = 0; u < kU; ++u)
        if (s < n && (s == 0 || !same) && i + u * stride < nv) v[s][u] = src[s][i + u * stride];
#pragma unroll
    for (int s = 0; s < kN; ++s)
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        if (s >= n || i + u * stride >= nv) continue;
        const uint4 x = same ? v[0][u] : v[s][u];  // both indices compile-time: stays in registers
        ulonglong2* q = dst[s] + 2 * (i + u * stride);
        st_packets(q, packet(x.x, epoch), packet(x.y, epoch));
        st_packets(q + 1, packet(x.z, epoch), packet(x.w, epoch));
      }
  }
}
__device__ __forceinline__ bool ready(const ulonglong2& q, uint32_t epoch) {
  return uint32_t(q.x >> 32) == epoch && uint32_t(q.y >> 32) == epoch;
}
// The 16 data bytes of one data vector, from its 4 packets (lo: packets 0-1, hi: 2-3).
__device__ __forceinline__ uint4 data_of(const ulonglong2& lo, const ulonglong2& hi) {
  return make_uint4(uint32_t(lo.x), uint32_t(lo.y), uint32_t(hi.x), uint32_t(hi.y));
}

// What a timed-out packet wait reports: which source buffer, which packet, what it saw.
struct LlMiss {
  int src = -1;
  std::size_t packet = 0;
  uint32_t seen = 0;
};

// Data vector i of a packet buffer is the 32 bytes at [32 i, 32 i + 32): two 16-byte loads.
// Each thread keeps kN sources x kU vectors x 2 loads in flight, and re-polls only the
// 16-byte halves whose epochs are not there yet. With kPlain, source `plain` is a plain buffer of
// data vectors instead (reduce_ll's contract, core/verbs.h): loaded with the first poll, never
// waited on; its slots of p hold packets made of its data with the awaited epoch, so the
// checks and the sum below treat every source alike. Without kPlain (plain < 0) the loop has no
// such test at all: on 4x H100 (experiments/results/h100x4/ll_self_f0c558d) a runtime test in
// it cost the all-reduce 2-3 % at 4K-16K. Returns false on timeout (and fills miss)
// or when the rank is poisoned (miss.src stays -1: an earlier wait has reported already).
template <class T, int kN, int kU, bool kPlain>
__device__ __forceinline__ bool reduce_ll_n(uint4* dst, const ulonglong2* const* src, int nsrc, int plain,
                                            std::size_t n, uint32_t epoch, ReduceOp op, unsigned long long timeout,
                                            const uint32_t* poison, LlMiss& miss) {
  constexpr int kPer = Vec<T>::kPer;
  const std::size_t stride = blockDim.x;
  bool ok = true;
  for (std::size_t i = threadIdx.x; i < n; i += kU * stride) {
    ulonglong2 p[kN][kU][2];
#pragma unroll
    for (int s = 0; s < kN; ++s)
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        if (s >= nsrc || i + u * stride >= n) continue;
        if (kPlain && s == plain) {
          const uint4 v = reinterpret_cast<const uint4*>(src[s])[i + u * stride];
          p[s][u][0] = make_ulonglong2(packet(v.x, epoch), packet(v.y, epoch));
          p[s][u][1] = make_ulonglong2(packet(v.z, epoch), packet(v.w, epoch));
          continue;
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) p[s][u][h] = ld_packets(src[s] + 2 * (i + u * stride) + h);
      }
    long long t0 = 0;
    uint32_t polls = 0;
    for (bool first = true;; first = false) {
      bool all = true;
#pragma unroll
      for (int s = 0; s < kN; ++s)
#pragma unroll
        for (int u = 0; u < kU; ++u)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            if (s < nsrc && i + u * stride < n && !ready(p[s][u][h], epoch)) all = false;
      if (all) break;
      if ((polls++ & (kPoisonEvery - 1)) == 0 && poisoned(poison)) {
        ok = false;
        break;
      }
      if (first) {
        t0 = clock64();
      } else if (static_cast<unsigned long long>(clock64() - t0) > timeout) {
#pragma unroll
        for (int s = 0; s < kN; ++s)
#pragma unroll
          for (int u = 0; u < kU; ++u)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              if (miss.src < 0 && s < nsrc && i + u * stride < n && !ready(p[s][u][h], epoch)) {
                const bool x = uint32_t(p[s][u][h].x >> 32) != epoch;
                miss.src = s;
                miss.packet = 4 * (i + u * stride) + 2 * h + (x ? 0 : 1);
                miss.seen = uint32_t((x ? p[s][u][h].x : p[s][u][h].y) >> 32);
              }
        ok = false;
        break;
      }
#pragma unroll
      for (int s = 0; s < kN; ++s)
#pragma unroll
        for (int u = 0; u < kU; ++u)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            if (s < nsrc && i + u * stride < n && !ready(p[s][u][h], epoch))
              p[s][u][h] = ld_packets(src[s] + 2 * (i + u * stride) + h);
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      if (i + u * stride >= n) continue;
      if (kN == 1 || nsrc == 1) {  // unpack: a copy, no arithmetic
        dst[i + u * stride] = data_of(p[0][u][0], p[0][u][1]);
        continue;
      }
      float acc[kPer], f[kPer];
      unpack<T>(data_of(p[0][u][0], p[0][u][1]), acc);
#pragma unroll
      for (int s = 1; s < kN; ++s) {
        if (s < nsrc) {
          unpack<T>(data_of(p[s][u][0], p[s][u][1]), f);
#pragma unroll
          for (int k = 0; k < kPer; ++k) acc[k] = apply(acc[k], f[k], op);
        }
      }
      dst[i + u * stride] = pack<T>(acc);
    }
    if (!ok) break;
  }
  return ok;
}

}  // namespace symm::cuda::detail
