// The tile GEMM's ping-pong kernel (tile_pingpong.cuh says how; tile_sched.h when it is chosen),
// one instantiation per (ping-pong tile, type). The host half is tile_gemm.cpp.
#include <cuda.h>

#include "backends/cuda/tile_launch.h"
#include "backends/cuda/tile_pingpong.cuh"

namespace symm::cuda::tile {
namespace {

// Consumer C (0 or 1) of the block's `mine` tiles: tiles j = C, C + 2, ... (tile_pingpong.cuh).
template <int C, int BM, int BN, class T>
__device__ __forceinline__ void consume(const Ring& ring, const TileGemmParams& p, int kblocks, int mine) {
  using Cfg = PingpongConfig<BM, BN>;
  constexpr int kWaitFor = C == 0 ? kBarMath1 : kBarMath0;  // the other consumer done issuing
  constexpr int kSignal = C == 0 ? kBarMath0 : kBarMath1;   // this one done issuing
  RingPos pos;
  ring_skip<Cfg::kStages>(pos, C * kblocks);  // consumer 1 starts at tile 1's first k-block
  float acc[BM / 64][BN / 2];
  for (int j = C; j < mine; j += 2) {
    // Wait for the other consumer to have issued tile j - 1's MMAs (none before tile 0).
    if (j > 0) named_bar_sync<kWaitFor, 256>();
    const int prev = pingpong_mma_tile<BM, BN, T>(acc, ring, pos, kblocks);
    // Tile j + 1's MMAs may start (when there is one: an arrival nobody syncs on would be left on
    // the barrier at exit).
    if (j + 1 < mine) named_bar_arrive<kSignal, 256>();
    pingpong_mma_tail<BM, BN>(acc, ring, prev);
    ring_skip<Cfg::kStages>(pos, kblocks);  // tile j + 1 is the other consumer's
    int tm, tn;
    p.grid.coords(int(blockIdx.x) + j * int(gridDim.x), tm, tn);
    pingpong_store_tile<BM, BN, T>(acc, p.c, p.c_in, p.ldc, p.m, p.n, tm * BM, tn * BN);
  }
}

// Warpgroup 0 produces (one thread issues every load), warpgroups 1 and 2 consume, each its own
// tiles: the block's j-th tile (j = 0, 1, ...: tile blockIdx.x + j gridDim.x) is consumer
// j % 2's. Registers move from the producer to the consumers (setmaxnreg): 128 x 40 + 256 x 232
// <= 64K.
template <int BM, int BN, class T>
__global__ void __launch_bounds__(384, 1)
    tile_pingpong_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
                         TileGemmParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint8_t smem_raw[];
  const Ring ring = pingpong_ring_at<BM, BN>(smem_raw);
  if (threadIdx.x == 0) pingpong_ring_init<BM, BN>(ring);
  __syncthreads();
  const int wg = threadIdx.x / 128;
  const int kblocks = (p.k + kTileK - 1) / kTileK;
  const int tiles = p.grid.tiles();
  // This block's tiles: blockIdx.x + j gridDim.x for j < mine (the launch gives every block >= 1).
  const int mine = tiles > int(blockIdx.x) ? (tiles - int(blockIdx.x) + int(gridDim.x) - 1) / int(gridDim.x) : 0;
  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      tma_prefetch_map(&ta);
      tma_prefetch_map(&tb);
      RingPos pos;
      for (int j = 0; j < mine; ++j) {
        int tm, tn;
        p.grid.coords(int(blockIdx.x) + j * int(gridDim.x), tm, tn);
        pingpong_load_tile<BM, BN>(ring, pos, &ta, &tb, tm * BM, tn * BN, kblocks);
      }
    }
  } else if (wg == 1) {  // one branch per consumer: one if / else around both spilled at 64 x 256
    setmaxnreg_inc<232>();
    consume<0, BM, BN, T>(ring, p, kblocks, mine);
  } else {
    setmaxnreg_inc<232>();
    consume<1, BM, BN, T>(ring, p, kblocks, mine);
  }
#endif
}

template <int BM, int BN, class T>
cudaError_t launch(cudaStream_t stream, const CUtensorMap& ta, const CUtensorMap& tb, const TileGemmParams& p,
                   int blocks) {
  using Cfg = PingpongConfig<BM, BN>;
  const cudaError_t attr = set_max_dynamic_smem<tile_pingpong_kernel<BM, BN, T>>(Cfg::kSmemBytes);
  if (attr != cudaSuccess) return attr;
  tile_pingpong_kernel<BM, BN, T><<<blocks, 384, Cfg::kSmemBytes, stream>>>(ta, tb, p);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_t(cudaStream_t stream, const CUtensorMap& ta, const CUtensorMap& tb, const TileGemmParams& p,
                     int tile_m, int tile_n, int blocks) {
  if (tile_m == 128 && tile_n == 128) return launch<128, 128, T>(stream, ta, tb, p, blocks);
  if (tile_m == 64) switch (tile_n) {
      case 256: return launch<64, 256, T>(stream, ta, tb, p, blocks);
      case 224: return launch<64, 224, T>(stream, ta, tb, p, blocks);
      case 192: return launch<64, 192, T>(stream, ta, tb, p, blocks);
      case 128: return launch<64, 128, T>(stream, ta, tb, p, blocks);
    }
  return cudaErrorInvalidValue;
}

}  // namespace

int pingpong_stages_of(int tile_m, int tile_n) {
  if (tile_m == 128 && tile_n == 128) return PingpongConfig<128, 128>::kStages;
  if (tile_m == 64) switch (tile_n) {
      case 256: return PingpongConfig<64, 256>::kStages;
      case 224: return PingpongConfig<64, 224>::kStages;
      case 192: return PingpongConfig<64, 192>::kStages;
      case 128: return PingpongConfig<64, 128>::kStages;
    }
  return 0;
}

cudaError_t launch_pingpong_kernel(cudaStream_t stream, const CUtensorMap& ta, const CUtensorMap& tb,
                                   const TileGemmParams& p, int tile_m, int tile_n, bool bf16, int blocks) {
  return bf16 ? launch_t<TileBF16>(stream, ta, tb, p, tile_m, tile_n, blocks)
              : launch_t<TileF16>(stream, ta, tb, p, tile_m, tile_n, blocks);
}

}  // namespace symm::cuda::tile
