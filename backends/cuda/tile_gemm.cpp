// The tile GEMM's host half (tile_gemm.h): refusals and the tile width (tile_sched.h), tensor maps
// from the driver's cuTensorMapEncodeTiled (fetched as plan_exec.cpp fetches driver functions),
// and the launch (tile_gemm.cu).
#include "backends/cuda/tile_gemm.h"

#include <cuda.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "backends/cuda/check.h"
#include "backends/cuda/tile_launch.h"
#include "backends/cuda/tile_sched.h"

namespace symm::cuda {
namespace {

using EncodeFn = CUresult(CUDAAPI*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                    const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                    CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeFn encode_fn() {
  static const EncodeFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    SYMM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q));
    if (!f || q != cudaDriverEntryPointSuccess)
      fail(ErrorCode::kCuda, "the CUDA driver has no cuTensorMapEncodeTiled (tile gemm)");
    return reinterpret_cast<EncodeFn>(f);
  }();
  return fn;
}

}  // namespace

// A row-major matrix (rows x cols, row stride ld elements) read in boxes of box_cols x box_rows,
// 128-byte swizzled (the wgmma operand layout), elements outside the matrix read as zero.
CUtensorMap tile::tensor_map(const void* base, DType t, uint64_t rows, uint64_t cols, uint64_t ld, uint32_t box_cols,
                             uint32_t box_rows) {
  CUtensorMap m;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {ld * 2};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r =
      encode_fn()(&m, t == DType::kBF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                  const_cast<void*>(base), dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    fail(ErrorCode::kCuda, "cuTensorMapEncodeTiled failed: CUresult " + std::to_string(int(r)) + " (rows " +
                               std::to_string(rows) + " cols " + std::to_string(cols) + " ld " + std::to_string(ld) +
                               ")");
  return m;
}

std::string TileGemmShape::str() const {
  return std::string(tile::schedule_name(schedule)) + " " + std::to_string(tile_m) + "x" + std::to_string(tile_n) +
         "x64, " + std::to_string(stages) + " stages, " + std::to_string(tiles) + " tiles on " +
         std::to_string(blocks) + " blocks" + (cluster > 1 ? ", clusters of " + std::to_string(cluster) : "");
}

namespace {
// The GPU's name (cudaDeviceProp::name), looked up once per device: tile_gemm_shape runs at every launch.
std::string device_name(int dev) {
  static std::mutex mu;
  static std::map<int, std::string> names;
  std::lock_guard<std::mutex> lock(mu);
  auto it = names.find(dev);
  if (it != names.end()) return it->second;
  cudaDeviceProp p{};
  SYMM_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  return names[dev] = p.name;
}
// Clusters of two the device runs at once at width tile_n, looked up once per (device, width).
int resident_pairs(int dev, int tile_n) {
  static std::mutex mu;
  static std::map<std::pair<int, int>, int> known;
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find({dev, tile_n});
  if (it != known.end()) return it->second;
  int clusters = 0;
  SYMM_CUDA_CHECK(tile::max_pair_clusters(tile_n, clusters));
  return known[{dev, tile_n}] = clusters;
}
}  // namespace

TileGemmShape tile_gemm_shape(const GemmArgs& g, const TileGemmOptions& o) {
  if (const std::string why = tile::refusal(g); !why.empty()) fail(ErrorCode::kUnsupported, why);
  if (o.tile_n != 0 && !tile::is_tile_n(o.tile_n))
    fail(ErrorCode::kInvalidArgument,
         "tile gemm: tile width " + std::to_string(o.tile_n) + " is not compiled (valid: 256, 224, 192, 128)");
  if (const std::string why = tile::plan_refusal(o.schedule, o.tile_m, o.tile_n); !why.empty())
    fail(ErrorCode::kInvalidArgument, why);
  if (o.group < 1) fail(ErrorCode::kInvalidArgument, "tile gemm: group must be >= 1");
  if (o.cluster < 0 || o.cluster > 2)
    fail(ErrorCode::kInvalidArgument, "tile gemm: cluster " + std::to_string(o.cluster) + " (valid: 0, 1, 2)");
  int dev = 0, sms = 0;
  SYMM_CUDA_CHECK(cudaGetDevice(&dev));
  SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int cap = o.max_blocks > 0 && o.max_blocks < sms ? o.max_blocks : sms;
  TileGemmShape s;
  const tile::TileModel model = tile::tile_model_for(device_name(dev));
  const tile::TilePlan plan = tile::choose_plan(g.m, g.n, g.k, cap, o.schedule, o.tile_m, o.tile_n, model);
  s.schedule = plan.schedule, s.tile_m = plan.tile_m, s.tile_n = plan.tile_n;  // coop: choose_tile_n's width
  const tile::TileGrid grid = tile::tile_grid(g.m, g.n, s.tile_m, s.tile_n, o.group);
  s.tiles = grid.tiles();
  s.blocks = s.tiles < cap ? s.tiles : cap;
  if (s.schedule == tile::TileSchedule::kPingpong) {
    if (o.cluster == 2) fail(ErrorCode::kInvalidArgument, "tile gemm: clusters of 2 are for the coop schedule only");
  } else if (o.cluster == 2 || (o.cluster == 0 && model.pair_clusters && grid.tiles_m >= 2 && cap >= 2)) {
    // Tile pairs: a cluster per pair, as many as fit the cap (an even grid).
    const int pairs = tile::pair_grid(grid).tiles();
    const int clusters = std::min({pairs, cap / 2, resident_pairs(dev, s.tile_n)});
    s.cluster = 2;
    s.blocks = 2 * clusters;
    if (s.blocks < 2) fail(ErrorCode::kInvalidArgument, "tile gemm: clusters of 2 need a grid of 2 blocks or more");
  }
  s.stages = s.schedule == tile::TileSchedule::kPingpong ? tile::pingpong_stages_of(s.tile_m, s.tile_n)
                                                         : tile::stages_of(s.tile_n);
  return s;
}

void tile_gemm(cudaStream_t stream, const GemmArgs& g, const TileGemmOptions& o) {
  const TileGemmShape s = tile_gemm_shape(g, o);
  const CUtensorMap ta =
      tile::tensor_map(g.a, g.dtype, uint64_t(g.m), uint64_t(g.k), g.lda, tile::kTileK, uint32_t(s.tile_m));
  const CUtensorMap tb = tile::tensor_map(g.b, g.dtype, uint64_t(g.k), uint64_t(g.n), g.ldb, 64, tile::kTileK);
  tile::TileGemmParams p;
  p.c = g.c, p.c_in = g.c_in, p.ldc = g.ldc, p.m = g.m, p.n = g.n, p.k = g.k;
  p.grid = tile::tile_grid(g.m, g.n, s.tile_m, s.tile_n, o.group);
  if (s.cluster == 2) p.grid = tile::pair_grid(p.grid);
  p.staged = o.staged_epilogue;
  const bool bf16 = g.dtype == DType::kBF16;
  if (s.schedule == tile::TileSchedule::kPingpong)
    SYMM_CUDA_CHECK(tile::launch_pingpong_kernel(stream, ta, tb, p, s.tile_m, s.tile_n, bf16, s.blocks));
  else
    SYMM_CUDA_CHECK(tile::launch_kernel(stream, ta, tb, p, s.tile_n, bf16, s.blocks, s.cluster));
}

void fill_uniform(cudaStream_t stream, void* p, std::size_t count, DType t, uint64_t seed) {
  SYMM_CUDA_CHECK(tile::launch_fill_uniform(stream, p, count, int(t), seed));
}

void fill_bits16(cudaStream_t stream, void* p, std::size_t count, uint16_t bits) {
  SYMM_CUDA_CHECK(tile::launch_fill_bits16(stream, p, count, bits));
}

}  // namespace symm::cuda
