// The mm_rs tile programs' pieces beside the tiles (tile_fused.cu's MmRsTiles): the tiles' release
// signals (the signal warp's handshake with the consumers), and the reduce of every rank's partial
// tiles of my rows, by loads (the last band's, reduce_vectors), by bulk copies into an idle ring (a
// reduce block's, bulk_reduce_*) or into shared memory past the ring (a computing block's side lanes,
// side_reduce). Included by tile_fused.cu only.
#pragma once

#include <cuda.h>

#include "backends/cuda/block_ctx.cuh"
#include "backends/cuda/tile_epilogue.cuh"
#include "backends/cuda/wait_report.cuh"
#include "core/algos/mm_rs_tile_reduce.h"

namespace symm::cuda::tile::mmrs {

using L = MmRsTileLayout;

// MmRsTiles' compute walk of block bk of nc: band by band, its positions of each band's walk (every
// nc-th), f(round i, tile j) for each (MmRsTileLayout::walk_begin / at). The producer's loads, the
// consumers' tiles and the signal warp's releases all follow it.
template <class F>
__device__ __forceinline__ void walk_tiles(const symm::TileGrid& g, int w, uint32_t bk, uint32_t nc, F f) {
  for (uint32_t s = 0; s < L::bands(g); ++s)
    for (uint32_t t = L::first_of(L::walk_begin(g, w, s), bk, nc); t < L::walk_end(g, w, s); t += nc) {
      int i;
      uint32_t j;
      L::at(g, w, s, t, i, j);
      f(i, j);
    }
}

// One thread, after a barrier that ordered the tile's stores of every consumer thread before it:
// BlockCtx::signal(peer, slot, value, kRelease).
__device__ inline void signal_release(const DeviceHandle& h, int peer, uint32_t slot, uint32_t value) {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
  uint32_t* f = h.pad_peer[peer] + slot;
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(f), "r"(value) : "memory");
}

// The two consumer warpgroups (256 threads) meet; the producer warpgroup takes no part.
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 256;" ::: "memory"); }

template <class T>
__device__ __forceinline__ T* peer_of(const DeviceHandle& h, T* p, int r) {
  if (r == h.rank) return p;
  return reinterpret_cast<T*>(h.heap_peer[r] + (reinterpret_cast<const char*>(p) - h.heap_base));
}

// dst[i] = sum over s < nsrc of src[s][i] (16-byte vectors of T, fp32 sums in source order), by
// `nthreads` threads, NS >= nsrc source slots: kInFlight / NS vectors per source in flight per
// thread (at least one). A reduce over NVLink is bound by the loads in flight (2 per source
// measured ~4 GB/s per block on 2x H200). Inlined: called (not inlined), the reduce blocks ran
// 2.2x slower (scripts/gpu/tile_bands.sh, 2x H200), and a reduce between a block's tiles made the
// 128 x 256 kernels spill ~2 KB per thread (10-130 % slower): this reduce by loads runs only
// after the block's last tile (the earlier bands are pulled by bulk copies: bulk_reduce_*,
// side_reduce).
inline constexpr int kInFlight = 16;
template <class T, int NS>
__device__ void reduce_vectors_n(uint4* dst, const uint4* const* src, int nsrc, std::size_t nv, int tid, int nthreads) {
  constexpr int kU = kInFlight / NS > 0 ? kInFlight / NS : 1;
  for (std::size_t i0 = std::size_t(tid); i0 < nv; i0 += std::size_t(kU) * nthreads) {
    uint4 v[NS][kU];
#pragma unroll
    for (int s = 0; s < NS; ++s)
#pragma unroll
      for (int u = 0; u < kU; ++u)
        if (s < nsrc && i0 + std::size_t(u) * nthreads < nv) v[s][u] = src[s][i0 + std::size_t(u) * nthreads];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const std::size_t i = i0 + std::size_t(u) * nthreads;
      if (i >= nv) continue;
      float acc[8], f[8];
      detail::unpack<T>(v[0][u], acc);
#pragma unroll
      for (int s = 1; s < NS; ++s)
        if (s < nsrc) {
          detail::unpack<T>(v[s][u], f);
#pragma unroll
          for (int k = 0; k < 8; ++k) acc[k] += f[k];
        }
      dst[i] = detail::pack<T>(acc);
    }
  }
}
template <class T>
__device__ void reduce_vectors(uint4* dst, const uint4* const* src, int nsrc, std::size_t nv, int tid, int nthreads) {
  if (nsrc <= 2) return reduce_vectors_n<T, 2>(dst, src, nsrc, nv, tid, nthreads);
  reduce_vectors_n<T, kNodeWorld>(dst, src, nsrc, nv, tid, nthreads);
}

// Reduce task u's source on rank r: rank r's `work` at my rows (pull), or my `work`'s slot r (push).
template <class T>
__device__ __forceinline__ const T* task_src(const DeviceHandle& h, T* work, bool push, int r, uint32_t rows,
                                             uint32_t n, uint32_t u) {
  return (push ? work : peer_of(h, work, r)) + L::src_offset(push, r, h.rank, rows, n, u);
}

// Reduce task u's flags (every rank's tiles of its tile row: world x g.tn), one per thread of the
// `nthreads` taking part (this one: tid), all at once: one thread's chain of world x g.tn acquires
// (28 at world 2, 70B) costs that many load round trips per task. The caller's barrier of those
// threads then extends each acquire to all of them.
__device__ __forceinline__ void acquire_task(const DeviceHandle& h, const symm::TileGrid& g, uint32_t u, uint32_t nc,
                                             uint32_t base, uint32_t tid, uint32_t nthreads) {
  for (uint32_t i = tid; i < uint32_t(h.world) * g.tn; i += nthreads) {
    const uint32_t j = L::task_tile(g, u, i % g.tn);
    const int r = int(i / g.tn);
    detail::acquire_flag(h, L::wait_slot(g, h.world, nc, h.rank, r, j),
                         L::wait_value(base, g, h.world, nc, h.rank, r, j));
  }
}

// `bytes` (a multiple of 16; both addresses 16-byte aligned) of global memory, this GPU's or a
// peer's through its mapping, into this block's shared memory by one bulk copy (TMA, the async
// proxy), completing on `bar` with its byte count.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_u32(dst)),
      "l"(src), "r"(bytes), "r"(smem_u32(bar))
      : "memory");
}

// Bytes [off, off + len) of task u's source on every rank r < w (src_of(r, u)) into dst + r * piece
// by bulk copies, completing on `bar`, which is told to expect all of them.
template <class Src>
__device__ __forceinline__ void bulk_load_sources(uint8_t* dst, uint32_t piece, Src src_of, uint32_t u, uint32_t off,
                                                  uint32_t len, int w, uint64_t* bar) {
  mbar_expect_tx(bar, len * uint32_t(w));
  for (int r = 0; r < w; ++r)
    bulk_load(dst + std::size_t(r) * piece, reinterpret_cast<const char*>(src_of(r, u)) + off, len, bar);
}

// out[i] = the fp32 sum over r < w, in rank order, of the staged sources st[r * stride + i], i < nv,
// by `nthreads` threads (thread tid).
template <class T>
__device__ __forceinline__ void sum_piece(const uint4* st, uint4* out, uint32_t nv, uint32_t stride, int w,
                                          uint32_t tid, uint32_t nthreads) {
  for (uint32_t i = tid; i < nv; i += nthreads) {
    float acc[8], f[8];
    detail::unpack<T>(st[i], acc);
    for (int r = 1; r < w; ++r) {
      detail::unpack<T>(st[std::size_t(r) * stride + i], f);
#pragma unroll
      for (int k = 0; k < 8; ++k) acc[k] += f[k];
    }
    out[i] = detail::pack<T>(acc);
  }
}

// A reduce block's tasks (MmRsTiles: every band's but the last) by bulk copies into its ring,
// idle in a block that computes no tile. SM loads pull ~8.6 GB/s per block over NVLink (2x H100,
// experiments/results/h100x2/tile_bands_6_reduce_blocks: 16 blocks of the 132 to keep up with the
// compute, and twice as slow with more loads in flight than the registers hold); a bulk copy
// keeps a whole stage in flight from one thread. A stage holds one piece of every source (the
// world ranks' partials of my rows in rank order, `piece` bytes each, at r * piece); a task is
// its rows' bytes in pieces. Producer warpgroup (128 threads): the task's flags, one per thread,
// all at once (detail::acquire_flag), a barrier of the warpgroup that extends them to thread 0, which
// orders its async-proxy reads after them (fence.proxy.async.global, as AgMmTiles' producer) and
// pulls the pieces, each stage on its `full` barrier with its bytes. Consumers (256 threads): per
// stage, the fp32 sum of the world sources in rank order (as BlockCtx::reduce) stored into C; then
// each consumer warpgroup hands the stage back on `empty` (two arrivals, as after its wgmmas).
template <int BN>
__device__ __forceinline__ uint32_t bulk_piece(int w) {
  return uint32_t(TileConfig<BN>::kStageBytes / w) & ~15u;
}
template <int BN, class T, class Src>
__device__ void bulk_reduce_produce(const DeviceHandle& h, const Ring& ring, RingPos& pos, const symm::TileGrid& g,
                                    uint32_t u0, uint32_t u1, uint32_t mine, uint32_t step, uint32_t nc, uint32_t base,
                                    uint32_t rows, uint32_t n, Src src_of) {
  using Cfg = TileConfig<BN>;
  const int w = h.world;
  const uint32_t piece = bulk_piece<BN>(w);
  for (uint32_t u = L::first_of(u0, mine, step); u < u1; u += step) {
    acquire_task(h, g, u, nc, base, threadIdx.x, 128);
    asm volatile("bar.sync 5, 128;" ::: "memory");  // extends each thread's acquire to thread 0
    if (threadIdx.x != 0) continue;
    asm volatile("fence.proxy.async.global;" ::: "memory");
    const uint32_t total = L::task_rows(rows, u) * n * uint32_t(sizeof(T));
    for (uint32_t off = 0; off < total; off += piece) {
      const uint32_t len = total - off < piece ? total - off : piece;
      mbar_wait(&ring.empty[pos.stage], pos.phase ^ 1);
      bulk_load_sources(ring.stages + pos.stage * Cfg::kStageBytes, piece, src_of, u, off, len, w,
                        &ring.full[pos.stage]);
      pos.advance<Cfg::kStages>();
    }
  }
}
template <int BN, class T>
__device__ void bulk_reduce_consume(const Ring& ring, RingPos& pos, int w, T* c, uint32_t u0, uint32_t u1,
                                    uint32_t mine, uint32_t step, uint32_t rows, uint32_t n, int cw) {
  using Cfg = TileConfig<BN>;
  const uint32_t piece = bulk_piece<BN>(w), tid = threadIdx.x - 128;
  for (uint32_t u = L::first_of(u0, mine, step); u < u1; u += step) {
    const uint32_t total = L::task_rows(rows, u) * n * uint32_t(sizeof(T));
    uint8_t* dst = reinterpret_cast<uint8_t*>(c + std::size_t(L::task_row0(u)) * n);
    for (uint32_t off = 0; off < total; off += piece) {
      const uint32_t nv = (total - off < piece ? total - off : piece) / 16;
      mbar_wait(&ring.full[pos.stage], pos.phase);
      const uint4* st = reinterpret_cast<const uint4*>(ring.stages + pos.stage * Cfg::kStageBytes);
      uint4* out = reinterpret_cast<uint4*>(dst + off);
      sum_piece<T>(st, out, nv, piece / 16, w, tid, 256);
      consumer_bar(cw);  // this warpgroup's reads of the stage are done
      if (threadIdx.x % 128 == 0) mbar_arrive(&ring.empty[pos.stage]);
      pos.advance<Cfg::kStages>();
    }
  }
}

// A computing block's side reduce (MmRsTiles without reduce blocks, in bands): `nth` threads of
// the producer warpgroup from warp 1 (warps 1..2, 64 threads, beside the signal warp; warp 0's
// thread 0 issues the tile loads) reduce the block's tasks of every band but the last while the
// consumers compute, so the compute keeps every SM. Their sources come by bulk copies into
// kSideBytes of shared memory past the ring (two buffers, each one piece of every source at
// r * piece), on two mbarriers of their own; the threads acquire a task's flags (one per thread,
// all at once), meet (named barrier 6), and thread 32 orders its async-proxy reads after the
// acquires (fence.proxy.async.global), then keeps one piece in flight ahead of the one the
// threads sum. Piece q uses buffer q % 2, phase (q / 2) % 2.
inline constexpr int kSideBytes = 16384;
template <int BN>
__device__ __forceinline__ uint8_t* side_buffers(const Ring& r) {
  return staging_at<BN>(r, 0) + TileConfig<BN>::kStagingBytes;
}
// Two mbarriers after the ring's (at most 8 stages: 128 bytes of the 256 the ring's barriers have).
__device__ __forceinline__ uint64_t* side_bars(const Ring& r) {
  return reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(r.full) + 128);
}
template <int BN, class T, class Src>
__device__ void side_reduce(const DeviceHandle& h, const Ring& ring, const symm::TileGrid& g, T* c, uint32_t u0,
                            uint32_t u1, uint32_t mine, uint32_t step, uint32_t nc, uint32_t base, uint32_t rows,
                            uint32_t n, Src src_of, bool sum, uint32_t nth) {
  static_assert(TileConfig<BN>::kStages <= 8, "side_bars sit after at most 8 stages' barriers");
  const int w = h.world;
  const uint32_t tid = threadIdx.x - 32, half = kSideBytes / 2, piece = uint32_t(half / w) & ~15u;
  uint8_t* buf = side_buffers<BN>(ring);
  uint64_t* bar = side_bars(ring);
  uint32_t q = 0;  // pieces issued before this task's first
  auto issue = [&](uint32_t u, uint32_t off, uint32_t len, uint32_t at) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the threads' reads of it, before the refill
    bulk_load_sources(buf + (at & 1) * half, piece, src_of, u, off, len, w, &bar[at & 1]);
  };
  for (uint32_t u = L::first_of(u0, mine, step); u < u1; u += step) {
    acquire_task(h, g, u, nc, base, tid, nth);
    asm volatile("bar.sync 6, %0;" ::"r"(nth) : "memory");  // extends each thread's acquire to thread 32
    const uint32_t total = L::task_rows(rows, u) * n * uint32_t(sizeof(T));
    const uint32_t pieces = (total + piece - 1) / piece;
    if (tid == 0) {
      asm volatile("fence.proxy.async.global;" ::: "memory");
      issue(u, 0, total < piece ? total : piece, q);
    }
    uint8_t* dst = reinterpret_cast<uint8_t*>(c + std::size_t(L::task_row0(u)) * n);
    for (uint32_t k = 0; k < pieces; ++k, ++q) {
      const uint32_t off = k * piece, nv = (total - off < piece ? total - off : piece) / 16;
      if (tid == 0 && k + 1 < pieces)  // the next piece into the other buffer, freed at the last barrier
        issue(u, off + piece, total - off - piece < piece ? total - off - piece : piece, q + 1);
      mbar_wait(&bar[q & 1], (q >> 1) & 1);
      const uint4* st = reinterpret_cast<const uint4*>(buf + (q & 1) * half);
      uint4* out = reinterpret_cast<uint4*>(dst + off);
      if (sum) sum_piece<T>(st, out, nv, piece / 16, w, tid, nth);
      asm volatile("bar.sync 6, %0;" ::"r"(nth) : "memory");  // every read of this buffer done: it may refill
    }
  }
}

// MmRsTiles' signal warp (warp 3, beside the side lanes in warps 1..2): the tiles' releases off the
// consumers' path. Per tile, after the consumers' barrier that orders every consumer thread's stores
// of it, warp 4 (the consumers' first warp) arrives on kBarTileDone (release at CTA
// scope) and goes on to the next tile's MMAs; the signal warp syncs on it (acquire), hands the slot
// back on kBarTileTaken, and its lane 0 releases the tile's count into the owner's flag (fence.acq_rel.sys,
// cumulative over what the barriers ordered before it, then st.relaxed.sys): the fence's wait for the
// tile's stores (over NVLink with push) stalls no MMA. Warp 4 syncs on kBarTileTaken before its next
// arrival, so the two never run more than a tile apart.
inline constexpr int kBarTileDone = 7, kBarTileTaken = 8;
__device__ __forceinline__ void warp4_tile_done(uint32_t k) {
  if (k) asm volatile("bar.sync %0, 64;" ::"n"(kBarTileTaken) : "memory");  // the signal warp took tile k - 1
  asm volatile("bar.arrive %0, 64;" ::"n"(kBarTileDone) : "memory");
}
__device__ __forceinline__ void warp4_tiles_end(uint32_t k) {
  if (k)
    asm volatile("bar.sync %0, 64;" ::"n"(kBarTileTaken) : "memory");  // the last tile taken: the barrier left empty
}

}  // namespace symm::cuda::tile::mmrs
