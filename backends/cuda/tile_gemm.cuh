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
//      fp32 when given) and stores them: tile_epilogue.cuh (through shared memory inside the
//      matrix, from registers at its edges).
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
  // After the barriers: the staged epilogue's buffers (store_tile_staged), one per consumer: its
  // 64 rows of one pass (64 columns of 2 bytes: 128 bytes a row).
  static constexpr int kStagingPerConsumer = 64 * 128;
  static constexpr int kStagingBytes = 2 * kStagingPerConsumer;
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

// Consumer wg's staging (TileConfig::kStagingPerConsumer bytes), after the ring's barriers.
template <int BN>
__device__ __forceinline__ uint8_t* staging_at(const Ring& r, int wg) {
  return reinterpret_cast<uint8_t*>(r.full) + 256 + wg * TileConfig<BN>::kStagingPerConsumer;
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
// CM 2 (clusters of two, tile_gemm.cu's pairs): A into this block's ring alone, and the B boxes
// j with j % 2 == rank into both blocks' rings (the peer loads the others). Each block's `full`
// expects the whole stage either way; its `empty` has heard from both blocks' consumers.
template <class Cfg, int CM = 1>
__device__ __forceinline__ void load_tile_of(const Ring& r, RingPos& pos, const CUtensorMap* ta, const CUtensorMap* tb,
                                             int m0, int n0, int kblocks, uint32_t rank = 0) {
  for (int kb = 0; kb < kblocks; ++kb) {
    mbar_wait(&r.empty[pos.stage], pos.phase ^ 1);
    uint8_t* st = r.stages + pos.stage * Cfg::kStageBytes;
    uint64_t* bar = &r.full[pos.stage];
    mbar_expect_tx(bar, Cfg::kStageBytes);
    tma_load_2d(st, ta, bar, kb * kTileK, m0);
#pragma unroll
    for (int j = 0; j < Cfg::kBoxesB; ++j) {
      uint8_t* dst = st + Cfg::kBytesA + j * 8192;
      if constexpr (CM == 1)
        tma_load_2d(dst, tb, bar, n0 + 64 * j, kb * kTileK);
      else if (uint32_t(j % CM) == rank)
        tma_load_2d_multicast(dst, tb, bar, n0 + 64 * j, kb * kTileK, uint16_t((1u << CM) - 1));
    }
    pos.advance<Cfg::kStages>();
  }
}
template <int BN, int CM = 1>
__device__ __forceinline__ void load_tile(const Ring& r, RingPos& pos, const CUtensorMap* ta, const CUtensorMap* tb,
                                          int m0, int n0, int kblocks, uint32_t rank = 0) {
  load_tile_of<TileConfig<BN>, CM>(r, pos, ta, tb, m0, n0, kblocks, rank);
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

}  // namespace symm::cuda::tile
