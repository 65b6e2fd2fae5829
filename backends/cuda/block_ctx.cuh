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
//  - put_ll / reduce_ll (flagged packets, NCCL's LL protocol): no fence and no separate flag;
//    every 8-byte packet carries its own epoch, and why that is enough is in ll_packets.cuh.
//  - Bounded waits: every wait (flag or packets) gives up after h_.timeout_cycles, reports once
//    and poisons the rank so a failed call drains in microseconds (wait_report.cuh).
//
// One concept per header, all included here: vec_math.cuh (vectors of T to fp32 and back, the
// n-source reduction), ll_packets.cuh (flagged packets), wait_report.cuh (the poison word and the
// one timeout reporter), multimem.cuh (NVLS PTX), mma_tile.cuh (the verb mma_tile's tile loop);
// this file holds BlockCtx, the verbs themselves.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/device_handle.h"
#include "backends/cuda/ll_packets.cuh"
#include "backends/cuda/multimem.cuh"
#include "backends/cuda/vec_math.cuh"
#include "backends/cuda/verb_trace.h"
#include "backends/cuda/wait_report.cuh"
#include "core/verbs.h"

// After the pieces above: mma_tile.cuh uses detail::pack (vec_math.cuh) and includes none of them.

#include "backends/cuda/mma_tile.cuh"  // the verb mma_tile (after detail::pack)

namespace symm::cuda {

// kTraced: the kernel stamps its verbs into a buffer (verb_trace.h; traced_program_kernel), an
// instantiation of its own, so untraced kernels carry no trace code: a runtime branch in every
// verb, with the buffer in the handle, cost 3-7 % at 4-64 KiB on 2x H100
// (experiments/results/h100x2/README.md, verb_trace_a08f924).
template <bool kTraced>
class BlockCtxT {
 public:
  static constexpr int kWorldLimit = kNodeWorld;
  static_assert(kWorldLimit == 8, "reduce / reduce_ll / put_ll unroll for at most 8 sources");

  __device__ explicit BlockCtxT(const DeviceHandle& h, VerbTraceBuf trace = {}) : h_(h), trace_(trace) {
    stamp(VerbId::kStart, 0, false);
  }

  __device__ int rank() const { return h_.rank; }
  __device__ int world() const { return h_.world; }
  __device__ int block() const { return int(blockIdx.x); }
  __device__ int blocks() const { return int(gridDim.x); }
  // No side lanes here: a program with one (kSideLane) runs in its own kernel (plans.cu).
  __device__ int lane() const { return 0; }
  __device__ int lanes() const { return 1; }

  template <class T>
  __device__ T* peer(T* p, int r) const {
    if (r == h_.rank) return p;
    const std::size_t off = reinterpret_cast<const char*>(p) - h_.heap_base;
    return reinterpret_cast<T*>(h_.heap_peer[r] + off);
  }

  __device__ void copy(void* dst, const void* src, std::size_t bytes) {
    stamp(VerbId::kCopy, sized(bytes, remote(src)));
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
    // The rest (fewer than kU vectors a thread): two or more in one guarded step, every load in
    // flight before the first store, so a tail costs one round trip. A loop of single vectors paid
    // one round trip each: a 16-KiB piece at 512 threads (2 vectors a thread) took two where 32 KiB
    // took one (4x H200, all_gather.ld 256K at 4 blocks 12.8 us, at 2 blocks 10.7). One vector
    // alone stays the plain load and store it was (guarded as well it measured the same within the
    // runs' spread on one H200: experiments/results/h200x1/tail_ab_7e12b0b and its first_try/).
    if (i + stride < n) {
      uint4 v[kU - 1];
#pragma unroll
      for (int u = 0; u < kU - 1; ++u)
        if (i + u * stride < n) v[u] = s[i + u * stride];
#pragma unroll
      for (int u = 0; u < kU - 1; ++u)
        if (i + u * stride < n) d[i + u * stride] = v[u];
    } else if (i < n) {
      d[i] = s[i];
    }
    pending_ = true;
  }

  template <class T>
  __device__ void reduce(T* dst, const T* const* srcs, int nsrc, std::size_t count, ReduceOp op) {
    stamp(VerbId::kReduce, sized(count * sizeof(T), remote(srcs, nsrc)));
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

  // NVLS. `mc` is a multicast address NCCL set up (Runtime::heap_mc; multimem.cuh says when the
  // host launches a multimem program).
  template <class T>
  __device__ void multimem_reduce(T* mc, std::size_t count, ReduceOp op) {
    stamp(VerbId::kMultimemReduce, uint32_t(count * sizeof(T)));
    flush_wait();
    const std::size_t n = count * sizeof(T) / kVecBytes;
    uint4* p = reinterpret_cast<uint4*>(mc);
    for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) {
      uint4 v;
      detail::mm_ld_reduce<T>(p + i, v, op);
      detail::mm_st(p + i, v);
    }
    pending_ = true;
  }

  // Flagged packets: ll_packets.cuh says why each 8-byte packet needs no fence.
  __device__ void put_ll(void* const* dsts, const void* const* srcs, int n, std::size_t bytes, uint32_t epoch) {
    stamp(VerbId::kPutLl, uint32_t(bytes));
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
      // One vector per thread at most (the small calls): no unrolling over vectors. Unrolled code
      // whose extra vectors a thread skips cost the small calls 4-11 % on 2x H100 (world 2, 4K-256K,
      // graph: experiments/results/h100x2/ll_unroll_d51b489; one GPU, 2-8 ranks: 1-8 %).
      const bool one = nv <= blockDim.x;
      if (n <= 1)
        one ? detail::put_ll_n<1, 1>(d, s, n, same, nv, epoch) : detail::put_ll_n<1, 4>(d, s, n, same, nv, epoch);
      else if (n <= 4)
        one ? detail::put_ll_n<4, 1>(d, s, n, same, nv, epoch) : detail::put_ll_n<4, 2>(d, s, n, same, nv, epoch);
      else
        one ? detail::put_ll_n<8, 1>(d, s, n, same, nv, epoch) : detail::put_ll_n<8, 2>(d, s, n, same, nv, epoch);
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
  __device__ void reduce_ll(T* dst, const void* const* srcs, int nsrc, std::size_t count, uint32_t epoch, ReduceOp op,
                            int plain = -1) {
    stamp(VerbId::kReduceLl, uint32_t(count * sizeof(T)));
    flush_wait();
    const std::size_t n = count * sizeof(T) / kVecBytes;
    auto* d = reinterpret_cast<uint4*>(dst);
    const unsigned long long to = h_.timeout_cycles;
    detail::LlMiss miss;
    const ulonglong2* s[kWorldLimit];  // nsrc <= kWorldLimit, as in reduce
#pragma unroll
    for (int i = 0; i < kWorldLimit; ++i) s[i] = i < nsrc ? static_cast<const ulonglong2*>(srcs[i]) : nullptr;
    const bool ok = plain < 0 ? reduce_ll_by_sources<T, false>(d, s, nsrc, plain, n, epoch, op, to, miss)
                              : reduce_ll_by_sources<T, true>(d, s, nsrc, plain, n, epoch, op, to, miss);
    if (!ok && miss.src >= 0) detail::report_packet_timeout(h_, srcs[miss.src], miss.packet, epoch, miss.seen);
    pending_ = true;
  }

  // Matrix tiles (mma_tile.cuh: the simple WMMA loop, not the wgmma mainloop). Its stores are data
  // stores like copy's: the next release fences them.
  template <class T>
  __device__ void mma_tile(T* c, std::size_t ldc, const T* a, std::size_t lda, const T* b, std::size_t ldb, int m,
                           int n, int k, const T* c_in = nullptr, int n_in = 0, std::size_t in_stride = 0) {
    stamp(VerbId::kMmaTile, uint32_t(m) << 16 | uint32_t(n));
    flush_wait();
    detail::mma_tile_wmma<T>(c, ldc, a, lda, b, ldb, m, n, k, c_in, n_in, in_stride);
    pending_ = true;
  }

  // Orders outside the contract (core/verbs.h) trap the kernel: programs pass constants, so the
  // check folds away for valid ones (barrier orders are checked at compile time).
  __device__ void signal(int peer_rank, uint32_t slot, uint32_t value, MemOrder order) {
    if (!is_signal_order(order)) __trap();
    const bool release = order == MemOrder::kRelease;
    stamp(release ? VerbId::kSignalRelease : VerbId::kSignal,
          uint32_t(peer_rank) | (release && pending_ ? kFenced : 0));
    flush_wait();
    const bool synced = release && pending_;
    if (synced) {
      __syncthreads();
      if (threadIdx.x == 0) asm volatile("fence.acq_rel.sys;" ::: "memory");
      pending_ = false;
    }
    if (threadIdx.x == 0) {
      uint32_t* f = h_.pad_peer[peer_rank] + slot;
      asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(f), "r"(value) : "memory");
    }
    if (synced) store_counter_synced();  // after the flag: off the signal's path
  }

  __device__ void wait(uint32_t slot, uint32_t value, MemOrder order) {
    if (!is_wait_order(order)) __trap();
    const bool acquire = order == MemOrder::kAcquire;
    stamp(acquire ? VerbId::kWaitAcquire : VerbId::kWait, slot);
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
          detail::report_flag_timeout(h_, slot, value, v);
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
    stamp(VerbId::kAdvance, slot);
    flush_wait();
    // Only this block ever writes its counters. The first advance of a slot in a launch: every
    // thread reads the counter itself (one load per warp, no barrier, no shared memory), so the
    // read's round trip overlaps what the program does next until it uses the value (put_ll's
    // and copy's loads of their sources); later advances of the same slot count in registers.
    // The new value is stored by thread 0 after a barrier (no thread of the block can still be
    // reading the old one): the next one a verb makes anyway (store_counter_synced), else one of
    // its own when the block turns to another slot or ends (store_counter).
    if (slot == cached_slot_) {
      counter_dirty_ = true;
      return ++cached_value_;
    }
    store_counter();
    cached_slot_ = slot;
    cached_value_ = *static_cast<volatile const uint32_t*>(h_.pad_local + slot) + 1;
    counter_dirty_ = true;
    return cached_value_;
  }

  // Called by the kernel after the program so a trailing wait's bar.sync is not lost and the
  // block's counter reaches memory for the next launch.
  __device__ void finish() {
    flush_wait();
    store_counter();
    stamp(VerbId::kEnd, stamps_ + 1);
  }

 private:
  // Right after a barrier of the whole block: every thread's advance (its read of the old value)
  // came before it.
  __device__ void store_counter_synced() {
    if (!counter_dirty_) return;
    if (threadIdx.x == 0) *static_cast<volatile uint32_t*>(h_.pad_local + cached_slot_) = cached_value_;
    counter_dirty_ = false;
  }
  __device__ void store_counter() {
    if (!counter_dirty_) return;
    __syncthreads();  // every thread's read of the old value, before it is overwritten
    store_counter_synced();
  }

  // reduce_ll's unrolling by source count (the loads of every source in flight at once).
  template <class T, bool kPlain>
  __device__ bool reduce_ll_by_sources(uint4* d, const ulonglong2* const* s, int nsrc, int plain, std::size_t n,
                                       uint32_t epoch, ReduceOp op, unsigned long long to, detail::LlMiss& miss) {
    if (n <= blockDim.x) {  // one vector per thread at most (the small calls): no unrolling (put_ll says why)
      if (nsrc == 1) return detail::reduce_ll_n<T, 1, 1, kPlain>(d, s, nsrc, plain, n, epoch, op, to, h_.poison, miss);
      if (nsrc <= 2) return detail::reduce_ll_n<T, 2, 1, kPlain>(d, s, nsrc, plain, n, epoch, op, to, h_.poison, miss);
      if (nsrc <= 4) return detail::reduce_ll_n<T, 4, 1, kPlain>(d, s, nsrc, plain, n, epoch, op, to, h_.poison, miss);
    }
    if (nsrc == 1) return detail::reduce_ll_n<T, 1, 4, kPlain>(d, s, nsrc, plain, n, epoch, op, to, h_.poison, miss);
    if (nsrc <= 2) return detail::reduce_ll_n<T, 2, 4, kPlain>(d, s, nsrc, plain, n, epoch, op, to, h_.poison, miss);
    if (nsrc <= 4) return detail::reduce_ll_n<T, 4, 2, kPlain>(d, s, nsrc, plain, n, epoch, op, to, h_.poison, miss);
    return detail::reduce_ll_n<T, 8, 1, kPlain>(d, s, nsrc, plain, n, epoch, op, to, h_.poison, miss);
  }
  // A traced kernel's stamp arguments (verb_trace.h): how many of a copy's or reduce's sources are
  // in a peer's heap (each rank's heap is one window in this process's address space).
  __device__ uint32_t remote(const void* p) const {
    if constexpr (kTraced) {
      const char* c = static_cast<const char*>(p);
      for (int r = 0; r < h_.world; ++r)
        if (r != h_.rank && c >= h_.heap_peer[r] && c < h_.heap_peer[r] + h_.heap_bytes) return 1;
    }
    return 0;
  }
  template <class T>
  __device__ uint32_t remote(const T* const* srcs, int n) const {
    uint32_t k = 0;
    if constexpr (kTraced)
      for (int i = 0; i < n; ++i) k += remote(srcs[i]);
    return k;
  }
  static __device__ uint32_t sized(std::size_t bytes, uint32_t remote_sources) {
    return uint32_t(bytes < kStampBytesMax ? bytes : kStampBytesMax) | remote_sources << kStampRemoteShift;
  }
  // A traced kernel (verb_trace.h): the block meets (so the stamp is when every thread is through
  // the verb before, and a wait's thread 0 has seen its flag), then thread 0 writes the stamp. No
  // barrier for the start: there is nothing before it. Untraced: no code at all.
  __device__ void stamp(VerbId v, uint32_t arg, bool sync = true) {
    if constexpr (kTraced) {
      if (!trace_.stamps) return;  // a traced kernel launched without a buffer: nothing to write
      if (sync) {
        __syncthreads();
        wait_sync_ = false;  // this barrier is the one a wait deferred
      }
      const uint32_t last = trace_.cap - 1;  // the end's slot once the others are full
      if (threadIdx.x == 0 && (stamps_ < last || v == VerbId::kEnd)) {
        VerbStamp* s = trace_.stamps + std::size_t(blockIdx.x) * trace_.cap + min(stamps_, last);
        unsigned long long gt;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt));
        s->clk = static_cast<unsigned long long>(clock64());
        s->gt = gt;
        s->verb = uint32_t(v);
        s->arg = arg;
      }
      ++stamps_;
    }
  }
  __device__ void flush_wait() {
    if (wait_sync_) {
      __syncthreads();
      wait_sync_ = false;
      store_counter_synced();
    }
  }

  const DeviceHandle& h_;
  VerbTraceBuf trace_;                  // kTraced only
  bool pending_ = true;                 // data verbs (or the launch's predecessors) not yet covered by a fence
  bool wait_sync_ = false;              // thread 0 finished waits the other threads have not synced on
  uint32_t cached_slot_ = 0xFFFFFFFFu;  // the counter slot last advanced, and its value
  uint32_t cached_value_ = 0;
  bool counter_dirty_ = false;  // cached_value_ not yet stored (store_counter)
  uint32_t stamps_ = 0;         // stamps this block made (a traced call)
};

using BlockCtx = BlockCtxT<false>;
static_assert(BlockVerbs<BlockCtx>);
static_assert(BlockVerbs<BlockCtxT<true>>);

}  // namespace symm::cuda
