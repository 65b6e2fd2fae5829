// The tile programs' host half (tile_fused.h): the tile width, the tensor maps of the operands, the
// residency check, the launch (tile_fused.cu).
#include "backends/cuda/tile_fused.h"

#include <cstdint>
#include <cstdlib>
#include <string>

#include "backends/cuda/check.h"
#include "backends/cuda/residency.h"
#include "backends/cuda/tile_gemm.h"
#include "backends/cuda/tile_launch.h"

namespace symm::cuda {

int tile_program_width(TileProgram p, const MatArgs& a, int world, int blocks) {
  // Every program's tiles together cover an M x N product (mm_rs: world rounds of M/world rows),
  // but MmRsAcc's, which covers my M/world rows only: the width with the fewer predicted waves per
  // block, weighed by tile_sched.h's relative speeds.
  const int nb = blocks > 0 ? blocks : 1;
  const uint32_t rows = p == TileProgram::kMmRsAcc && world > 0 ? a.m / uint32_t(world) : a.m;
  auto cost = [&](int bn, double speed) {
    const uint32_t tiles = TileGrid(rows, a.n, uint32_t(bn)).tiles();
    return double((tiles + uint32_t(nb) - 1) / uint32_t(nb)) * bn / speed;
  };
  return cost(256, 1.0) <= cost(128, 0.88) ? 256 : 128;
}

namespace {
// Diagnosis only (timing runs; wrong results): SYMM_DEBUG_AGMM_GEMM=coop-c1 | coop-c2 runs, in
// place of ag_mm's tile program, the plain coop GEMM (tile_gemm.h, gemm-bench's kernel) over the
// whole gathered A without a wait, in clusters of 1 or 2 (TMA multicast of B); =program the
// TileGemm program (this file's kernel, its grid order) over the gathered A: is the program's time
// beside the copy engines its walk, its kernel, or any of our GEMMs there? 0: off, 3: program.
// (=cublaslt, cuBLASLt over it, is plans.cu's: the plan's GEMM runner.)
int debug_agmm_gemm() {
  static const int c = [] {
    const char* e = std::getenv("SYMM_DEBUG_AGMM_GEMM");
    const std::string v = e ? e : "";
    return v == "coop-c1" ? 1 : v == "coop-c2" ? 2 : v == "program" ? 3 : 0;
  }();
  return c;
}
}  // namespace

void preload_tile_programs() {
  for (const TileProgram p : {TileProgram::kGemm, TileProgram::kAgMm, TileProgram::kMmRsPull, TileProgram::kMmRsPush,
                              TileProgram::kMmRsAcc, TileProgram::kMmRsPushAcc})
    for (const int bn : {128, 256})
      for (const bool bf16 : {true, false}) {
        cudaFuncAttributes attr;
        SYMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, tile::program_kernel_ptr(int(p), bn, bf16)));
      }
}

void launch_tile_program(TileProgram p, DType t, const DeviceHandle& h, const MatArgs& a, int blocks,
                         cudaStream_t stream) {
  if (t != DType::kBF16 && t != DType::kFP16) fail(ErrorCode::kUnsupported, "tile programs: bf16 and fp16 only");
  const int debug = p == TileProgram::kAgMm ? debug_agmm_gemm() : 0;
  if (debug == 1 || debug == 2) {
    TileGemmOptions o;
    o.schedule = tile::TileSchedule::kCoop;
    o.cluster = debug;
    tile_gemm(stream, gemm_args(a.a2, a.b, a.c, a.m, a.n, a.k, t), o);
    return;
  }
  if (debug == 3) {
    MatArgs g = a;
    g.a = a.a2;
    return launch_tile_program(TileProgram::kGemm, t, h, g, blocks, stream);
  }
  const bool ag = p == TileProgram::kAgMm, rs = p == TileProgram::kMmRsPull || p == TileProgram::kMmRsPush ||
                                                p == TileProgram::kMmRsAcc || p == TileProgram::kMmRsPushAcc;
  const int w = h.world;
  const std::string shape =
      " (m " + std::to_string(a.m) + " n " + std::to_string(a.n) + " k " + std::to_string(a.k) + ")";
  if (a.m == 0 || a.n == 0 || a.k == 0 || a.n % 8 || a.k % 8)
    fail(ErrorCode::kUnsupported, "tile programs: n and k must be non-zero multiples of 8" + shape);
  if ((ag || rs) && a.m % uint32_t(w)) fail(ErrorCode::kUnsupported, "tile programs: m not divisible by world" + shape);
  if ((ag || p == TileProgram::kMmRsAcc) && a.chunk_rows == 0)
    fail(ErrorCode::kInvalidArgument, "tile program: chunk_rows is 0");
  if (p == TileProgram::kMmRsAcc && a.chunk_rows % tile::kTileM && a.chunk_rows < a.m / uint32_t(w))
    fail(ErrorCode::kInvalidArgument, "mm_rs tile program: chunk_rows " + std::to_string(a.chunk_rows) +
                                          " is not a multiple of the tile's 128 rows" + shape);
  for (const void* q : {a.a, a.b, static_cast<const void*>(a.c), ag ? a.a2 : a.a, rs ? a.work : a.a})
    if (!q || reinterpret_cast<std::uintptr_t>(q) % 16)
      fail(ErrorCode::kUnsupported, "tile programs: an operand is null or not 16-byte aligned" + shape);
  if (blocks < 1 || blocks > kPadBlocks)
    fail(ErrorCode::kInvalidArgument, "tile programs: " + std::to_string(blocks) + " blocks, valid 1.." +
                                          std::to_string(kPadBlocks) + " (the flags' block index)");

  const int bn = tile_program_width(p, a, w, blocks);
  const bool bf16 = t == DType::kBF16;
  // A: ag_mm's shard (m / world rows) and the gathered A (m rows); otherwise m rows. TMA boxes as
  // tile_gemm.cpp's: A 64 (k) x 128 rows, B 64 columns x 64 (k).
  const uint64_t a_rows = ag ? a.m / uint32_t(w) : a.m;
  const CUtensorMap ta = tile::tensor_map(a.a, t, a_rows, a.k, a.k, tile::kTileK, tile::kTileM);
  const CUtensorMap ta2 = ag ? tile::tensor_map(a.a2, t, a.m, a.k, a.k, tile::kTileK, tile::kTileM) : ta;
  const CUtensorMap tb = tile::tensor_map(a.b, t, a.k, a.n, a.n, 64, tile::kTileK);
  // Blocks that wait for peers (ag_mm, mm_rs) must all be resident with the other ranks' on a
  // shared GPU; the plans cap them at SMs / ranks on the GPU (FusedArgs::sms).
  if (ag || rs)
    check_residency(tile::program_kernel_ptr(int(p), bn, bf16), h, blocks, 384, "a tile program (tile_fused.cu)");
  SYMM_CUDA_CHECK(tile::launch_program(stream, h, ta, ta2, tb, int(p), a, bn, bf16, blocks));
}

}  // namespace symm::cuda
