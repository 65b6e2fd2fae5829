// The tile device programs of issue 24 on the wgmma kernel (tile_gemm.cuh's per-tile pieces) instead
// of the verb mma_tile's WMMA loop: TileGemm (core/algos/tile_gemm.h), AgMmTiles
// (core/algos/ag_mm_ce_tile_gemm.h), MmRsTiles pull / push (core/algos/mm_rs_tile_reduce.h),
// MmRsAccTiles (core/algos/mm_rs_gemm_ce_tile_acc.h) and MmRsAccPushTiles (core/algos/mm_rs_tile_acc.h).
//
// The core programs stay the one description of each algorithm. A tile program needs what a
// block-uniform verb cannot give: a TMA producer warp running ahead of two wgmma consumer
// warpgroups across tiles. So on CUDA the host plan's launch of one of these programs
// (plans.cu, CudaHost::launch) starts a specialised persistent kernel (tile_fused.cu) that walks
// the program's tiles in the program's order and keeps its flag protocol through the same core
// helpers (TileGrid, AgMmTileWalk, MmRsTileLayout): the same tile lists per block, the same flag
// slots and values, the same memory orders (acquire before reading a peer's chunk, release after
// storing a tile). What differs: its tiles are 128 x BN (BN 256 or 128, chosen per shape), the
// simulator's 128 x 128; the walks and the protocol are functions of the grid.
#pragma once

#include <cuda_runtime.h>

#include "backends/cuda/device_handle.h"
#include "core/algos/ag_mm_ce_tile_gemm.h"
#include "core/algos/mm_rs_gemm_ce_tile_acc.h"
#include "core/algos/mm_rs_tile_acc.h"
#include "core/algos/mm_rs_tile_reduce.h"
#include "core/algos/tile_gemm.h"
#include "core/mat_args.h"

namespace symm::cuda {

enum class TileProgram : int {
  kNone = -1,
  kGemm = 0,
  kAgMm = 1,
  kMmRsPull = 2,
  kMmRsPush = 3,
  kMmRsAcc = 4,
  kMmRsPushAcc = 5
};

// Which device program runs on the wgmma kernel (kNone: the generic program kernel, e.g. the
// tests' planted-fault variants, which only the simulator runs).
template <class P>
inline constexpr TileProgram kTileProgramOf = TileProgram::kNone;
template <>
inline constexpr TileProgram kTileProgramOf<TileGemm> = TileProgram::kGemm;
template <>
inline constexpr TileProgram kTileProgramOf<AgMmTiles<>> = TileProgram::kAgMm;
template <>
inline constexpr TileProgram kTileProgramOf<MmRsTiles<false>> = TileProgram::kMmRsPull;
template <>
inline constexpr TileProgram kTileProgramOf<MmRsTiles<true>> = TileProgram::kMmRsPush;
template <>
inline constexpr TileProgram kTileProgramOf<MmRsAccTiles<>> = TileProgram::kMmRsAcc;
template <>
inline constexpr TileProgram kTileProgramOf<MmRsAccPushTiles<>> = TileProgram::kMmRsPushAcc;

// Loads every tile program's kernel (cudaFuncGetAttributes), as preload_programs (kernels.h) the
// device programs': a kernel loaded lazily at its first launch may synchronize the context, and a
// fused plan launches its tile program after its entry handshake's stream waits, which a peer that
// never calls leaves waiting: the load would wait behind them, where no watchdog runs. (Not what held
// the never-calling-peer cases on 2x H200: that was the NCCL abort, plan_exec.h release_stuck_waits.)
void preload_tile_programs();

// The tile width the kernel takes for program p's product on `blocks` blocks: 256 or 128 (the
// fewer waves, then the wider; tile_sched.h's speeds).
int tile_program_width(TileProgram p, const MatArgs& a, int world, int blocks);

// Launches program p (bf16 or fp16) with the plan's arguments on `blocks` persistent blocks of 384
// threads, one per SM; checks first that the ranks sharing this GPU fit together (residency.h).
// Throws kUnsupported for operands the kernel cannot read through TMA (types, alignment).
void launch_tile_program(TileProgram p, DType t, const DeviceHandle& h, const MatArgs& a, int blocks,
                         cudaStream_t stream);

}  // namespace symm::cuda

// ---- between the host half (tile_fused.cpp) and the kernels (tile_fused.cu) -----------------------
#include <cuda.h>

namespace symm::cuda::tile {
// The kernel for (program, tile width, bf16 or fp16): its address (residency; null for a program
// or width it does not run) and its launch; the launch reports a cudaError_t
// (cudaErrorInvalidValue for a width that is not compiled: 256, 128, or a program it does not run).
const void* program_kernel_ptr(int program, int tile_n, bool bf16);
cudaError_t launch_program(cudaStream_t stream, const DeviceHandle& h, const CUtensorMap& ta, const CUtensorMap& ta2,
                           const CUtensorMap& tb, int program, const MatArgs& a, int tile_n, bool bf16, int blocks);
}  // namespace symm::cuda::tile
