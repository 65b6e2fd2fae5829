// Between the tile GEMM's host half (tile_gemm.cpp) and its kernels (tile_gemm.cu): launches that
// report a cudaError_t instead of throwing (the device pass of a .cu file sees no symm::Error).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "backends/cuda/tile_sched.h"

namespace symm::cuda::tile {

// cudaFuncSetAttribute(Kernel, max dynamic shared memory, bytes) on the current device, once per
// kernel and device: the attribute is the device's, so a process whose ranks sit on several GPUs
// (an in-process team) must set it on each (seen: a 4-rank team over 2 GPUs, the second GPU's
// launch refused with "invalid argument" after a once-per-process set).
template <auto Kernel>
cudaError_t set_max_dynamic_smem(int bytes) {
  constexpr int kDevices = 64;
  static std::atomic<bool> done[kDevices] = {};
  int dev = 0;
  if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  if (dev >= 0 && dev < kDevices && done[dev].load(std::memory_order_acquire)) return cudaSuccess;
  const cudaError_t e = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e == cudaSuccess && dev >= 0 && dev < kDevices) done[dev].store(true, std::memory_order_release);
  return e;
}

// A row-major matrix (rows x cols, row stride ld elements of t, bf16 or fp16) read in boxes of
// box_cols x box_rows, 128-byte swizzled (the wgmma operand layout), elements outside the matrix
// read as zero (tile_gemm.cpp; host only: throws symm::Error on a refusal of the driver).
CUtensorMap tensor_map(const void* base, DType t, uint64_t rows, uint64_t cols, uint64_t ld, uint32_t box_cols,
                       uint32_t box_rows);

// The ring depth compiled for a tile width (0: not compiled).
int stages_of(int tile_n);
// The persistent kernel for (tile_n, bf16 or fp16) on `blocks` blocks in clusters of `cluster`
// (1, or 2: blocks even, p.grid over tile pairs, tile_gemm.cu); cudaErrorInvalidValue for a width
// that is not compiled or another cluster size.
cudaError_t launch_kernel(cudaStream_t stream, const CUtensorMap& ta, const CUtensorMap& tb, const TileGemmParams& p,
                          int tile_n, bool bf16, int blocks, int cluster);
// How many clusters of two of the coop kernel at width tile_n the device runs at once
// (cudaOccupancyMaxActiveClusters): the persistent grid of pairs stays within it.
cudaError_t max_pair_clusters(int tile_n, int& clusters);
// The same for the ping-pong kernel (tile_pingpong.cu), per ping-pong tile (tile_sched.h
// kPingpongTiles); ta's box must be 64 x tile_m.
int pingpong_stages_of(int tile_m, int tile_n);
cudaError_t launch_pingpong_kernel(cudaStream_t stream, const CUtensorMap& ta, const CUtensorMap& tb,
                                   const TileGemmParams& p, int tile_m, int tile_n, bool bf16, int blocks);
// type: 0 bf16, 1 fp16, 2 fp32 (DType's values).
cudaError_t launch_fill_uniform(cudaStream_t stream, void* p, std::size_t count, int type, uint64_t seed);
cudaError_t launch_fill_bits16(cudaStream_t stream, void* p, std::size_t count, uint16_t bits);

}  // namespace symm::cuda::tile
