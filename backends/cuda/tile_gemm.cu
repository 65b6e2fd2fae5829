// The tile GEMM's kernels (tile_gemm.h): the persistent loop over tile_gemm.cuh's per-tile pieces,
// one instantiation per (tile width, type), and the bench's fill kernels. The host half (tensor
// maps, shape choice, refusals) is tile_gemm.cpp.
#include <cuda.h>

#include "backends/cuda/tile_epilogue.cuh"
#include "backends/cuda/tile_launch.h"

namespace symm::cuda::tile {
namespace {

// Warpgroup 0 produces (one thread issues every load), warpgroups 1 and 2 consume. Registers move
// from the producer to the consumers (setmaxnreg): 128 x 40 + 256 x 232 <= 64K.
// CM 1: block b takes tiles b, b + grid, ... (TileGrid's order). CM 2 (clusters of two, launched
// with a cluster dimension): p.grid counts tile pairs (its tiles_m is the pairs' rows); cluster c
// takes pairs c, c + clusters, ..., and its block of rank r the pair's tile row 2 pm + r (past
// the matrix's last row when tiles_m is odd: loads of zeros, no stores, kept in step with its peer).
template <int BN, class T, int CM>
__global__ void __launch_bounds__(384, 1)
    tile_gemm_kernel(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb, TileGemmParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Cfg = TileConfig<BN>;
  extern __shared__ uint8_t smem_raw[];
  const Ring ring = ring_at<BN>(smem_raw);
  if (threadIdx.x == 0) ring_init<BN, CM>(ring);
  if constexpr (CM == 1)
    __syncthreads();
  else
    cluster_sync();
  const int wg = threadIdx.x / 128;
  const int kblocks = (p.k + kTileK - 1) / kTileK;
  const int tiles = p.grid.tiles();
  const uint32_t rank = CM == 1 ? 0 : cluster_rank();
  const int first = int(blockIdx.x) / CM, step = int(gridDim.x) / CM;
  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      tma_prefetch_map(&ta);
      tma_prefetch_map(&tb);
      RingPos pos;
      for (int t = first; t < tiles; t += step) {
        int tm, tn;
        p.grid.coords(t, tm, tn);
        load_tile<BN, CM>(ring, pos, &ta, &tb, (tm * CM + int(rank)) * kTileM, tn * BN, kblocks, rank);
      }
    }
    __syncwarp();
  } else {
    setmaxnreg_inc<232>();
    RingPos pos;
    float acc[Cfg::kAcc];
    for (int t = first; t < tiles; t += step) {
      int tm, tn;
      p.grid.coords(t, tm, tn);
      const int m0 = (tm * CM + int(rank)) * kTileM, n0 = tn * BN;
      if (p.staged) prefetch_inputs<BN, T>(p.c_in, p.ldc, p.m, p.n, m0, n0, wg - 1, 1, 0);
      mma_tile<BN, T, CM>(acc, ring, pos, kblocks, wg - 1);
      if (p.staged)
        store_tile_plain<BN, T>(acc, p.c, p.ldc, p.m, p.n, m0, n0, wg - 1, ring, p.c_in);
      else
        store_tile<BN, T>(acc, p.c, p.c_in, p.ldc, p.m, p.n, m0, n0, wg - 1);
    }
  }
  if constexpr (CM > 1) cluster_sync();
#endif
}

// A launch of `blocks` blocks in clusters of two along x, with the kernel's shared memory.
struct PairLaunch {
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute cluster[1];
  PairLaunch(int blocks, int smem_bytes, cudaStream_t stream) {
    cfg.gridDim = dim3(unsigned(blocks));
    cfg.blockDim = dim3(384);
    cfg.dynamicSmemBytes = std::size_t(smem_bytes);
    cfg.stream = stream;
    cluster[0].id = cudaLaunchAttributeClusterDimension;
    cluster[0].val.clusterDim.x = 2, cluster[0].val.clusterDim.y = 1, cluster[0].val.clusterDim.z = 1;
    cfg.attrs = cluster, cfg.numAttrs = 1;
  }
  PairLaunch(const PairLaunch&) = delete;  // cfg.attrs points into this object
  PairLaunch& operator=(const PairLaunch&) = delete;
};

template <int BN, class T>
cudaError_t launch(cudaStream_t stream, const CUtensorMap& ta, const CUtensorMap& tb, const TileGemmParams& p,
                   int blocks, int cluster) {
  using Cfg = TileConfig<BN>;
  if (cluster == 1) {
    const cudaError_t attr = set_max_dynamic_smem<tile_gemm_kernel<BN, T, 1>>(Cfg::kSmemBytes);
    if (attr != cudaSuccess) return attr;
    tile_gemm_kernel<BN, T, 1><<<blocks, 384, Cfg::kSmemBytes, stream>>>(ta, tb, p);
    return cudaGetLastError();
  }
  if (cluster != 2 || blocks % 2 != 0) return cudaErrorInvalidValue;
  const cudaError_t attr = set_max_dynamic_smem<tile_gemm_kernel<BN, T, 2>>(Cfg::kSmemBytes);
  if (attr != cudaSuccess) return attr;
  const PairLaunch l(blocks, Cfg::kSmemBytes, stream);
  return cudaLaunchKernelEx(&l.cfg, tile_gemm_kernel<BN, T, 2>, ta, tb, p);
}

template <int BN>
cudaError_t pair_clusters(int& clusters) {
  using Cfg = TileConfig<BN>;
  const cudaError_t attr = set_max_dynamic_smem<tile_gemm_kernel<BN, TileBF16, 2>>(Cfg::kSmemBytes);
  if (attr != cudaSuccess) return attr;
  const PairLaunch l(2, Cfg::kSmemBytes, nullptr);
  return cudaOccupancyMaxActiveClusters(&clusters, tile_gemm_kernel<BN, TileBF16, 2>, &l.cfg);
}

template <class T>
cudaError_t launch_t(cudaStream_t stream, const CUtensorMap& ta, const CUtensorMap& tb, const TileGemmParams& p,
                     int tile_n, int blocks, int cluster) {
  switch (tile_n) {
    case 256: return launch<256, T>(stream, ta, tb, p, blocks, cluster);
    case 224: return launch<224, T>(stream, ta, tb, p, blocks, cluster);
    case 192: return launch<192, T>(stream, ta, tb, p, blocks, cluster);
    case 128: return launch<128, T>(stream, ta, tb, p, blocks, cluster);
  }
  return cudaErrorInvalidValue;
}

__device__ __forceinline__ uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

template <class T>
__global__ void fill_uniform_kernel(T* p, std::size_t count, uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float u = float(mix(seed * 0x9e3779b97f4a7c15ULL + i) >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    p[i] = T(2.0f * u - 1.0f);
  }
}

__global__ void fill_bits16_kernel(uint16_t* p, std::size_t count, uint16_t bits) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = bits;
}

}  // namespace

int stages_of(int tile_n) {
  switch (tile_n) {
    case 256: return TileConfig<256>::kStages;
    case 224: return TileConfig<224>::kStages;
    case 192: return TileConfig<192>::kStages;
    case 128: return TileConfig<128>::kStages;
  }
  return 0;
}

cudaError_t launch_kernel(cudaStream_t stream, const CUtensorMap& ta, const CUtensorMap& tb, const TileGemmParams& p,
                          int tile_n, bool bf16, int blocks, int cluster) {
  return bf16 ? launch_t<TileBF16>(stream, ta, tb, p, tile_n, blocks, cluster)
              : launch_t<TileF16>(stream, ta, tb, p, tile_n, blocks, cluster);
}

cudaError_t max_pair_clusters(int tile_n, int& clusters) {
  clusters = 0;
  switch (tile_n) {
    case 256: return pair_clusters<256>(clusters);
    case 224: return pair_clusters<224>(clusters);
    case 192: return pair_clusters<192>(clusters);
    case 128: return pair_clusters<128>(clusters);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launch_fill_uniform(cudaStream_t stream, void* p, std::size_t count, int type, uint64_t seed) {
  if (type == 0)
    fill_uniform_kernel<__nv_bfloat16><<<1024, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(p), count, seed);
  else if (type == 1)
    fill_uniform_kernel<__half><<<1024, 256, 0, stream>>>(static_cast<__half*>(p), count, seed);
  else
    fill_uniform_kernel<float><<<1024, 256, 0, stream>>>(static_cast<float*>(p), count, seed);
  return cudaGetLastError();
}

cudaError_t launch_fill_bits16(cudaStream_t stream, void* p, std::size_t count, uint16_t bits) {
  fill_bits16_kernel<<<1024, 256, 0, stream>>>(static_cast<uint16_t*>(p), count, bits);
  return cudaGetLastError();
}

}  // namespace symm::cuda::tile
