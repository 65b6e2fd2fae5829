// The CUDA block context: every verb of core/verbs.h as block-cooperative device code.
//
// This is the only place that knows about threads. All threads of a block call each verb
// with the same arguments (the core programs are block-uniform), so the bookkeeping below
// (pending_, wait_sync_) evolves identically in every thread and needs no communication.
//
// Memory ordering, PTX memory model terms:
//  - signal(kRelease): bar.sync orders every thread's earlier loads and stores before thread
//    0 in causality order; thread 0 then issues fence.acq_rel.sys followed by st.relaxed.sys,
//    a release pattern, and fences are cumulative, so the peer that acquires the flag sees the
//    whole block's stores (and what preceded the launch). Once fenced, further signals with no
//    data verb in between reuse that fence: each later st.relaxed.sys of thread 0 still
//    follows the fence in program order, so it is a release pattern of its own.
//  - wait(kAcquire): thread 0 spins with ld.acquire.sys; the bar.sync that follows extends
//    the acquire to every thread of the block. Consecutive waits share one bar.sync (deferred
//    to the next non-wait verb): the other threads have nothing to do until all flags arrived.
//  - put_ll / reduce_ll (flagged packets, NCCL's LL protocol): a packet is one 64-bit word,
//    (epoch << 32) | data, i.e. {4 data bytes, 4-byte epoch} in memory. The writer stores two
//    packets per instruction with st.relaxed.sys.global.v2.u64 and the reader polls with
//    ld.relaxed.sys.global.v2.u64. The PTX memory model treats a vector access as a set of
//    scalar accesses of its element size (in unspecified order), and an aligned 64-bit scalar
//    access is single-copy atomic: so the reader sees each packet either entirely old or
//    entirely new, and a packet whose epoch half equals the epoch it waits for carries this
//    call's data half. (The .v4.u32 form NCCL uses would put the same bytes on the wire, but the
//    model only promises 32-bit atomicity for its elements; .v2.u64 states the 8-byte atomicity
//    the protocol relies on.) Nothing orders packets among themselves, and nothing needs to:
//    every packet carries its own flag, so no fence and no separate flag. Stale packets hold
//    older epochs of the same block (core/algos/ll_layout.h), hence the exact-equality test.
//  - Bounded waits: every wait (flag or packets) gives up after h_.timeout_cycles, records the
//    first expiry in h_.error (the host polls it) and poisons the rank (h_.poison); a wait whose
//    first look fails reads the poison word, and again every kPoisonEvery polls, and returns at
//    once if it is set. A failed call thus drains in microseconds, and an already satisfied
//    wait pays nothing for the check.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "backends/cuda/device_handle.h"
#include "core/verbs.h"

namespace symm::cuda {

namespace detail {

// Polls between two looks at the poison word inside a spin loop (a power of two).
inline constexpr uint32_t kPoisonEvery = 64;

// Has a wait of this rank expired? Device memory, written once by the first expiry.
__device__ __forceinline__ bool poisoned(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v != 0;
}

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

// kN sources (at most; nsrc <= kN is predicated), kU vectors per thread per step: kN * kU
// 16-byte loads are in flight per thread before the first use, which is what hides the
// ~1-2 us NVLink load latency.
template <class T, int kN, int kU>
__device__ __forceinline__ void reduce_n(uint4* dst, const uint4* const* src, int nsrc, std::size_t n, ReduceOp op) {
  constexpr int kPer = Vec<T>::kPer;
  const std::size_t stride = blockDim.x;
  std::size_t i = threadIdx.x;
  for (; i + (kU - 1) * stride < n; i += kU * stride) {
    uint4 v[kN][kU];
#pragma unroll
    for (int s = 0; s < kN; ++s)
#pragma unroll
      for (int u = 0; u < kU; ++u)
        if (s < nsrc) v[s][u] = src[s][i + u * stride];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
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
  for (; i < n; i += stride) {
    float acc[kPer], f[kPer];
    unpack<T>(src[0][i], acc);
    for (int s = 1; s < nsrc; ++s) {
      unpack<T>(src[s][i], f);
#pragma unroll
      for (int k = 0; k < kPer; ++k) acc[k] = apply(acc[k], f[k], op);
    }
    dst[i] = pack<T>(acc);
  }
}

// ---- flagged packets ------------------------------------------------------------------
// Two packets (16 bytes) per access; each 64-bit element is single-copy atomic (see above).
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
// 16-byte halves whose epochs are not there yet. Returns false on timeout (and fills miss) or
// when the rank is poisoned (miss.src stays -1: an earlier wait has reported already).
template <class T, int kN, int kU>
__device__ __forceinline__ bool reduce_ll_n(uint4* dst, const ulonglong2* const* src, int nsrc, std::size_t n,
                                            uint32_t epoch, ReduceOp op, unsigned long long timeout,
                                            const uint32_t* poison, LlMiss& miss) {
  constexpr int kPer = Vec<T>::kPer;
  const std::size_t stride = blockDim.x;
  bool ok = true;
  for (std::size_t i = threadIdx.x; i < n; i += kU * stride) {
    ulonglong2 p[kN][kU][2];
#pragma unroll
    for (int s = 0; s < kN; ++s)
#pragma unroll
      for (int u = 0; u < kU; ++u)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (s < nsrc && i + u * stride < n) p[s][u][h] = ld_packets(src[s] + 2 * (i + u * stride) + h);
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

}  // namespace detail

}  // namespace symm::cuda

#include "backends/cuda/mma_tile.cuh"  // the verb mma_tile (after detail::pack)

namespace symm::cuda {

class BlockCtx {
 public:
  static constexpr int kWorldLimit = kNodeWorld;
  static_assert(kWorldLimit == 8, "reduce / reduce_ll / put_ll unroll for at most 8 sources");

  __device__ BlockCtx(const DeviceHandle& h, uint32_t* smem_word) : h_(h), smem_(smem_word) {}

  __device__ int rank() const { return h_.rank; }
  __device__ int world() const { return h_.world; }
  __device__ int block() const { return int(blockIdx.x); }
  __device__ int blocks() const { return int(gridDim.x); }

  template <class T>
  __device__ T* peer(T* p, int r) const {
    if (r == h_.rank) return p;
    const std::size_t off = reinterpret_cast<const char*>(p) - h_.heap_base;
    return reinterpret_cast<T*>(h_.heap_peer[r] + off);
  }

  __device__ void copy(void* dst, const void* src, std::size_t bytes) {
    flush_wait();
    constexpr int kU = 4;
    const std::size_t n = bytes / kVecBytes, stride = blockDim.x;
    const uint4* s = static_cast<const uint4*>(src);
    uint4* d = static_cast<uint4*>(dst);
    std::size_t i = threadIdx.x;
    for (; i + (kU - 1) * stride < n; i += kU * stride) {
      uint4 v[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u) v[u] = s[i + u * stride];
#pragma unroll
      for (int u = 0; u < kU; ++u) d[i + u * stride] = v[u];
    }
    for (; i < n; i += stride) d[i] = s[i];
    pending_ = true;
  }

  template <class T>
  __device__ void reduce(T* dst, const T* const* srcs, int nsrc, std::size_t count, ReduceOp op) {
    flush_wait();
    const std::size_t n = count * sizeof(T) / kVecBytes;
    auto* d = reinterpret_cast<uint4*>(dst);
    // nsrc <= kWorldLimit (8): every program passes at most world sources.
    const uint4* s[kWorldLimit];
#pragma unroll
    for (int i = 0; i < kWorldLimit; ++i) s[i] = i < nsrc ? reinterpret_cast<const uint4*>(srcs[i]) : nullptr;
    if (nsrc <= 2)
      detail::reduce_n<T, 2, 4>(d, s, nsrc, n, op);
    else if (nsrc <= 4)
      detail::reduce_n<T, 4, 2>(d, s, nsrc, n, op);
    else
      detail::reduce_n<T, 8, 1>(d, s, nsrc, n, op);
    pending_ = true;
  }

  // NVLS. `mc` is a multicast address NCCL set up (Runtime::heap_mc); the host launches a
  // multimem program only where it has one and no safety variable forbids it
  // (backends/cuda/host_logic.h, multicast_refusal), never on the lent machines.
  template <class T>
  __device__ void multimem_reduce(T* mc, std::size_t count, ReduceOp op) {
    flush_wait();
    const std::size_t n = count * sizeof(T) / kVecBytes;
    uint4* p = reinterpret_cast<uint4*>(mc);
    for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) {
      uint4 v;
      mm_ld_reduce<T>(p + i, v, op);
      asm volatile("multimem.st.relaxed.sys.global.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p + i), "r"(v.x), "r"(v.y),
                   "r"(v.z), "r"(v.w)
                   : "memory");
    }
    pending_ = true;
  }

  // Flagged packets: see the header comment for why each 8-byte packet needs no fence.
  __device__ void put_ll(void* const* dsts, const void* const* srcs, int n, std::size_t bytes, uint32_t epoch) {
    flush_wait();
    const std::size_t nv = bytes / kVecBytes;
    // Measured on 4x H200 (experiments/results/h200x4/runs: 6aa5a19a vs 5d823ca2): issuing all n transfers
    // together cut one_shot_ll at 4 KiB from 3.60 to 3.33 us (pieces of 1 KiB per transfer), but
    // slowed larger pieces (256 KiB all-reduce, 4 KiB per transfer: 8.7 -> 12.3 us; 1 MiB
    // reduce-scatter 9.5 -> 13.3 us). So only latency-bound pieces are issued together.
    constexpr std::size_t kTogetherMaxBytes = 1024;
    if (bytes <= kTogetherMaxBytes) {  // n <= kWorldLimit (8): one transfer per rank
      ulonglong2* d[kWorldLimit];
      const uint4* s[kWorldLimit];
      bool same = true;
#pragma unroll
      for (int i = 0; i < kWorldLimit; ++i) {
        d[i] = i < n ? static_cast<ulonglong2*>(dsts[i]) : nullptr;
        s[i] = i < n ? static_cast<const uint4*>(srcs[i]) : nullptr;
        if (i < n && s[i] != s[0]) same = false;
      }
      if (n <= 1)
        detail::put_ll_n<1, 4>(d, s, n, same, nv, epoch);
      else if (n <= 4)
        detail::put_ll_n<4, 2>(d, s, n, same, nv, epoch);
      else
        detail::put_ll_n<8, 2>(d, s, n, same, nv, epoch);
    } else {
      // Bandwidth-bound pieces: one transfer at a time.
      for (int t = 0; t < n; ++t) {
        ulonglong2* d = static_cast<ulonglong2*>(dsts[t]);
        const uint4* s = static_cast<const uint4*>(srcs[t]);
        detail::put_ll_n<1, 4>(&d, &s, 1, true, nv, epoch);
      }
    }
    pending_ = true;
  }

  template <class T>
  __device__ void reduce_ll(T* dst, const void* const* srcs, int nsrc, std::size_t count, uint32_t epoch, ReduceOp op) {
    flush_wait();
    const std::size_t n = count * sizeof(T) / kVecBytes;
    auto* d = reinterpret_cast<uint4*>(dst);
    const unsigned long long to = h_.timeout_cycles;
    detail::LlMiss miss;
    bool ok = true;
    const ulonglong2* s[kWorldLimit];  // nsrc <= kWorldLimit, as in reduce
#pragma unroll
    for (int i = 0; i < kWorldLimit; ++i) s[i] = i < nsrc ? static_cast<const ulonglong2*>(srcs[i]) : nullptr;
    if (nsrc == 1)
      ok = detail::reduce_ll_n<T, 1, 4>(d, s, nsrc, n, epoch, op, to, h_.poison, miss);
    else if (nsrc <= 2)
      ok = detail::reduce_ll_n<T, 2, 4>(d, s, nsrc, n, epoch, op, to, h_.poison, miss);
    else if (nsrc <= 4)
      ok = detail::reduce_ll_n<T, 4, 2>(d, s, nsrc, n, epoch, op, to, h_.poison, miss);
    else
      ok = detail::reduce_ll_n<T, 8, 1>(d, s, nsrc, n, epoch, op, to, h_.poison, miss);
    if (!ok && miss.src >= 0) report_ll_timeout(srcs[miss.src], miss.packet, epoch, miss.seen);
    pending_ = true;
  }

  // Matrix tiles (mma_tile.cuh: the simple WMMA loop, not the wgmma mainloop). Its stores are data
  // stores like copy's: the next release fences them.
  template <class T>
  __device__ void mma_tile(T* c, std::size_t ldc, const T* a, std::size_t lda, const T* b, std::size_t ldb, int m,
                           int n, int k) {
    flush_wait();
    detail::mma_tile_wmma<T>(c, ldc, a, lda, b, ldb, m, n, k);
    pending_ = true;
  }

  // Orders outside the contract (core/verbs.h) trap the kernel: programs pass constants, so the
  // check folds away for valid ones (barrier orders are checked at compile time).
  __device__ void signal(int peer_rank, uint32_t slot, uint32_t value, MemOrder order) {
    if (!is_signal_order(order)) __trap();
    flush_wait();
    const bool release = order == MemOrder::kRelease;
    if (release && pending_) {
      __syncthreads();
      if (threadIdx.x == 0) asm volatile("fence.acq_rel.sys;" ::: "memory");
      pending_ = false;
    }
    if (threadIdx.x == 0) {
      uint32_t* f = h_.pad_peer[peer_rank] + slot;
      asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(f), "r"(value) : "memory");
    }
  }

  __device__ void wait(uint32_t slot, uint32_t value, MemOrder order) {
    if (!is_wait_order(order)) __trap();
    const bool acquire = order == MemOrder::kAcquire;
    if (threadIdx.x == 0) {
      const uint32_t* f = h_.pad_local + slot;
      const long long t0 = clock64();
      uint32_t v;
      for (uint32_t polls = 0;; ++polls) {
        if (acquire)
          asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
        else
          asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
        if (v >= value) break;
        if ((polls & (detail::kPoisonEvery - 1)) == 0 && detail::poisoned(h_.poison)) break;
        if (static_cast<unsigned long long>(clock64() - t0) > h_.timeout_cycles) {
          report_timeout(slot, value, v);
          break;
        }
      }
    }
    wait_sync_ = true;
    // What this acquire made visible must be covered by the next release too (cumulativity,
    // core/verbs.h): a fence issued before this wait does not, so the next release fences again.
    if (acquire) pending_ = true;
  }

  __device__ uint32_t advance(uint32_t slot) {
    flush_wait();
    // Only this block ever writes its counters, so after the first read of a launch every
    // thread can track the value itself: later advances of the same slot skip the global load
    // and the shared-memory broadcast (a barrier's advance is then off its critical path).
    if (slot == cached_slot_) {
      ++cached_value_;
      if (threadIdx.x == 0) *(h_.pad_local + slot) = cached_value_;
      return cached_value_;
    }
    __syncthreads();  // the previous advance's readers are done with *smem_
    if (threadIdx.x == 0) {
      volatile uint32_t* c = h_.pad_local + slot;
      const uint32_t v = *c + 1;
      *c = v;
      *smem_ = v;
    }
    __syncthreads();
    cached_slot_ = slot;
    cached_value_ = *smem_;
    return cached_value_;
  }

  // Called by the kernel after the program so a trailing wait's bar.sync is not lost.
  __device__ void finish() { flush_wait(); }

 private:
  __device__ void flush_wait() {
    if (wait_sync_) {
      __syncthreads();
      wait_sync_ = false;
    }
  }

  // The first expiry of the rank poisons it (every later wait returns at once) and fills the
  // record; later expiries (other threads or blocks racing it) change neither.
  __device__ void poison() const { atomicExch(h_.poison, 1u); }

  __device__ void report_timeout(uint32_t slot, uint32_t expected, uint32_t seen) const {
    poison();
    WaitError* e = h_.error;
    if (atomicCAS_system(&e->tripped, 0u, 1u) == 0u) {
      e->rank = h_.rank;
      e->block = int(blockIdx.x);
      e->slot = slot;
      e->expected = expected;
      e->seen = seen;
      e->kind = WaitError::kFlag;
      __threadfence_system();  // the fields before `complete`: the host reads them after it
      *reinterpret_cast<volatile uint32_t*>(&e->complete) = 1u;
    }
  }

  __device__ void report_ll_timeout(const void* buf, std::size_t packet, uint32_t expected, uint32_t seen) const {
    poison();
    WaitError* e = h_.error;
    if (atomicCAS_system(&e->tripped, 0u, 1u) == 0u) {
      e->rank = h_.rank;
      e->block = int(blockIdx.x);
      e->slot = 0;
      e->expected = expected;
      e->seen = seen;
      e->kind = WaitError::kPackets;
      e->packet = uint32_t(packet);
      e->offset = static_cast<unsigned long long>(static_cast<const char*>(buf) - h_.heap_base);
      __threadfence_system();  // the fields before `complete`: the host reads them after it
      *reinterpret_cast<volatile uint32_t*>(&e->complete) = 1u;
    }
  }

  // One multimem.ld_reduce of 16 bytes; `op_type` is the PTX "<op>.<vector type>" suffix.
#define SYMM_MM_LD_REDUCE(op_type)                                                      \
  asm volatile("multimem.ld_reduce.relaxed.sys.global." op_type " {%0,%1,%2,%3}, [%4];" \
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)                             \
               : "l"(p)                                                                 \
               : "memory")
  template <class T>
  __device__ static void mm_ld_reduce(const uint4* p, uint4& v, ReduceOp op) {
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

  const DeviceHandle& h_;
  uint32_t* smem_;
  bool pending_ = true;                 // data verbs (or the launch's predecessors) not yet covered by a fence
  bool wait_sync_ = false;              // thread 0 finished waits the other threads have not synced on
  uint32_t cached_slot_ = 0xFFFFFFFFu;  // the counter slot last advanced, and its value
  uint32_t cached_value_ = 0;
};

static_assert(BlockVerbs<BlockCtx>);

}  // namespace symm::cuda
