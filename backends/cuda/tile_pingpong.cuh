// The tile GEMM's ping-pong pieces (sm_90a), beside tile_gemm.cuh's cooperative ones (which they
// reuse but do not change: tile_fused.cu calls those): C (tile_m x BN per tile) = A x B, fp32
// accumulation, A row-major, B row-major, bf16 or fp16.
//
//   Warpgroup 0: one producer thread walks the block's tiles in order (j = 0, 1, 2, ...), loading
//   each tile's k-blocks (A tile_m x 64, B 64 x BN) into the one ring, exactly as load_tile does
//   for a 128-row tile.
//   Warpgroups 1 and 2: consumer c computes the block's tiles j with j % 2 == c, each tile whole
//   (tile_m / 64 m64nBNk16 wgmmas per k16 step), then stores it from registers (store_tile).
//
// The ring (one stream of k-blocks: tile 0's, tile 1's, ...) is shared: consumer c's position
// skips the k-blocks of the other's tiles (ring_skip). `empty` takes one arrival per use (the
// consumer whose tile it was); `full` one arrival plus the bytes, as in the coop ring.
//
// The MMA order: consumer c starts tile j's MMAs only after the other consumer has issued every
// MMA of tile j - 1 (named barriers kBarMath0 / kBarMath1: bar.arrive by the one done issuing,
// bar.sync by the one about to start). Two things follow:
//   - the tensor cores see the tiles' MMAs in order, and one consumer's epilogue (its stores) runs
//     while the other's MMAs run: the epilogue is hidden;
//   - the waits on `full` happen in the ring's order, all of them (tile j's waits start after the
//     other consumer has seen every k-block of tile j - 1 land). An mbarrier parity wait is only
//     sound while the barrier is at most one phase away from the phase waited for; with the waits
//     in ring order, a consumer waiting for use u of a stage has seen (or the other consumer has
//     seen) use u - stages of it land, and use u + stages cannot land before use u is released.
//     Without the order, consumer 1 would wait for its first tile's later k-blocks while the
//     producer is still on tile 0 and a parity wait two phases ahead would pass at once, on stale
//     data.
// The producer's waits on `empty` are one thread's, in ring order, as in the coop kernel.
#pragma once

#include "backends/cuda/tile_epilogue.cuh"

namespace symm::cuda::tile {

// ---- the ring of a ping-pong tile ----------------------------------------------------------------
template <int BM, int BN>
struct PingpongConfig {
  static_assert(BM == 64 || BM == 128, "a consumer warpgroup computes 64 or 128 rows");
  static constexpr int kRows = BM / 64;            // m64 wgmma rows per consumer
  static constexpr int kBoxesB = (BN + 63) / 64;   // B is loaded as 64-column boxes
  static constexpr int kBytesA = BM * kTileK * 2;  // 8 or 16 KB
  static constexpr int kBytesB = kBoxesB * 64 * kTileK * 2;
  static constexpr int kStageBytes = kBytesA + kBytesB;  // a multiple of 1024 (the swizzle atom)
  static constexpr int kSmemLimit = 232448;              // an sm_90 block's opt-in shared memory
  static constexpr int kSlack = 1024 + 256;              // 1024-byte alignment of the ring, then the barriers
  static constexpr int kStages = (kSmemLimit - kSlack) / kStageBytes > 8 ? 8 : (kSmemLimit - kSlack) / kStageBytes;
  static constexpr int kSmemBytes = kStages * kStageBytes + kSlack;
  static constexpr int kAcc = BN / 2;  // fp32 accumulators per thread per m64 row
  static_assert(BN % 32 == 0 && BN <= 256 && kStages >= 2 && kStageBytes % 1024 == 0);
  static_assert(kRows * kAcc <= 128, "accumulators beyond 128 registers per thread do not fit beside the rest");
  static_assert(2 * kStages * 8 <= 256, "the barriers fit the slack");
};

template <int BM, int BN>
__device__ __forceinline__ Ring pingpong_ring_at(uint8_t* smem_raw) {
  using Cfg = PingpongConfig<BM, BN>;
  Ring r;
  r.stages = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  r.full = reinterpret_cast<uint64_t*>(r.stages + Cfg::kStages * Cfg::kStageBytes);
  r.empty = r.full + Cfg::kStages;
  return r;
}

// One thread of the block, before any other use: `full` takes the producer's one arrival (and
// the bytes), `empty` one arrival: the one consumer warpgroup whose tile used the stage.
template <int BM, int BN>
__device__ __forceinline__ void pingpong_ring_init(const Ring& r) {
  for (int s = 0; s < PingpongConfig<BM, BN>::kStages; ++s) mbar_init(&r.full[s], 1), mbar_init(&r.empty[s], 1);
  mbar_init_fence();
}

// Moves a ring position n uses on (the k-blocks of the other consumer's tiles): the phase flips
// once per wrap of the ring, as n advance() calls would.
template <int Stages>
__device__ __forceinline__ void ring_skip(RingPos& pos, int n) {
  ring_skip_pos(pos.stage, pos.phase, n, Stages);
}

// ---- named barriers: the MMA order of the two consumers -------------------------------------------
// Ids 1 and 2 (0 is __syncthreads); 256 threads: the two consumer warpgroups. bar.arrive does not
// wait; bar.sync waits until the barrier has its 256 threads (128 arrived, 128 syncing).
inline constexpr int kBarMath0 = 1;  // consumer 0 done issuing a tile's MMAs: consumer 1's turn
inline constexpr int kBarMath1 = 2;  // consumer 1 done issuing: consumer 0's turn
template <int Id, int Threads>
__device__ __forceinline__ void named_bar_sync() {
  asm volatile("bar.sync %0, %1;" ::"n"(Id), "n"(Threads) : "memory");
}
template <int Id, int Threads>
__device__ __forceinline__ void named_bar_arrive() {
  asm volatile("bar.arrive %0, %1;" ::"n"(Id), "n"(Threads) : "memory");
}

// ---- 1. producer: the loads of one tile_m x BN tile --------------------------------------------------
// One thread. A rows [m0, m0 + BM) (ta's box: 64 x BM), B columns [n0, n0 + BN) as whole 64-column
// boxes, slice by slice of K; TMA fills what lies outside the matrices with zeros (and counts the
// whole box's bytes).
template <int BM, int BN>
__device__ __forceinline__ void pingpong_load_tile(const Ring& r, RingPos& pos, const CUtensorMap* ta,
                                                   const CUtensorMap* tb, int m0, int n0, int kblocks) {
  load_tile_of<PingpongConfig<BM, BN>>(r, pos, ta, tb, m0, n0, kblocks);
}

// ---- 2. one consumer: a whole tile's MMAs ------------------------------------------------------------
// Issues every wgmma of the tile (acc[i]: rows 64 i .. 64 i + 63; old values overwritten: the
// first wgmma has scale-d 0), handing each stage back once the next stage's wgmmas are issued and
// the previous group has retired. Returns with the last group still in flight and its stage not
// handed back: the caller lets the other consumer start (named barrier), then calls
// pingpong_mma_tail.
template <int BM, int BN, class T>
__device__ __forceinline__ int pingpong_mma_tile(float (&acc)[BM / 64][BN / 2], const Ring& r, RingPos& pos,
                                                 int kblocks) {
  using Cfg = PingpongConfig<BM, BN>;
  const bool leader = threadIdx.x % 128 == 0;
  int prev = -1;
  for (int kb = 0; kb < kblocks; ++kb) {
    mbar_wait(&r.full[pos.stage], pos.phase);
    const uint32_t a = smem_u32(r.stages + pos.stage * Cfg::kStageBytes);
    const uint32_t b = smem_u32(r.stages + pos.stage * Cfg::kStageBytes + Cfg::kBytesA);
    // As mma_tile: A K-major, 8-row groups 1024 B apart, m64 rows 8 KB apart, a k16 step 32 B
    // along the swizzled row; B MN-major, 64-column boxes 8192 B apart (LBO), 8-row groups 1024 B
    // (SBO), a k16 step 16 rows = 2048 B.
    const uint64_t db = sw128_desc(b, 8192, 1024);
    wgmma_fence();
#pragma unroll
    for (int i = 0; i < Cfg::kRows; ++i) fence_acc(acc[i]);
#pragma unroll
    for (int kk = 0; kk < kTileK / 16; ++kk)
#pragma unroll
      for (int i = 0; i < Cfg::kRows; ++i)
        Wgmma<BN, T>::mma(acc[i], sw128_desc(a + i * 64 * 128, 16, 1024) + uint64_t(kk * 2), db + uint64_t(kk * 128),
                          (kb | kk) ? 1 : 0);
    wgmma_commit();
#pragma unroll
    for (int i = 0; i < Cfg::kRows; ++i) fence_acc(acc[i]);
    wgmma_wait<1>();  // the previous stage's wgmmas have retired: hand that stage back
    if (prev >= 0 && leader) mbar_arrive(&r.empty[prev]);
    prev = pos.stage;
    pos.advance<Cfg::kStages>();
  }
  return prev;
}

// The tile's last wgmmas retired, their stage handed back: acc holds the tile.
template <int BM, int BN>
__device__ __forceinline__ void pingpong_mma_tail(float (&acc)[BM / 64][BN / 2], const Ring& r, int prev) {
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < BM / 64; ++i) fence_acc(acc[i]);
  if (prev >= 0 && threadIdx.x % 128 == 0) mbar_arrive(&r.empty[prev]);
}

// ---- 3. one consumer: the tile's store ----------------------------------------------------------------
// store_tile stores rows m0' + 64 wg .. of a 128-row tile and takes its 16-byte path when
// m0' + 128 <= m: called with m0' = m0 + 64 i - 64 and wg 1 for the m64 row i, it stores rows
// m0 + 64 i .. m0 + 64 i + 63 and takes the fast path exactly when those rows are all inside.
template <int BM, int BN, class T>
__device__ __forceinline__ void pingpong_store_tile(const float (&acc)[BM / 64][BN / 2], void* c, const void* c_in,
                                                    std::size_t ldc, int m, int n, int m0, int n0) {
#pragma unroll
  for (int i = 0; i < BM / 64; ++i) store_tile<BN, T>(acc[i], c, c_in, ldc, m, n, m0 + 64 * i - 64, n0, 1);
}

}  // namespace symm::cuda::tile
