// The tile GEMM's plain decisions (backends/cuda/tile_gemm.h), kept free of CUDA so that the CPU
// tests check them: the tiles of a product, the order in which a persistent grid visits them, the
// tile width that suits a shape, and the operands the kernel refuses.
#pragma once

#include <cstdint>
#include <string>

#include "core/algos/tile_gemm.h"
#include "core/common.h"
#include "core/plan.h"

namespace symm::cuda::tile {

inline constexpr int kTileM = 128;  // two consumer warpgroups of 64 rows each
inline constexpr int kTileK = 64;   // one 128-byte swizzle row of 16-bit elements
// The tile widths compiled (tile_gemm.cu); each is a wgmma N (a multiple of 8, at most 256).
inline constexpr int kTileNs[] = {256, 224, 192, 128};
inline constexpr int kDefaultGroup = 16;  // tile rows per rasterisation group

// The tiles of an m x n product and the order a persistent grid visits them: block b takes
// tiles b, b + grid, b + 2 grid, ...; tile t sits in group t / (group * tiles_n) of `group` tile
// rows, column-major inside it (symm::grouped_tile, the tile programs' order too). Consecutive
// tiles (those running at once) then share a few tile rows of A and a few tile columns of B,
// which stay in L2 while the grid walks down K.
struct TileGrid {
  int tiles_m = 0, tiles_n = 0, group = kDefaultGroup;

  SYMM_HD int tiles() const { return tiles_m * tiles_n; }
  SYMM_HD void coords(int t, int& tm, int& tn) const {
    uint32_t r, c;
    grouped_tile(uint32_t(t), uint32_t(tiles_m), uint32_t(tiles_n), uint32_t(group), r, c);
    tm = int(r), tn = int(c);
  }
};

// The kernel's parameters besides the two tensor maps (tile_gemm.cu).
struct TileGemmParams {
  void* c = nullptr;
  const void* c_in = nullptr;
  std::size_t ldc = 0;
  int m = 0, n = 0, k = 0;
  TileGrid grid;
  bool staged = true;  // coop: interior tiles leave through shared memory (store_tile_plain)
};

inline TileGrid tile_grid(int m, int n, int tile_n, int group) {
  TileGrid g;
  g.tiles_m = (m + kTileM - 1) / kTileM;
  g.tiles_n = (n + tile_n - 1) / tile_n;
  g.group = group;
  return g;
}

// The coop kernel's clusters of two (tile_gemm.cu): the grid of tile pairs, tile rows 2 r and
// 2 r + 1 of g in pair row r (the last pair half past the matrix when g.tiles_m is odd), visited
// in TileGrid's order with groups of half as many pair rows (the same rows of A per group).
inline TileGrid pair_grid(const TileGrid& g) {
  TileGrid p = g;
  p.tiles_m = (g.tiles_m + 1) / 2;
  p.group = g.group / 2 > 0 ? g.group / 2 : 1;
  return p;
}

// Whether `tile_n` is one of the compiled widths.
inline bool is_tile_n(int tile_n) {
  for (int t : kTileNs)
    if (t == tile_n) return true;
  return false;
}

// The width with the least predicted time for m x n on `blocks` persistent blocks: every block
// runs ceil(tiles / blocks) tiles (the last wave counts whole), a tile costs its area over the
// width's relative speed (wide tiles reuse A more; 224 also loads 32 columns of B it drops).
inline int choose_tile_n(int m, int n, int blocks) {
  auto speed = [](int tn) { return tn == 256 ? 1.0 : tn == 224 ? 0.98 : tn == 192 ? 0.95 : 0.88; };
  int best = kTileNs[0];
  double best_cost = 0;
  for (int tn : kTileNs) {
    const TileGrid g = tile_grid(m, n, tn, kDefaultGroup);
    const double waves = double((g.tiles() + blocks - 1) / blocks);
    const double cost = waves * tn / speed(tn);
    if (best_cost == 0 || cost < best_cost) best = tn, best_cost = cost;
  }
  return best;
}

// ---- schedules: cooperative or ping-pong ---------------------------------------------------------
// coop (tile_gemm.cu): both consumer warpgroups compute one 128 x BN tile together (rows 0..63 and
// 64..127), then both store it from registers while the tensor cores idle: an exposed epilogue
// per tile. pingpong (tile_pingpong.cu): each consumer warpgroup computes tiles of its own
// (tile_m x BN, tile_m 64 or 128), the block's tiles alternating between the two; their MMA
// phases take turns (a named barrier), so one stores its tile while the other's MMAs run.
enum class TileSchedule { kAuto, kCoop, kPingpong };

inline const char* schedule_name(TileSchedule s) {
  return s == TileSchedule::kCoop ? "coop" : s == TileSchedule::kPingpong ? "pingpong" : "auto";
}
// "auto", "coop", "pingpong"; false for anything else.
inline bool parse_schedule(const std::string& s, TileSchedule& out) {
  for (TileSchedule t : {TileSchedule::kAuto, TileSchedule::kCoop, TileSchedule::kPingpong})
    if (s == schedule_name(t)) return out = t, true;
  return false;
}

// The ping-pong tiles compiled (tile_pingpong.cu), tile_m x tile_n, each within one consumer
// warpgroup's registers: tile_m / 64 x tile_n / 2 fp32 accumulators per thread, at most 128.
struct TileHW {
  int m, n;
};
inline constexpr TileHW kPingpongTiles[] = {{128, 128}, {64, 256}, {64, 224}, {64, 192}, {64, 128}};

inline bool is_pingpong_tile(int tile_m, int tile_n) {
  for (TileHW t : kPingpongTiles)
    if (t.m == tile_m && t.n == tile_n) return true;
  return false;
}

// The time model behind the choice of schedule and tile (the defaults below: first guesses, fitted
// by hand to experiments/results/h200x1/tile_gemm (v3); each GPU model's TileModel is refit from
// scripts/gpu/tile_sched.sh's CSVs, every schedule forced beside cuBLASLt).
// A block runs its tiles one after the other; the grid takes waves = ceil(tiles / blocks) tile
// times (the last wave counts whole). A tile's time, in units of one 64 x 64 x 64 step of MMA:
//   coop:     area / speed(n) x (kblocks + kCoopEpilogueKBlocks)    (the epilogue exposed per tile)
//   pingpong: area / speed(n) x kblocks x kPingpongSlowdown, plus one exposed epilogue per block
//             (the last tile's: no MMA of the other consumer is left to hide it)
// where area = tile_m x tile_n / 4096 and kblocks = ceil(k / 64).
//   kCoopEpilogueKBlocks: v3 lost 11 % of cuBLASLt's throughput at K 2048 (32 k-blocks), 6..7 %
//     at K 4096 and 3..4 % at K 8192: about 4 k-blocks' time per tile, constant.
//   kPingpongSlowdown: a ping-pong tile loads 1.33 (128 x 128) to 1.67 (64 x 256) times the
//     bytes per FLOP of a 128 x 256 coop tile into shared memory, and its MMAs are narrower
//     (m64n128) or half as tall: guessed 8 % slower per k-block.
// Over many waves of both, ping-pong wins while kblocks x (kPingpongSlowdown - 1) is below
// kCoopEpilogueKBlocks, i.e. K up to about 3000 (the 8B mm_rs shapes, K 2048); longer K keeps
// the coop kernel.
inline constexpr double kCoopEpilogueKBlocks = 4.0;
inline constexpr double kPingpongSlowdown = 1.08;

// The model's constants for one GPU model, and whether auto runs the coop kernel in clusters of
// two (tile_gemm.cpp: where the product has two tile rows or more).
//   H100 (experiments/results/h100x1): kPingpongSlowdown as guessed (128 x 128 ping-pong lost to
//     128 x 256 coop wherever K >= 4096 and N 3584, tile_gemm_pp); the coop epilogue 1 k-block
//     since the staged epilogue (store_tile_staged, tile_cluster/staged: coop at 0.98-1.09 of
//     cuBLASLt at every fused shape, K 2048 as K 8192 within 2 %, where 128 x 128 ping-pong ran
//     0.86-0.91 at K 2048); clusters of two (tile_cluster/round: +5..19 % at M 4096, even beyond).
//   H200 (experiments/results/h200x1/tile_sched_c18ea79: each schedule forced at the fused shapes of
//     worlds 1, 2 and 4, two interleaved runs, every row over cuBLASLt's in the same call): the
//     staged coop kernel ran 0.95-1.04 of cuBLASLt's time, ping-pong (128 x 128) a few % ahead of it
//     at K <= 2048 and 2-6 % behind at K >= 4096 with N 3584 (but at 4096 x 3584 x 4096, 1 % ahead).
//     The two constants are those whose
//     choice lost least against the faster of the two measured at the 18 shapes (a grid over
//     slowdown 1.00-1.20 and epilogue 0-8 k-blocks: a plateau at 1.03-1.05 x 1.25-2.75, its middle
//     taken; 0.15 % lost on average, 2.4 % at most, where the constants before, measured with the
//     registers epilogue (h200x1/tile_gemm/v4: 1.0 and 4), lost 2.3 % on average and 19 % at
//     4096 x 1792 x 1024). Clusters of two ran up to 6 % slower than one block at 16 of the 18
//     shapes, graph (2.5 % faster at 4096 x 1792 x 4096, even at 16384 x 3584 x 8192): off.
//     Refit sustained (h200x1/tile_sched_sustained_bbad638: the same 18 shapes, 1000 graph calls
//     each after 200, the GPU at its 700 W limit through the sweep, SM clock ~1455 MHz), the
//     regime of a GEMM that runs for more than a moment: 128 x 128 ping-pong (15 of the shapes; at
//     4096 x 1792 forced ping-pong runs 64 x 224) is 0.1-13 % slower than coop at 14 and 2.6 %
//     faster at 4096 x 3584 x 2048 (its higher power draw holds its clock ~90 MHz lower,
//     h200x1/gemm_configs_bbad638). The constants taken, 1.10 and 0.5, sit inside the broad plateau
//     of least loss there (0.15 % on average, 2.7 % at most: coop at every fused shape; one lone grid
//     point, 1.03 and 0.5, loses 0.12 %, ping-pong at 3 shapes; 1.04 and 2.0,
//     fitted on short runs, lost 0.9 % on average and 5 % at most sustained, ping-pong at 9 shapes).
//     In short runs (tile_sched_c18ea79 above) coop loses up to 3.4 %.
struct TileModel {
  double pingpong_slowdown = kPingpongSlowdown;
  double coop_epilogue_kblocks = kCoopEpilogueKBlocks;
  bool pair_clusters = true;
};
inline constexpr TileModel kTileModelH100{kPingpongSlowdown, 1.0, true};
inline constexpr TileModel kTileModelH200{1.10, 0.5, false};
// The model of the GPU `device_name` (cudaDeviceProp::name) names: H200's for an H200 (not a GH200,
// whose HBM may be an H100's), H100's for every other GPU.
inline TileModel tile_model_for(const std::string& device_name) {
  const bool h200 = device_name.find("H200") != std::string::npos && device_name.find("GH200") == std::string::npos;
  return h200 ? kTileModelH200 : kTileModelH100;
}

// Relative MMA speed of a tile within its schedule (choose_tile_n's for coop: wide tiles reuse A
// more; 224 also loads 32 columns of B it drops). Ping-pong tiles by the same widths; 128 x 128
// counts as 64 x 256 (fewer bytes per FLOP, but m64n128 MMAs). What ping-pong costs against coop
// as a whole is kPingpongSlowdown.
inline double tile_speed(TileSchedule s, int tile_m, int tile_n) {
  if (s == TileSchedule::kPingpong && tile_m == 128) return 1.0;
  return tile_n == 256 ? 1.0 : tile_n == 224 ? 0.98 : tile_n == 192 ? 0.95 : 0.88;
}

inline TileGrid tile_grid(int m, int n, int tile_m, int tile_n, int group) {
  TileGrid g;
  g.tiles_m = (m + tile_m - 1) / tile_m;
  g.tiles_n = (n + tile_n - 1) / tile_n;
  g.group = group;
  return g;
}

// The model's time of one schedule and tile on `blocks` persistent blocks (arbitrary units).
inline double predicted_time(TileSchedule s, int tile_m, int tile_n, int m, int n, int k, int blocks,
                             const TileModel& model = {}) {
  const TileGrid g = tile_grid(m, n, tile_m, tile_n, kDefaultGroup);
  const double waves = double((g.tiles() + blocks - 1) / blocks);
  const double kblocks = double((k + kTileK - 1) / kTileK);
  const double tile = double(tile_m) * tile_n / 4096.0 / tile_speed(s, tile_m, tile_n);
  if (s == TileSchedule::kPingpong)
    return waves * tile * kblocks * model.pingpong_slowdown + tile * model.coop_epilogue_kblocks;
  return waves * tile * (kblocks + model.coop_epilogue_kblocks);
}

// A ring position (stage, phase) moved n uses on: the phase flips once per wrap of the `stages`
// stages, as n single steps would flip it. The ping-pong consumers skip the other's tiles with it
// (tile_pingpong.cuh ring_skip).
SYMM_HD void ring_skip_pos(int& stage, uint32_t& phase, int n, int stages) {
  const int s = stage + n;
  phase ^= uint32_t(s / stages) & 1u;
  stage = s % stages;
}

// What one launch runs: the schedule (never kAuto) and the tile.
struct TilePlan {
  TileSchedule schedule = TileSchedule::kCoop;
  int tile_m = kTileM, tile_n = 256;
};

// Why (schedule, tile_m, tile_n) as asked cannot be run ("" when it can; 0 = to be chosen).
// coop: tile_m 0 or 128, tile_n 0 or one of kTileNs; pingpong: some compiled ping-pong tile has
// that tile_m and tile_n; auto: either.
inline std::string plan_refusal(TileSchedule s, int tile_m, int tile_n) {
  const bool coop = (tile_m == 0 || tile_m == kTileM) && (tile_n == 0 || is_tile_n(tile_n));
  bool pp = false;
  for (TileHW t : kPingpongTiles) pp = pp || ((tile_m == 0 || tile_m == t.m) && (tile_n == 0 || tile_n == t.n));
  const std::string asked = "tile " + (tile_m ? std::to_string(tile_m) : std::string("(any)")) + " x " +
                            (tile_n ? std::to_string(tile_n) : std::string("(any)"));
  if (s == TileSchedule::kCoop && !coop)
    return "tile gemm: the coop schedule has no " + asked + " (tile_m 128; tile_n 256, 224, 192, 128)";
  if (s == TileSchedule::kPingpong && !pp)
    return "tile gemm: the pingpong schedule has no " + asked + " (128 x 128, 64 x 256, 64 x 224, 64 x 192, 64 x 128)";
  if (s == TileSchedule::kAuto && !coop && !pp) return "tile gemm: no schedule has " + asked;
  return "";
}

// The schedule and tile with the least predicted time among those `s`, tile_m and tile_n allow
// (0: any; plan_refusal must be ""). Ties keep the earlier candidate: coop before pingpong,
// then kTileNs' and kPingpongTiles' order. Auto with no tile_m asked takes no 64-row ping-pong
// tile: measured on one H100 (experiments/results/h100x1/tile_gemm_pp), 64 x 224 ran the 8B
// M 4096 shapes at 0.57-0.61 of cuBLASLt where the model had it ahead (`--tile-m 64` still runs
// them); 128 x 128 ping-pong measured 0.92-1.07.
inline TilePlan choose_plan(int m, int n, int k, int blocks, TileSchedule s = TileSchedule::kAuto, int tile_m = 0,
                            int tile_n = 0, const TileModel& model = {}) {
  TilePlan best;
  double best_t = -1;
  auto consider = [&](TileSchedule sc, int tm, int tn) {
    if ((tile_m && tm != tile_m) || (tile_n && tn != tile_n)) return;
    const double t = predicted_time(sc, tm, tn, m, n, k, blocks, model);
    if (best_t < 0 || t < best_t) best = {sc, tm, tn}, best_t = t;
  };
  if (s != TileSchedule::kPingpong)
    for (int tn : kTileNs) consider(TileSchedule::kCoop, kTileM, tn);
  if (s != TileSchedule::kCoop)
    for (TileHW t : kPingpongTiles)
      if (s == TileSchedule::kPingpong || tile_m || t.m == kTileM) consider(TileSchedule::kPingpong, t.m, t.n);
  return best;
}

// Whether `--schedule auto` runs m x n x k on `blocks` blocks ping-pong: where its predicted time
// is lower, i.e. short K (the coop epilogue weighs most) without an extra wave of tiles.
inline bool choose_pingpong(int m, int n, int k, int blocks, const TileModel& model = {}) {
  return choose_plan(m, n, k, blocks, TileSchedule::kAuto, 0, 0, model).schedule == TileSchedule::kPingpong;
}

// Why the tile GEMM cannot take g ("" when it can). The kernel reads A and B through tensor maps
// (16-byte aligned bases, row strides a multiple of 16 bytes) and stores C in 4-byte pairs.
inline std::string refusal(const GemmArgs& g) {
  auto shape = [&] {
    return " (m " + std::to_string(g.m) + " n " + std::to_string(g.n) + " k " + std::to_string(g.k) + " lda " +
           std::to_string(g.lda) + " ldb " + std::to_string(g.ldb) + " ldc " + std::to_string(g.ldc) + ")";
  };
  if (g.dtype != DType::kBF16 && g.dtype != DType::kFP16) return "tile gemm: bf16 and fp16 only";
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return "tile gemm: empty product" + shape();
  if (g.lda < std::size_t(g.k) || g.ldb < std::size_t(g.n) || g.ldc < std::size_t(g.n))
    return "tile gemm: a leading dimension is shorter than its row" + shape();
  if (g.lda % 8 || g.ldb % 8 || g.ldc % 8)
    return "tile gemm: leading dimensions must be multiples of 8 elements (16 bytes, TMA)" + shape();
  for (const void* p : {g.a, g.b, static_cast<const void*>(g.c), g.c_in})
    if (reinterpret_cast<std::uintptr_t>(p) % 16) return "tile gemm: an operand is not 16-byte aligned" + shape();
  if (!g.a || !g.b || !g.c) return "tile gemm: a null operand" + shape();
  return "";
}

}  // namespace symm::cuda::tile
