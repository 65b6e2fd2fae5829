// Our own Hopper GEMM (sm_90a), beside cuBLASLt's GemmRunner (gemm.h): the same GemmArgs contract
// (core/plan.h: C = A x B (+ C_in), row-major, bf16 / fp16 in, fp32 accumulation, C in the inputs'
// type), computed by a persistent, warp-specialised kernel: a TMA producer warp feeding a
// shared-memory ring, two wgmma consumer warpgroups, either sharing 128 x BN x 64 tiles (coop:
// tile_gemm.cuh says how) or taking turns on tiles of their own (pingpong: tile_pingpong.cuh).
// It is the tile verb's CUDA half in waiting: the fused device programs (issue 24) call its
// per-tile pieces; alone it is measured against cuBLASLt by `symmcoll-cuda gemm-bench`.
//
// Capturable in a CUDA graph: one kernel launch, no allocation, no synchronization; the tensor
// maps travel by value in the launch's parameters.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "backends/cuda/tile_sched.h"
#include "core/plan.h"

namespace symm::cuda {

struct TileGemmOptions {
  int tile_n = 0;      // tile width: 0 chooses (tile_sched.h choose_plan); else one of 256, 224, 192, 128
  int group = 16;      // tile rows per rasterisation group (L2 reuse)
  int max_blocks = 0;  // cap on the persistent grid (0: one block per SM): to leave SMs to other work
  // coop (the consumers share a 128-row tile), pingpong (each consumer its own tiles, one's
  // epilogue under the other's MMAs) or auto (tile_sched.h choose_plan: ping-pong at short K).
  tile::TileSchedule schedule = tile::TileSchedule::kAuto;
  int tile_m = 0;  // tile height: 0 chooses; coop 128, pingpong 64 or 128 (tile_sched.h kPingpongTiles)
  // coop only: blocks per cluster. 2: the blocks of a cluster compute a pair of tiles (256 x BN)
  // and each loads half of its B for both (TMA multicast; tile_gemm.cuh). 0 chooses (2 where the
  // product has two tile rows or more and the grid two blocks); pingpong takes 0 or 1.
  int cluster = 0;
  // coop: interior tiles leave through shared memory (C_in, when given, added in the accumulators
  // first; stmatrix, then 16-byte row stores: tile_epilogue.cuh store_tile_plain); false: from
  // registers after quad transposes (store_tile). The same result either way.
  bool staged_epilogue = true;
};

// What one launch would use for g: the schedule, the tile, the grid, the stages of the ring.
struct TileGemmShape {
  tile::TileSchedule schedule = tile::TileSchedule::kCoop;
  int tile_m = 128, tile_n = 0, blocks = 0, tiles = 0, stages = 0, cluster = 1;
  std::string str() const;  // "coop 128x224x64, 8 stages, 512 tiles on 132 blocks" (+ ", clusters of 2")
};

// Throws symm::Error(kUnsupported) in one line when the kernel cannot take g (tile_sched.h
// refusal: types other than bf16 / fp16, leading dimensions not multiples of 8, operands not
// 16-byte aligned); any m, n, k > 0 is taken (the edges are zero-filled loads and predicated stores).
// kInvalidArgument when the options name a tile the schedule has not (tile_sched.h plan_refusal).
TileGemmShape tile_gemm_shape(const GemmArgs& g, const TileGemmOptions& o = {});
void tile_gemm(cudaStream_t stream, const GemmArgs& g, const TileGemmOptions& o = {});

// Bench helpers (gemm_bench.cpp): `count` elements of type t, uniform in (-1, 1) from `seed`
// (a counter hash: the same seed gives the same values), or every 16-bit word set to `bits`.
void fill_uniform(cudaStream_t stream, void* p, std::size_t count, DType t, uint64_t seed);
void fill_bits16(cudaStream_t stream, void* p, std::size_t count, uint16_t bits);

}  // namespace symm::cuda
