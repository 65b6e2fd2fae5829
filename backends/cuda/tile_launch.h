// Between the tile GEMM's host half (tile_gemm.cpp) and its kernels (tile_gemm.cu): launches that
// report a cudaError_t instead of throwing (the device pass of a .cu file sees no symm::Error).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/tile_sched.h"

namespace symm::cuda::tile {

// The ring depth compiled for a tile width (0: not compiled).
int stages_of(int tile_n);
// The persistent kernel for (tile_n, bf16 or fp16) on `blocks` blocks; cudaErrorInvalidValue for
// a width that is not compiled.
cudaError_t launch_kernel(cudaStream_t stream, const CUtensorMap& ta, const CUtensorMap& tb, const TileGemmParams& p,
                          int tile_n, bool bf16, int blocks);
// type: 0 bf16, 1 fp16, 2 fp32 (DType's values).
cudaError_t launch_fill_uniform(cudaStream_t stream, void* p, std::size_t count, int type, uint64_t seed);
cudaError_t launch_fill_bits16(cudaStream_t stream, void* p, std::size_t count, uint16_t bits);

}  // namespace symm::cuda::tile
