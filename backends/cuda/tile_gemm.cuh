// The tile GEMM's device side (sm_90a): C_tile (128 x BN) += A_tile (128 x K) x B_tile (K x BN)
// in fp32, A row-major (K-major), B row-major (MN-major), bf16 or fp16.
//
//   1. A producer warp (warpgroup 0, one thread) walks the block's tiles and, per 64-deep slice of
//      K, waits for a free stage of the shared-memory ring (`empty` mbarrier), then starts the TMA
//      loads of A (128 x 64) and B (64 x BN, as BN/64 boxes of 64 x 64) into it; the loads complete
//      on the stage's `full` mbarrier with their byte count.
//   2. Two consumer warpgroups (rows 0..63 and 64..127 of the tile) wait on `full`, issue four
//      wgmma m64nBNk16 per stage from descriptors (128-byte swizzle; B with the transpose bit,
//      since row-major B is N-contiguous), and free the stage once the next stage's wgmmas are
//      issued and the previous group has retired (wait_group 1).
//   3. Each consumer converts its 64 x BN fp32 accumulators to the output type (adding C_in in
//      fp32 when given) and stores them straight from registers: 16-byte stores after a transpose
//      within each quad of threads, pairs predicated at the matrix edges.
//
// Clusters of two (CM = 2, the plain GEMM's default: tile_gemm.cu): the two blocks of a cluster
// compute the tiles of one 256 x BN pair (rows m0 and m0 + 128, the same columns of B), in step.
// Each block loads its own A and half of B's boxes, multicast to both blocks' rings (TMA
// .multicast::cluster; both blocks' `full` barriers count the bytes), so a block reads 32 KB of
// L2 per stage instead of 48 (at BN 256). A stage is refilled only when the consumers of both
// blocks are done with it: `empty` counts four arrivals, two of them from the peer block (a
// remote mbarrier arrive). cuBLASLt's kernel at the fused shapes does the same (256 x 128 tiles,
// clusters of 1 x 2 sharing A: ncu, experiments/results/h100x1/gemm_ncu).
//
// The per-tile pieces (load_tile, mma_tile, store_tile) take the ring and its position as
// arguments, so a device program that visits tiles in an order of its own (waiting on a chunk's
// flag before load_tile, publishing a tile after store_tile) can call them in place of the
// kernel's plain loop (tile_gemm.cu).
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backends/cuda/tile_sched.h"
#include "backends/cuda/tile_wgmma.cuh"

namespace symm::cuda::tile {

// ---- shared memory, mbarriers, TMA, wgmma -----------------------------------------------------
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}
// The barriers' initialisation, visible to the other threads and to the async proxy (TMA).
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0;
}
// Waits for the phase of parity `parity` to complete. Bounded (STYLE.md 7): a ring that never
// fills or drains is a bug of this kernel (a byte count that does not match the loads, a missed
// arrive), so after about 10 s the block traps and the launch fails instead of hanging.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  const uint32_t a = smem_u32(bar);
  if (mbar_try_wait(a, parity)) return;
  const long long start = clock64();
  while (!mbar_try_wait(a, parity))
    if (clock64() - start > 20'000'000'000LL) __trap();
}

__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
          smem_u32(dst)),
      "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
      : "memory");
}
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}
// The same load, landing at the same shared-memory offset in every block of the cluster named in
// `mask` (bit r: the block of cluster rank r), each block's barrier at `bar`'s offset counting it.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                                      uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, "
      "%4}], [%2], %5;" ::"r"(smem_u32(dst)),
      "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(mask)
      : "memory");
}
// An arrival on the barrier at `bar`'s offset in the cluster's block of rank `cta` (this block
// included). The default semantics (release at CTA scope), as CUTLASS's ClusterBarrier: what it
// orders is wgmma's reads of the stage, retired by wgmma.wait_group before it, against the TMA
// writes the peer's producer issues after it; `.release.cluster` made every consumer k-step wait
// out a cluster-scope fence (2.2-2.4x slower at any grid: h100x1/tile_cluster).
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, uint32_t cta) {
  asm volatile(
      "{\n.reg .b32 ra;\n"
      "mapa.shared::cluster.u32 ra, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(smem_u32(bar)),
      "r"(cta)
      : "memory");
}
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// Every thread of every block of the cluster: the blocks' barriers are initialised before any
// remote arrive or multicast (start), and no block leaves while a peer may still arrive on its
// barriers or load into its ring (end). Not .aligned: the producer warp's lanes arrive apart.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator accesses across the asynchronous wgmma.
template <int R>
__device__ __forceinline__ void fence_acc(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <int Regs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Regs));
}
template <int Regs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Regs));
}

// A shared-memory matrix descriptor for a 128-byte-swizzled operand (base 1024-byte aligned):
// start address, leading and stride byte offsets, in 16-byte units.
__device__ __forceinline__ uint64_t sw128_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return uint64_t((addr & 0x3FFFF) >> 4) | uint64_t((lbo & 0x3FFFF) >> 4) << 16 | uint64_t((sbo & 0x3FFFF) >> 4) << 32 |
         uint64_t(1) << 62;
}

// ---- the ring ------------------------------------------------------------------------------
template <int BN>
struct TileConfig {
  static constexpr int kBoxesB = (BN + 63) / 64;       // B is loaded as 64-column boxes
  static constexpr int kBytesA = kTileM * kTileK * 2;  // 16 KB
  static constexpr int kBytesB = kBoxesB * 64 * kTileK * 2;
  static constexpr int kStageBytes = kBytesA + kBytesB;
  static constexpr int kSmemLimit = 232448;  // an sm_90 block's opt-in shared memory
  static constexpr int kSlack = 1024 + 256;  // 1024-byte alignment of the ring, then the barriers
  // After the barriers: the staged epilogue's buffers (store_tile_staged), 8 KB per consumer.
  static constexpr int kStagingBytes = 2 * 8192;
  static constexpr int kRoom = kSmemLimit - kSlack - kStagingBytes;
  static constexpr int kStages = kRoom / kStageBytes > 8 ? 8 : kRoom / kStageBytes;
  static constexpr int kSmemBytes = kStages * kStageBytes + kSlack + kStagingBytes;
  static constexpr int kAcc = BN / 2;  // fp32 accumulators per consumer thread
  static_assert(BN % 8 == 0 && BN <= 256 && kStages >= 2);
};

// Where a block's ring is and where it stands; each role keeps its own position.
struct Ring {
  uint8_t* stages;  // 1024-byte aligned: stage s at s * kStageBytes, A then B
  uint64_t* full;   // kStages barriers: the stage's loads landed (1 arrival + bytes)
  uint64_t* empty;  // kStages barriers: both consumer warpgroups are done with the stage
};
struct RingPos {
  int stage = 0;
  uint32_t phase = 0;
  template <int Stages>
  __device__ __forceinline__ void advance() {
    if (++stage == Stages) stage = 0, phase ^= 1;
  }
};

// Consumer wg's 8 KB of staging (TileConfig::kStagingBytes), after the ring's barriers.
template <int BN>
__device__ __forceinline__ uint8_t* staging_at(const Ring& r, int wg) {
  return reinterpret_cast<uint8_t*>(r.full) + 256 + wg * 8192;
}

template <int BN>
__device__ __forceinline__ Ring ring_at(uint8_t* smem_raw) {
  using Cfg = TileConfig<BN>;
  Ring r;
  r.stages = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  r.full = reinterpret_cast<uint64_t*>(r.stages + Cfg::kStages * Cfg::kStageBytes);
  r.empty = r.full + Cfg::kStages;
  return r;
}

// One thread of the block, before any other use: `full` takes the producer's one arrival (and
// the bytes), `empty` one arrival per consumer warpgroup of each of the CM blocks of a cluster.
template <int BN, int CM = 1>
__device__ __forceinline__ void ring_init(const Ring& r) {
  for (int s = 0; s < TileConfig<BN>::kStages; ++s) mbar_init(&r.full[s], 1), mbar_init(&r.empty[s], 2 * CM);
  mbar_init_fence();
}

// ---- 1. producer: the loads of one tile ---------------------------------------------------------
// One thread. Loads A rows [m0, m0 + 128) and B columns [n0, n0 + BN) (whole 64-column boxes),
// slice by slice of K; TMA fills what lies outside the matrices with zeros.
// Cfg: a ring's layout (kStages, kStageBytes, kBytesA, kBoxesB): TileConfig's, or the ping-pong
// kernel's (tile_pingpong.cuh), whose A boxes are 64 or 128 rows.
template <class Cfg>
__device__ __forceinline__ void load_tile_of(const Ring& r, RingPos& pos, const CUtensorMap* ta, const CUtensorMap* tb,
                                             int m0, int n0, int kblocks) {
  for (int kb = 0; kb < kblocks; ++kb) {
    mbar_wait(&r.empty[pos.stage], pos.phase ^ 1);
    uint8_t* st = r.stages + pos.stage * Cfg::kStageBytes;
    uint64_t* bar = &r.full[pos.stage];
    mbar_expect_tx(bar, Cfg::kStageBytes);
    tma_load_2d(st, ta, bar, kb * kTileK, m0);
#pragma unroll
    for (int j = 0; j < Cfg::kBoxesB; ++j) tma_load_2d(st + Cfg::kBytesA + j * 8192, tb, bar, n0 + 64 * j, kb * kTileK);
    pos.advance<Cfg::kStages>();
  }
}
template <int BN>
__device__ __forceinline__ void load_tile(const Ring& r, RingPos& pos, const CUtensorMap* ta, const CUtensorMap* tb,
                                          int m0, int n0, int kblocks) {
  load_tile_of<TileConfig<BN>>(r, pos, ta, tb, m0, n0, kblocks);
}
// Clusters of two: this block's A rows [m0, m0 + 128) into its own ring, and the B boxes j with
// j % 2 == rank into both blocks' rings (the peer loads the others). Each block's `full` expects
// the whole stage, as with load_tile; its `empty` has heard from both blocks' consumers.
template <int BN>
__device__ __forceinline__ void load_tile_pair(const Ring& r, RingPos& pos, const CUtensorMap* ta,
                                               const CUtensorMap* tb, int m0, int n0, int kblocks, uint32_t rank) {
  using Cfg = TileConfig<BN>;
  for (int kb = 0; kb < kblocks; ++kb) {
    mbar_wait(&r.empty[pos.stage], pos.phase ^ 1);
    uint8_t* st = r.stages + pos.stage * Cfg::kStageBytes;
    uint64_t* bar = &r.full[pos.stage];
    mbar_expect_tx(bar, Cfg::kStageBytes);
    tma_load_2d(st, ta, bar, kb * kTileK, m0);
#pragma unroll
    for (int j = 0; j < Cfg::kBoxesB; ++j)
      if (uint32_t(j % 2) == rank)
        tma_load_2d_multicast(st + Cfg::kBytesA + j * 8192, tb, bar, n0 + 64 * j, kb * kTileK, uint16_t(0x3));
    pos.advance<Cfg::kStages>();
  }
}

// ---- 2. consumers: C_tile = A_tile x B_tile over K ----------------------------------------------
// One consumer warpgroup (wg 0 or 1: rows 64 wg .. 64 wg + 63 of the tile); acc receives the
// product (its old values are overwritten: the first wgmma has scale-d 0).
// CM 2: the stage is handed back to both blocks of the cluster (tile_gemm.cu's pairs).
template <int BN, class T, int CM = 1>
__device__ __forceinline__ void mma_tile(float (&acc)[TileConfig<BN>::kAcc], const Ring& r, RingPos& pos, int kblocks,
                                         int wg) {
  using Cfg = TileConfig<BN>;
  const bool leader = threadIdx.x % 128 == 0;
  auto release = [&](int stage) {
    if constexpr (CM == 1) {
      mbar_arrive(&r.empty[stage]);
    } else {
#pragma unroll
      for (uint32_t c = 0; c < uint32_t(CM); ++c) mbar_arrive_cluster(&r.empty[stage], c);
    }
  };
  int prev = -1;
  for (int kb = 0; kb < kblocks; ++kb) {
    mbar_wait(&r.full[pos.stage], pos.phase);
    const uint32_t a = smem_u32(r.stages + pos.stage * Cfg::kStageBytes) + wg * 64 * 128;
    const uint32_t b = smem_u32(r.stages + pos.stage * Cfg::kStageBytes + Cfg::kBytesA);
    // A: K-major, 8-row groups 1024 B apart; a k16 step is 32 B along the swizzled row.
    // B: MN-major, k rows 128 B apart (8-row groups 1024 B: SBO), 64-column boxes 8192 B apart (LBO);
    // a k16 step is 16 rows, 2048 B.
    const uint64_t da = sw128_desc(a, 16, 1024);
    const uint64_t db = sw128_desc(b, 8192, 1024);
    wgmma_fence();
    fence_acc(acc);
#pragma unroll
    for (int kk = 0; kk < kTileK / 16; ++kk)
      Wgmma<BN, T>::mma(acc, da + uint64_t(kk * 2), db + uint64_t(kk * 128), (kb | kk) ? 1 : 0);
    wgmma_commit();
    fence_acc(acc);
    wgmma_wait<1>();  // the previous stage's wgmmas have retired: hand that stage back
    if (prev >= 0 && leader) release(prev);
    prev = pos.stage;
    pos.advance<Cfg::kStages>();
  }
  wgmma_wait<0>();
  fence_acc(acc);
  if (prev >= 0 && leader) release(prev);
}

// ---- 3. consumers: the tile's store ---------------------------------------------------------------
template <class T>
struct Out;
template <>
struct Out<TileBF16> {
  using Pair = __nv_bfloat162;
  using One = __nv_bfloat16;
  static __device__ __forceinline__ Pair pack(float x, float y) { return __floats2bfloat162_rn(x, y); }
  static __device__ __forceinline__ float2 unpack(Pair p) { return __bfloat1622float2(p); }
  static __device__ __forceinline__ One one(float x) { return __float2bfloat16_rn(x); }
  static __device__ __forceinline__ float one(One x) { return __bfloat162float(x); }
};
template <>
struct Out<TileF16> {
  using Pair = __half2;
  using One = __half;
  static __device__ __forceinline__ Pair pack(float x, float y) { return __floats2half2_rn(x, y); }
  static __device__ __forceinline__ float2 unpack(Pair p) { return __half22float2(p); }
  static __device__ __forceinline__ One one(float x) { return __float2half_rn(x); }
  static __device__ __forceinline__ float one(One x) { return __half2float(x); }
};

// The wgmma accumulator layout: thread l of warp w of the warpgroup holds, for j < BN / 8,
// rows 16 w + l / 4 (+ 8) and columns 8 j + 2 (l % 4) (+ 1) as acc[4 j + {0, 1}] (+ {2, 3} for +8).
//
// Inside the matrix, the four threads of a quad swap values (a 4 x 4 transpose of column pairs
// over four consecutive j) so that each holds 8 consecutive columns of its row and stores them
// in one 16-byte access: a quarter of the store instructions of pairwise 4-byte stores, which
// cost the tile several microseconds at every tile's end (measured: h200x1/tile_gemm/v1). The
// edges store pairs, predicated.
// c_in (optional): n_in input tiles in_stride elements apart, added in order before the rounding.
template <int BN, class T>
__device__ __forceinline__ void store_tile(const float (&acc)[TileConfig<BN>::kAcc], void* c, const void* c_in,
                                           std::size_t ldc, int m, int n, int m0, int n0, int wg, int n_in = 1,
                                           std::size_t in_stride = 0) {
  using O = Out<T>;
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32, q = lane % 4;
  const int row = m0 + wg * 64 + warp * 16 + lane / 4;
  auto* cp = static_cast<typename O::One*>(c);
  const auto* ci = static_cast<const typename O::One*>(c_in);
  if (m0 + kTileM <= m && n0 + BN <= n) {
    static_assert(BN % 32 == 0, "the quad transpose takes j four at a time");
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const std::size_t roff = std::size_t(row + 8 * h) * ldc + std::size_t(n0);
      // The first input's vectors of this row, loaded before the row's stores: issued after a
      // store, a load may not pass it (c and c_in could alias), and each would wait out a full
      // HBM latency (~45 us over an 8B tile program's waves on 2x H100).
      uint4 pre[BN / 32];
#pragma unroll
      for (int g = 0; g < BN / 32; ++g)
        if (ci && n_in > 0) pre[g] = *reinterpret_cast<const uint4*>(ci + roff + std::size_t(8 * (4 * g + q)));
#pragma unroll
      for (int g = 0; g < BN / 32; ++g) {
        // in[i]: this lane's pair of j = 4 g + i; out[i]: lane i's pair of j = 4 g + q.
        float out[8];
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int send = (q - r) & 3, from = (q + r) & 3;
          float x = 0, y = 0;
#pragma unroll
          for (int i = 0; i < 4; ++i)
            if (i == send) x = acc[4 * (4 * g + i) + 2 * h], y = acc[4 * (4 * g + i) + 2 * h + 1];
          x = __shfl_sync(0xffffffffu, x, (lane & ~3) | from);
          y = __shfl_sync(0xffffffffu, y, (lane & ~3) | from);
#pragma unroll
          for (int i = 0; i < 4; ++i)
            if (i == from) out[2 * i] = x, out[2 * i + 1] = y;
        }
        const std::size_t off = roff + std::size_t(8 * (4 * g + q));
        for (int s = 0; ci && s < n_in; ++s) {
          const uint4 v = s == 0 ? pre[g] : *reinterpret_cast<const uint4*>(ci + std::size_t(s) * in_stride + off);
          const typename O::Pair* p = reinterpret_cast<const typename O::Pair*>(&v);
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const float2 f = O::unpack(p[i]);
            out[2 * i] += f.x, out[2 * i + 1] += f.y;
          }
        }
        uint4 w;
        typename O::Pair* pw = reinterpret_cast<typename O::Pair*>(&w);
#pragma unroll
        for (int i = 0; i < 4; ++i) pw[i] = O::pack(out[2 * i], out[2 * i + 1]);
        *reinterpret_cast<uint4*>(cp + off) = w;
      }
    }
    return;
  }
  const int col0 = n0 + q * 2;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int rr = row + 8 * h, cc = col0 + 8 * j;
      float x = acc[4 * j + 2 * h], y = acc[4 * j + 2 * h + 1];
      const std::size_t off = std::size_t(rr) * ldc + std::size_t(cc);
      if (rr < m && cc + 1 < n) {
        for (int s = 0; ci && s < n_in; ++s) {
          const float2 v = O::unpack(*reinterpret_cast<const typename O::Pair*>(ci + std::size_t(s) * in_stride + off));
          x += v.x, y += v.y;
        }
        *reinterpret_cast<typename O::Pair*>(cp + off) = O::pack(x, y);
      } else if (rr < m && cc < n) {
        for (int s = 0; ci && s < n_in; ++s) x += O::one(ci[std::size_t(s) * in_stride + off]);
        cp[off] = O::one(x);
      }
    }
  }
}

// The staged epilogue of an interior tile without C_in (the plain GEMM's common case): per pass
// of 64 columns (32 for the last of a 224-wide tile), each warp writes its 16 rows as bf16 / fp16
// into its consumer's 8 KB of shared memory with stmatrix (the wgmma accumulator layout is
// stmatrix's m8n8 fragment: acc[4j..4j+3] are the rows 0-7 and 8-15 of column group j), 16-byte
// chunks XOR-swizzled by row so that neither the stmatrix rows nor the read-back collide in banks;
// then the warpgroup reads the pass back, 16 bytes a thread, and stores whole 128-byte row
// segments. No shuffles: store_tile's quad transposes cost ~2000 instructions a thread per tile
// (128 shuffles and their selects at BN 256), this ~150. A named barrier per consumer (128 threads)
// between writing and reading, and before the buffer is written again.
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}
// Named barriers 3 and 4 (barrier 0 is __syncthreads; the fused programs' consumers_sync is 1, the
// ping-pong kernel's turns 1 and 2).
__device__ __forceinline__ void consumer_bar(int wg) {
  asm volatile("bar.sync %0, 128;" ::"r"(3 + wg) : "memory");
}
template <class T>
__device__ __forceinline__ uint32_t pack_u32(float x, float y) {
  const typename Out<T>::Pair p = Out<T>::pack(x, y);
  return *reinterpret_cast<const uint32_t*>(&p);
}

template <int BN, class T>
__device__ __forceinline__ void store_tile_staged(const float (&acc)[TileConfig<BN>::kAcc], void* c, std::size_t ldc,
                                                  int m0, int n0, int wg, uint8_t* staging) {
  static_assert(BN % 32 == 0, "passes of 64 columns, the last of 32");
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32, mi = lane / 8;
  const uint32_t base = smem_u32(staging);
  const int srow = warp * 16 + (mi % 2) * 8 + lane % 8;  // the row this lane addresses for stmatrix
  auto* cp = static_cast<typename Out<T>::One*>(c) + std::size_t(m0 + wg * 64) * ldc + std::size_t(n0);
#pragma unroll
  for (int c0 = 0; c0 < BN; c0 += 64) {
    constexpr int kFull = 64;
    const int w = BN - c0 < kFull ? BN - c0 : kFull;  // compile-time after unrolling
#pragma unroll
    for (int jj = 0; jj < w / 8; jj += 2) {
      const int j = c0 / 8 + jj;
      const int chunk = jj + mi / 2;
      stmatrix_x4(base + uint32_t(srow * 128 + ((chunk ^ (srow % 8)) * 16)), pack_u32<T>(acc[4 * j], acc[4 * j + 1]),
                  pack_u32<T>(acc[4 * j + 2], acc[4 * j + 3]), pack_u32<T>(acc[4 * j + 4], acc[4 * j + 5]),
                  pack_u32<T>(acc[4 * j + 6], acc[4 * j + 7]));
    }
    consumer_bar(wg);
    const int cpr = w / 8;  // 16-byte chunks per row in this pass
#pragma unroll
    for (int k = 0; k < 64 * cpr / 128; ++k) {
      const int i = t + 128 * k, row = i / cpr, ch = i % cpr;
      uint4 v;
      asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "r"(base + uint32_t(row * 128 + ((ch ^ (row % 8)) * 16))));
      *reinterpret_cast<uint4*>(cp + std::size_t(row) * ldc + std::size_t(c0 + ch * 8)) = v;
    }
    consumer_bar(wg);
  }
}

// Before a tile's MMAs (consumer wg): its rows of the n_in inputs (in_stride elements apart) into L2
// (prefetch.global.L2, two 128-byte lines a thread at BN 256), so that add_inputs' loads, long
// after, hit L2 instead of waiting on HBM. A line written after the prefetch (a copy engine's
// push landing later) is updated in L2 like any other; nothing is read into L1 here.
template <int BN, class T>
__device__ __forceinline__ void prefetch_inputs(const void* c_in, std::size_t ldc, int m, int n, int m0, int n0, int wg,
                                                int n_in, std::size_t in_stride) {
  if (!c_in || m0 + kTileM > m || n0 + BN > n) return;
  constexpr int kLines = (BN * 2 + 127) / 128;  // 128-byte lines per row of the tile
  const auto* ci = static_cast<const typename Out<T>::One*>(c_in);
  const int t = threadIdx.x % 128;
  for (int s = 0; s < n_in; ++s)
    for (int i = t; i < 64 * kLines; i += 128) {
      const int row = i / kLines, line = i % kLines;
      const auto* a = ci + std::size_t(s) * in_stride + std::size_t(m0 + wg * 64 + row) * ldc + std::size_t(n0 + 64 * line);
      asm volatile("prefetch.global.L2 [%0];" ::"l"(a));
    }
}

// acc += the n_in inputs at the tile, in order, in the accumulator layout (fp32: what store_tile's
// C_in path adds before its one rounding, so the result is the same bit for bit). Interior tiles
// only; 4-byte loads, eight column groups at a time.
template <int BN, class T>
__device__ __forceinline__ void add_inputs(float (&acc)[TileConfig<BN>::kAcc], const void* c_in, std::size_t ldc, int m0,
                                           int n0, int wg, int n_in, std::size_t in_stride) {
  using O = Out<T>;
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32, q = lane % 4;
  const int row = m0 + wg * 64 + warp * 16 + lane / 4;
  const auto* ci = static_cast<const typename O::One*>(c_in);
  for (int s = 0; s < n_in; ++s) {
    const auto* base = ci + std::size_t(s) * in_stride + std::size_t(row) * ldc + std::size_t(n0 + 2 * q);
#pragma unroll
    for (int j0 = 0; j0 < BN / 8; j0 += 8) {
      typename O::Pair v[8][2];
#pragma unroll
      for (int jj = 0; jj < 8; ++jj)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (j0 + jj < BN / 8)
            v[jj][h] = *reinterpret_cast<const typename O::Pair*>(base + std::size_t(8 * h) * ldc + std::size_t(8 * (j0 + jj)));
#pragma unroll
      for (int jj = 0; jj < 8; ++jj)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (j0 + jj < BN / 8) {
            const float2 f = O::unpack(v[jj][h]);
            acc[4 * (j0 + jj) + 2 * h] += f.x;
            acc[4 * (j0 + jj) + 2 * h + 1] += f.y;
          }
    }
  }
}

// A tile, plus n_in inputs when c_in is given: inside the matrix (m x n), the inputs added in the
// accumulators and the tile staged (store_tile_staged); at the edges, store_tile. The same result
// either way (one rounding after the inputs).
template <int BN, class T>
__device__ __forceinline__ void store_tile_plain(float (&acc)[TileConfig<BN>::kAcc], void* c, std::size_t ldc, int m,
                                                 int n, int m0, int n0, int wg, const Ring& ring,
                                                 const void* c_in = nullptr, int n_in = 1, std::size_t in_stride = 0) {
  if (m0 + kTileM <= m && n0 + BN <= n) {
    if (c_in) add_inputs<BN, T>(acc, c_in, ldc, m0, n0, wg, n_in, in_stride);
    store_tile_staged<BN, T>(acc, c, ldc, m0, n0, wg, staging_at<BN>(ring, wg));
  } else {
    store_tile<BN, T>(acc, c, c_in, ldc, m, n, m0, n0, wg, n_in, in_stride);
  }
}

}  // namespace symm::cuda::tile
