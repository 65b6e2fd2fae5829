// Between the tile GEMM's host half (tile_gemm.cpp) and its kernels (tile_gemm.cu): launches that
// report a cudaError_t instead of throwing (the device pass of a .cu file sees no symm::Error).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/tile_sched.h"

namespace symm::cuda::tile {

// A row-major matrix (rows x cols, row stride ld elements of t, bf16 or fp16) read in boxes of
// box_cols x box_rows, 128-byte swizzled (the wgmma operand layout), elements outside the matrix
// read as zero (tile_gemm.cpp; host only: throws symm::Error on a refusal of the driver).
CUtensorMap tensor_map(const void* base, DType t, uint64_t rows, uint64_t cols, uint64_t ld, uint32_t box_cols,
                       uint32_t box_rows);

// The ring depth compiled for a tile width (0: not compiled).
int stages_of(int tile_n);
// The persistent kernel for (tile_n, bf16 or fp16) on `blocks` blocks; cudaErrorInvalidValue for
// a width that is not compiled.
cudaError_t launch_kernel(cudaStream_t stream, const CUtensorMap& ta, const CUtensorMap& tb, const TileGemmParams& p,
                          int tile_n, bool bf16, int blocks);
// The same for the ping-pong kernel (tile_pingpong.cu), per ping-pong tile (tile_sched.h
// kPingpongTiles); ta's box must be 64 x tile_m.
int pingpong_stages_of(int tile_m, int tile_n);
cudaError_t launch_pingpong_kernel(cudaStream_t stream, const CUtensorMap& ta, const CUtensorMap& tb,
                                   const TileGemmParams& p, int tile_m, int tile_n, bool bf16, int blocks);
// type: 0 bf16, 1 fp16, 2 fp32 (DType's values).
cudaError_t launch_fill_uniform(cudaStream_t stream, void* p, std::size_t count, int type, uint64_t seed);
cudaError_t launch_fill_bits16(cudaStream_t stream, void* p, std::size_t count, uint16_t bits);

}  // namespace symm::cuda::tile
