// The matrix-tile programs on the simulator: the verb mma_tile's golden time on tests/sim/tiny.ini,
// and the planted faults of the tile programs (a tile that skips its acquire) that the simulator
// must catch. Their data checks at worlds 2, 3, 4, 8 x bf16 / fp16 are test_fused.cpp's
// EveryAlgorithmEveryWorld... and test_fused_baselines.cpp's EveryBaselineEveryWorld... (both walk
// the registry, which lists them).
#include <gtest/gtest.h>

#include "backends/sim/sim.h"
#include "backends/sim/testing.h"
#include "core/algos/ag_mm_ce_tile_gemm.h"
#include "core/algos/mm_rs_gemm_ce_tile_acc.h"
#include "core/algos/mm_rs_tile_acc.h"
#include "core/algos/mm_rs_tile_reduce.h"

namespace symm::sim {
namespace {

const FusedAlgo& find(FusedOp op, const std::string& id) {
  for (const FusedAlgo& a : fused_algorithms())
    if (a.op == op && a.id == id) return a;
  if (const FusedAlgo* b = find_fused_baseline(op, id)) return *b;
  throw std::runtime_error("no fused algorithm " + id);
}

FusedRunSpec spec_for(const FusedAlgo& a, const Machine& m, int world, std::size_t rows, std::size_t n, std::size_t k) {
  FusedRunSpec s;
  s.machine = m;
  s.world = world;
  s.algo = &a;
  s.shape.m = rows, s.shape.n = n, s.shape.k = k;
  return s;
}

// tiny: mma_TFLOPs 1 over 8 SMs = 0.125 flop/ps per block. mm_rs's matmul alone as the tile
// program, world 2, N 128: each rank's partial M x 128 x K/2 in 128 x 128 tiles, one per block.
// A tile 128 x 128 x 64 is 2 x 128 x 128 x 64 = 2,097,152 flops: 16.777 us; its C store (32 KiB,
// half on HBM at 8 GB/s, spread over the tile's time: ~1 GB/s) binds nothing. So K 128 -> 256
// adds exactly one such tile time (the fixed costs of a call, launch included, cancel out), and
// M 256 -> 512 (2 -> 4 tiles on 2 -> 4 of the 8 blocks, side by side) adds nothing.
TEST(Tiles, GoldenTileTimeOnTheTinyMachine) {
  const Machine tiny = Machine::load(SYMM_TEST_DIR "/tiny.ini");
  FusedRunSpec s = spec_for(find(FusedOp::kMmRs, "tile_gemm"), tiny, 2, 256, 128, 128);
  const RunResult r = run_fused(s);
  EXPECT_LE(r.max_rel_err, r.err_bound);
  EXPECT_GE(r.time_us, 16.777 + tiny.launch_graph_us);
  s.shape.k = 256;
  EXPECT_NEAR(run_fused(s).time_us - r.time_us, 16.777, 0.01);
  s.shape.k = 128;
  s.shape.m = 512;
  EXPECT_NEAR(run_fused(s).time_us, r.time_us, 0.01);
  // 16 tiles on the 8 blocks: two tile times one after the other on every block.
  s.shape.m = 2048;
  EXPECT_NEAR(run_fused(s).time_us - r.time_us, 16.777, 0.01);
}

// mma_tile_us: every tile's fixed cost (epilogue, pipeline drain) on its block. One tile per
// block adds it once; two tiles per block (M 2048 on the 8 blocks) twice, and not K-dependent.
TEST(Tiles, TheTileFixedCostIsPaidOncePerTile) {
  Machine tiny = Machine::load(SYMM_TEST_DIR "/tiny.ini");
  FusedRunSpec s = spec_for(find(FusedOp::kMmRs, "tile_gemm"), tiny, 2, 256, 128, 128);
  const double one = run_fused(s).time_us;
  s.shape.m = 2048;
  const double two = run_fused(s).time_us;
  tiny.mma_tile_us = 3.25;
  s.machine = tiny;
  EXPECT_NEAR(run_fused(s).time_us - two, 2 * 3.25, 0.01);
  s.shape.m = 256;
  EXPECT_NEAR(run_fused(s).time_us - one, 3.25, 0.01);
  s.shape.k = 256;
  EXPECT_NEAR(run_fused(s).time_us - one, 3.25 + 16.777, 0.01);
}

// A fault is caught when the run throws a race (the read not ordered after the copy / store: a
// release/acquire chain is missing) or its data check fails.
template <class Plan>
bool caught(const FusedRunSpec& s) {
  try {
    const RunResult r = run_fused_plan<Plan>(s);
    return !(r.max_rel_err <= r.err_bound);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kRace) << e.what();
    EXPECT_NE(std::string(e.what()).find("release/acquire chain"), std::string::npos) << e.what();  // not a flag
    return true;
  }
}

const Machine& h200x8() {
  static const Machine m = Machine::by_name("h200x8");
  return m;
}

// ag_mm seed 002: a peer chunk's tiles computed without acquiring the chunk's flag.
TEST(Tiles, AgMmTileThatSkipsItsAcquireIsCaught) {
  for (int w : {2, 4, 8}) {
    FusedRunSpec s = spec_for(find(FusedOp::kAgMm, "ag_mm.ce_tile_gemm"), h200x8(), w, 384, 128, 192);
    s.chunk_rows = 16;
    EXPECT_LE(run_fused_plan<AgMmCeTileGemmT<>>(s).max_rel_err, run_fused(s).err_bound);
    EXPECT_TRUE(caught<AgMmCeTileGemmT<PlanFault::kNoWait>>(s)) << "world " << w;
    s.race_check = false;  // without the race check, the data check alone sees the unlanded rows
    EXPECT_TRUE(caught<AgMmCeTileGemmT<PlanFault::kNoWait>>(s)) << "world " << w << " (data check alone)";
  }
}

// mm_rs seed 000 (pull) and its push variant: the owner reduces without acquiring the tiles' flags.
// Each in bands of one tile row (the default here: 3 bands of 128 rows per owner, each reduced
// while the next computes, and with --chunk-rows 128), in one band (chunk rows = M: the whole
// reduce after the last tile), and in bands of two tile rows (a short last band), bf16 and fp16,
// at worlds 2, 3, 4 and 8: correct with the waits, caught without them.
TEST(Tiles, MmRsReduceThatSkipsItsAcquiresIsCaught) {
  for (int w : {2, 3, 4, 8})
    for (std::size_t chunk_rows : {std::size_t(0), std::size_t(384) * std::size_t(w), std::size_t(256)})
      for (DType t : {DType::kBF16, DType::kFP16}) {
        const std::string at =
            "world " + std::to_string(w) + ", chunk rows " + std::to_string(chunk_rows) + ", " + dtype_name(t);
        FusedRunSpec pull =
            spec_for(find(FusedOp::kMmRs, "mm_rs.tile_st_ld_reduce"), h200x8(), w, 384 * std::size_t(w), 128, 192);
        pull.chunk_rows = chunk_rows, pull.dtype = t;
        EXPECT_LE(run_fused_plan<MmRsTileReduceT<false>>(pull).max_rel_err, run_fused(pull).err_bound) << at;
        EXPECT_TRUE((caught<MmRsTileReduceT<false, PlanFault::kNoWait>>(pull))) << "pull, " << at;
        FusedRunSpec push = pull;
        push.algo = &find(FusedOp::kMmRs, "mm_rs.tile_st_peer_reduce");
        EXPECT_LE(run_fused_plan<MmRsTileReduceT<true>>(push).max_rel_err, run_fused(push).err_bound) << at;
        EXPECT_TRUE((caught<MmRsTileReduceT<true, PlanFault::kNoWait>>(push))) << "push, " << at;
      }
}

// mm_rs with the reduce in the owner's epilogue (tiles_acc): the owner's tiles add the peers' slots
// without acquiring the peers' tiles of them. At worlds 2, 3, 4 and 8, bf16 and fp16, on 3 tile rows
// per owner and on 4096 rows x 2304 (more tiles than blocks: a block's later tiles wait on peers'
// blocks of other indices): correct with the waits, caught without them.
TEST(Tiles, MmRsAccEpilogueThatSkipsItsAcquiresIsCaught) {
  for (int w : {2, 3, 4, 8})
    for (DType t : {DType::kBF16, DType::kFP16}) {
      const std::string at = "world " + std::to_string(w) + ", " + dtype_name(t);
      FusedRunSpec s =
          spec_for(find(FusedOp::kMmRs, "mm_rs.tile_st_peer_acc"), h200x8(), w, 384 * std::size_t(w), 128, 192);
      s.dtype = t;
      EXPECT_LE(run_fused_plan<MmRsTileStPeerAcc>(s).max_rel_err, run_fused(s).err_bound) << at;
      EXPECT_TRUE((caught<MmRsTileStPeerAccT<PlanFault::kNoWait>>(s))) << at;
    }
  FusedRunSpec s = spec_for(find(FusedOp::kMmRs, "mm_rs.tile_st_peer_acc"), h200x8(), 2, 4096, 2304, 128);
  EXPECT_LE(run_fused_plan<MmRsTileStPeerAcc>(s).max_rel_err, run_fused(s).err_bound);
  EXPECT_TRUE((caught<MmRsTileStPeerAccT<PlanFault::kNoWait>>(s)));
}

// A tile stored to a peer holds its block for its bytes at mma_peer_store_GBps (backends/sim/tiles.cpp):
// the programs that store tiles to their owners (tiles_push, tiles_acc) get faster with the cost
// zeroed, the pull program (every tile stored locally) does not move, and none is faster than the tile
// matmul alone. 70B M 16384 at worlds 2 and 4 (h200x4's machine file).
TEST(Tiles, TilesStoredToPeersPayThePeerStoreRate) {
  for (int w : {2, 4}) {
    Machine m = Machine::by_name("h200x4");
    ASSERT_GT(m.mma_peer_store_GBps, 0);
    FusedRunSpec s = spec_for(find(FusedOp::kMmRs, "tile_gemm"), m, w, 16384, 3584, 8192);
    s.timing_only = true;
    const double alone = run_fused(s).time_us;
    for (const char* id : {"mm_rs.tile_st_ld_reduce", "mm_rs.tile_st_peer_reduce", "mm_rs.tile_st_peer_acc"}) {
      const std::string at = std::string(id) + ", world " + std::to_string(w);
      s.machine = m;
      s.algo = &find(FusedOp::kMmRs, id);
      const double with = run_fused(s).time_us;
      s.machine.mma_peer_store_GBps = 0;
      const double without = run_fused(s).time_us;
      EXPECT_GT(with, alone) << at;
      if (std::string(id) == "mm_rs.tile_st_ld_reduce")
        EXPECT_DOUBLE_EQ(with, without) << at;
      else
        EXPECT_GT(with, without) << at;
    }
  }
}

// The default at world 2 on a product of at least 2 x 132 tiles per owner: bands and no reduce
// blocks (MmRsTileLayout::reduce_blocks; the CUDA kernel reduces the early bands in its spare
// warps, this program between its bands), and reduce blocks beside the compute blocks
// (--blocks 40): correct with the waits, caught without them. (Their time is the GPU's to say:
// experiments/results/h200x2/tile_bands, h100x2/tile_bands_8_side.)
TEST(Tiles, MmRsReduceBlocksAreCheckedAndTheirFaultCaught) {
  for (int blocks : {0, 40})
    for (bool push : {false, true}) {
      FusedRunSpec s = spec_for(find(FusedOp::kMmRs, push ? "mm_rs.tile_st_peer_reduce" : "mm_rs.tile_st_ld_reduce"),
                                h200x8(), 2, 4096, 2304, 128);
      s.blocks = blocks;
      const std::string at = std::string(push ? "push" : "pull") + ", blocks " + std::to_string(blocks);
      if (push) {
        EXPECT_LE(run_fused_plan<MmRsTileReduceT<true>>(s).max_rel_err, run_fused(s).err_bound) << at;
        EXPECT_TRUE((caught<MmRsTileReduceT<true, PlanFault::kNoWait>>(s))) << at;
      } else {
        EXPECT_LE(run_fused_plan<MmRsTileReduceT<false>>(s).max_rel_err, run_fused(s).err_bound) << at;
        EXPECT_TRUE((caught<MmRsTileReduceT<false, PlanFault::kNoWait>>(s))) << at;
      }
    }
}

// The side lane (core/verbs.h lane(); MmRsTiles::kSideLane): with bands, the fused runs take each
// block's side tasks in a lane of its own beside its tiles (lanes 2, as the CUDA kernel's spare
// warps), a run without lanes between the block's bands. Both correct, the skipped waits caught in
// both; and the lane hides the side tasks behind the compute: at 70B M 16384 on h100x4 faster
// than without it, never faster than the tile matmul alone.
TEST(Tiles, MmRsSideLaneRunsBesideTheTilesAndIsChecked) {
  for (int lanes : {1, 2})
    for (int w : {2, 4}) {
      FusedRunSpec s =
          spec_for(find(FusedOp::kMmRs, "mm_rs.tile_st_ld_reduce"), h200x8(), w, 384 * std::size_t(w), 128, 192);
      s.chunk_rows = 128, s.lanes = lanes;
      const std::string at = "lanes " + std::to_string(lanes) + ", world " + std::to_string(w);
      EXPECT_LE(run_fused_plan<MmRsTileReduceT<false>>(s).max_rel_err, run_fused(s).err_bound) << at;
      EXPECT_TRUE((caught<MmRsTileReduceT<false, PlanFault::kNoWait>>(s))) << at;
    }
  FusedRunSpec s = spec_for(find(FusedOp::kMmRs, "tile_gemm"), Machine::by_name("h100x4"), 4, 16384, 3584, 8192);
  s.timing_only = true;
  const double alone = run_fused(s).time_us;
  for (const char* id : {"mm_rs.tile_st_ld_reduce", "mm_rs.tile_st_peer_reduce"}) {
    s.algo = &find(FusedOp::kMmRs, id);
    s.lanes = 1;
    const double between = run_fused(s).time_us;
    s.lanes = 2;
    const double beside = run_fused(s).time_us;
    EXPECT_LT(beside, between) << id;
    EXPECT_GE(beside, alone) << id;
  }
}

// A side lane that waits forever: the simulator's deadlock report names it ("block b's side
// lane"), and a run without lanes never starts one.
struct LaneWaitsForever {
  static constexpr bool kSideLane = true;
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs&) {
    if (ctx.lane() == 1) ctx.wait(pad::flag(1, ctx.block(), ctx.rank()), 1, MemOrder::kAcquire);
  }
};
struct LaneWaitsForeverPlan {
  template <class T, class Host>
  static void run(Host& h, const FusedArgs&) {
    h.template launch<LaneWaitsForever, T>(kMainStream, CollArgs{}, 2);
  }
};
TEST(Tiles, ADeadlockedSideLaneIsNamed) {
  FusedRunSpec s = spec_for(find(FusedOp::kMmRs, "mm_rs.tile_st_ld_reduce"), h200x8(), 2, 256, 128, 128);
  s.timing_only = true;
  try {
    run_fused_plan<LaneWaitsForeverPlan>(s);
    ADD_FAILURE() << "the lane's wait never ends: a deadlock";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kDeadlock);
    EXPECT_NE(std::string(e.what()).find("'s side lane waits on slot"), std::string::npos) << e.what();
  }
  s.lanes = 1;
  EXPECT_NO_THROW(run_fused_plan<LaneWaitsForeverPlan>(s));
}

// mm_rs with copy engines and the epilogue's sum: a tile that adds the peers' slots without
// acquiring its chunk's flags (chunks of 128 rows: several per rank, so some tiles run before their
// chunk's copies have landed).
TEST(Tiles, MmRsAccTileThatSkipsItsAcquireIsCaught) {
  for (int w : {2, 3, 4, 8}) {
    FusedRunSpec s = spec_for(find(FusedOp::kMmRs, "mm_rs.gemm_ce_tile_acc"), h200x8(), w, 512 * std::size_t(w), 128,
                              64 * std::size_t(w));
    s.chunk_rows = 128;
    EXPECT_LE(run_fused_plan<MmRsGemmCeTileAccT<>>(s).max_rel_err, run_fused(s).err_bound) << "world " << w;
    EXPECT_TRUE(caught<MmRsGemmCeTileAccT<PlanFault::kNoWait>>(s)) << "world " << w;
    s.race_check = false;  // the data check alone
    EXPECT_TRUE(caught<MmRsGemmCeTileAccT<PlanFault::kNoWait>>(s)) << "world " << w << " (data check alone)";
  }
}

// The seed's point: one persistent kernel whose tiles wait on the chunks beats waiting for the
// whole all-gather (our SM all-gather, then the matmul) at 70B, M 16384 on 4x H200, and costs at
// least the tile matmul alone (the same tiles, no communication).
TEST(Tiles, TileVariantsSitBetweenTheMatmulAloneAndTheSequentialBaseline) {
  // With no acquire cost, as h200x4.ini had before it took the fabric's keys from h200x2's
  // calibration (experiments/Makefile FABRIC_KEYS, issue 21). With its calibrated acquire_us
  // (0.62 us per acquire) the simulator predicts mm_rs.tile_st_ld_reduce at 708 us here, above
  // seq_coll_gemm's 600: a prediction for a 4-GPU run to check, not a property of the structure.
  // And with one launch latency for both: a call with copies (the tile programs' copy-engine
  // variants) launches at launch_eager_us in either mode (streams.cpp), one of kernels, GEMMs and
  // stream flags at launch_graph_us; 3.3 us apart, a difference of launch path, not of structure.
  // And with the tile GEMM as fast as cuBLASLt (the shipped file's mma keys, fitted from our tile
  // GEMM alone, make every tile program pay our kernel's per-tile cost: a property of the kernel,
  // not of the protocol these variants add around it).
  Machine m = Machine::by_name("h200x4");
  m.acquire_us = 0;
  m.launch_eager_us = m.launch_graph_us;
  m.mma_TFLOPs = m.gemm_TFLOPs;
  m.mma_tile_us = 0;
  for (FusedOp op : {FusedOp::kAgMm, FusedOp::kMmRs}) {
    FusedRunSpec s = spec_for(find(op, "tile_gemm"), m, 4, 16384, 3584, 8192);
    s.timing_only = true;
    const double alone = run_fused(s).time_us;
    s.algo = &find(op, "seq_coll_gemm");
    const double seq = run_fused(s).time_us;
    for (const FusedAlgo* a : parse_fused_algos(op, op == FusedOp::kAgMm ? "tiles" : "tiles,tiles_push")) {
      s.algo = a;
      const double t = run_fused(s).time_us;
      EXPECT_GE(t, alone) << a->id;
      EXPECT_LT(t, seq) << a->id;
    }
  }
}

}  // namespace
}  // namespace symm::sim
