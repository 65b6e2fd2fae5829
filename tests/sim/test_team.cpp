// Ranks sharing one GPU (Machine::team): placement, and what co-located ranks share. Golden times
// on tests/sim/tiny.ini (launch 1 us in a graph, load round trip 2 us, per-block cap 1 GB/s =
// 1000 bytes/us, NVLink 4 GB/s per GPU and direction, HBM 8 GB/s read + write, one copy engine at
// 1 GB/s after a 1 us start, 1 TFLOP/s of GEMM), made a team machine: team = 1, gpus = 1.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "backends/sim/testing.h"
#include "core/algos/fused_gemm.h"
#include "tests/sim/peer_programs.h"

namespace symm::sim {
namespace {

Machine tiny() { return Machine::load(SYMM_TEST_DIR "/tiny.ini"); }

Machine tiny_team(int gpus = 1) {
  Machine m = tiny();
  m.team = 1;
  m.gpus = gpus;
  return m;
}

RunSpec spec(const Machine& m, int world, std::size_t bytes, int blocks) {
  return timing_spec(m, world, bytes, blocks);
}

TEST(Team, RanksArePlacedAsTheCudaTeamPlacesThem) {
  // backends/cuda team.cpp team_gpu: rank r on GPU r % gpus; an NVLink machine: a GPU per rank.
  const Machine one = tiny_team(1), two = tiny_team(2), node = tiny();
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(one.gpu_of(r), 0);
    EXPECT_EQ(two.gpu_of(r), r % 2);
    EXPECT_EQ(node.gpu_of(r), r);  // world past gpus (timing-only) still scales the node
  }
}

TEST(Team, APeerLoadOnOneGpuIsAnHbmCopy) {
  // NVLink: 8 blocks share rank 1's 4 GB/s egress, 4000 B at 0.5 GB/s each: 1 + 8 + 2.
  EXPECT_DOUBLE_EQ(run_program<LoadFromPeer>(spec(tiny(), 2, 4000, 8)).time_us, 1 + 8 + 2);
  // One GPU: the load is a read and a write of its HBM (8 GB/s for both together): 8 blocks at
  // their 1 GB/s cap exactly fill it, 4 us; the round trip is still paid (the team's latency).
  EXPECT_DOUBLE_EQ(run_program<LoadFromPeer>(spec(tiny_team(), 2, 4000, 8)).time_us, 1 + 4 + 2);
  // Its time follows hbm_GBps (2 GB/s: 0.25 GB/s per block, 16 us), not NVLink's rates.
  Machine m = tiny_team();
  m.hbm_GBps = 2;
  EXPECT_DOUBLE_EQ(run_program<LoadFromPeer>(spec(m, 2, 4000, 8)).time_us, 1 + 16 + 2);
  m.nvlink_egress_GBps = m.nvlink_ingress_GBps = 0.1;
  EXPECT_DOUBLE_EQ(run_program<LoadFromPeer>(spec(m, 2, 4000, 8)).time_us, 1 + 16 + 2);
  // Two GPUs, ranks 0 and 1 on different ones: NVLink again.
  EXPECT_DOUBLE_EQ(run_program<LoadFromPeer>(spec(tiny_team(2), 2, 4000, 8)).time_us, 1 + 8 + 2);
}

TEST(Team, RanksOnOneGpuShareItsHbm) {
  // Every rank loads 4000 B from the next with 8 blocks: on one GPU the 2 ranks' 16 blocks share
  // its 8 GB/s HBM, 0.5 GB/s each: 8 us. A 4-rank team halves the share again: 16 us; 4 ranks on
  // 4 GPUs load over NVLink, 8 blocks on each 4 GB/s egress: 8 us.
  EXPECT_DOUBLE_EQ(run_program<Ring>(spec(tiny_team(), 2, 4000, 8)).time_us, 1 + 8 + 2);
  EXPECT_DOUBLE_EQ(run_program<Ring>(spec(tiny_team(), 4, 4000, 8)).time_us, 1 + 16 + 2);
  EXPECT_DOUBLE_EQ(run_program<Ring>(spec(tiny_team(4), 4, 4000, 8)).time_us, 1 + 8 + 2);
}

// Every rank multiplies its own rows x n x k shard on its main stream, C local (one GEMM a rank).
struct OwnGemm {
  template <class T, class Host>
  static void run(Host& h, const FusedArgs& f) {
    const std::size_t rows = f.m / std::size_t(h.world()), kl = f.k / std::size_t(h.world());
    main_gemm<T>(h, f.a, f.b, static_cast<char*>(f.work) + std::size_t(h.rank()) * rows * f.n * sizeof(T), rows, f.n,
                 kl);
  }
};

FusedRunSpec gemm_spec(const Machine& m) {
  FusedRunSpec s;
  s.machine = m;
  s.machine.hbm_GBps = 1e6;  // the GEMM's compute alone
  s.world = 2;
  for (const FusedAlgo& a : fused_algorithms())
    if (std::string(a.id) == "mm_rs.gemm_st_chunk_reduce") s.algo = &a;
  s.shape.m = 128, s.shape.n = 32, s.shape.k = 2048;  // each rank 64 x 32 x 1024: 4.194 us at 1 TFLOP/s
  s.timing_only = true;
  return s;
}

TEST(Team, TwoCoLocatedGemmsTakeTwiceOneGemm) {
  const double compute = 2.0 * 64 * 32 * 1024 / 1e6;
  const double apart = run_fused_plan<OwnGemm>(gemm_spec(tiny())).time_us;
  const double together = run_fused_plan<OwnGemm>(gemm_spec(tiny_team())).time_us;
  EXPECT_NEAR(apart, 1 + compute, 1e-6);                                               // each on its own GPU
  EXPECT_NEAR(together, 1 + 2 * compute, 1e-6);                                        // one GPU's tensor rate, shared
  EXPECT_NEAR(run_fused_plan<OwnGemm>(gemm_spec(tiny_team(2))).time_us, apart, 1e-6);  // a GPU each
}

// Each block copies `count` elements of a into work, locally (a kernel that holds its SMs a while).
struct HoldSms {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    const std::size_t bytes = a.count * sizeof(T);
    ctx.copy(static_cast<char*>(a.out) + std::size_t(ctx.block()) * bytes, a.in, bytes);
  }
};

// Rank 0 multiplies its shard (as OwnGemm); rank 1 runs a 4-block kernel of about 2 us meanwhile.
struct GemmBesideAKernel {
  template <class T, class Host>
  static void run(Host& h, const FusedArgs& f) {
    if (h.rank() == 0) return OwnGemm::run<T>(h, f);
    CollArgs k;
    k.in = f.a;
    k.out = f.work;
    k.count = 2048 / sizeof(T);  // 2048 B a block at the 1 GB/s block cap: about 2 us
    h.template launch<HoldSms, T>(kMainStream, k, 4);
  }
};

TEST(Team, AGemmGetsTheSmsNoKernelOfItsGpuHolds) {
  // tiny has 8 SMs. On its own GPU rank 0's GEMM runs at the full rate (1 + 4.194 us); on a GPU
  // shared with rank 1, whose kernel holds 4 of the 8 SMs for about 2 us, the GEMM's slices
  // started meanwhile run at half the rate: it ends later.
  const double apart = run_fused_plan<GemmBesideAKernel>(gemm_spec(tiny())).time_us;
  const double shared = run_fused_plan<GemmBesideAKernel>(gemm_spec(tiny_team())).time_us;
  EXPECT_NEAR(apart, 1 + 2.0 * 64 * 32 * 1024 / 1e6, 1e-6);
  EXPECT_GT(shared, apart + 1);
}

// Rank 0 multiplies 64 x 32 x 1024 (4.194 us on tiny); rank 1 multiplies 8 x 32 x 128 (a few ns),
// then, with kCopy, copies 1024 B of its work into rank 0's by copy engine (kCopyOnly: the copy alone).
template <bool kCopy, bool kCopyOnly = false>
struct CopyAfterAGemm {
  template <class T, class Host>
  static void run(Host& h, const FusedArgs& f) {
    char* work = static_cast<char*>(f.work);
    if (h.rank() == 0) {
      if (!kCopyOnly) main_gemm<T>(h, f.a, f.b, work, 64, 32, 1024);
      return;
    }
    if (!kCopyOnly) main_gemm<T>(h, f.a, f.b, work + 8192, 8, 32, 128);
    if (kCopy || kCopyOnly) h.copy_engine(kMainStream, h.peer(work, 0) + 4096, work + 8192, 1024);
  }
};

TEST(Team, ACopyWithinTheGpuWaitsForItsRunningGemms) {
  // On one GPU a copy between two ranks is a device-to-device memcpy, a kernel of the driver's:
  // rank 1's copy comes up while rank 0's GEMM runs and starts when it ends (gemm.cpp), so the call
  // takes the GEMMs' time and then the whole copy. On a GPU each the copy crosses NVLink beside it.
  // Each time less its launch: a rank's call with a copy starts launch_eager_us late in either
  // mode, one without launch_graph_us (streams.cpp run_plan_call); with both, the chain starts at
  // rank 0's launch (its GEMM, no copy), and rank 1's copy waits for that GEMM.
  FusedRunSpec s = gemm_spec(tiny_team());
  s.shape.m = 256, s.shape.n = 32, s.shape.k = 2048;
  const double graph_launch = s.machine.launch_graph_us, copy_launch = s.machine.launch_eager_us;
  ASSERT_NE(graph_launch, copy_launch);
  const double gemms = run_fused_plan<CopyAfterAGemm<false>>(s).time_us - graph_launch;
  const double copy = run_fused_plan<CopyAfterAGemm<false, true>>(s).time_us - copy_launch;
  const double both = run_fused_plan<CopyAfterAGemm<true>>(s).time_us - graph_launch;
  EXPECT_GT(copy, 2);  // the engine's 1 us start and 1.024 us at 1 GB/s
  EXPECT_NEAR(both, gemms + copy, 0.05);
  s.machine.gpus = 2;  // a GPU each: the copy runs beside rank 0's GEMM
  EXPECT_LT(run_fused_plan<CopyAfterAGemm<true>>(s).time_us, run_fused_plan<CopyAfterAGemm<false>>(s).time_us + 0.5);
}

TEST(Team, RanksOnOneGpuShareItsCopyEngines) {
  // all_gather.ce at 2048 B on 2 ranks: each rank's copy engine pushes its 1024 B to the peer
  // (1 us start + 1.024 us at 1 GB/s, HBM made fast here, landing 1 us later: the engine is the
  // copy's until it lands). On one GPU with one engine the two ranks' copies queue for it: the call
  // takes one copy longer.
  RunSpec s = spec(tiny(), 2, 2048, 1);
  s.algo = &find_algo(Op::kAllGather, "ce");
  s.blocks = 0;
  s.machine.hbm_GBps = 1e6;
  const double apart = run(s).time_us;
  s.machine.team = 1, s.machine.gpus = 1;
  const double shared = run(s).time_us;
  EXPECT_NEAR(shared - apart, 1 + 1.024 + 1, 1e-6);
  s.machine.copy_engines = 2;  // an engine each again
  EXPECT_NEAR(run(s).time_us, apart, 1e-6);
}

TEST(Team, EagerCallsOfATeamPayEachFurtherRanksLaunch) {
  // One rank per GPU, eager: the graph time (1 + 4 + 2 = 7) or the eager launch interval (2),
  // whichever is longer. k ranks sharing a GPU: the graph time + (k - 1) x team_launch_us (one
  // rank's launch pipelines under the call before, as where a rank has its GPU).
  RunSpec s = spec(tiny(), 2, 4000, 1);
  s.graph = false;
  s.machine.team_launch_us = 0.5;
  EXPECT_DOUBLE_EQ(run_program<LoadFromPeer>(s).time_us, 7);
  s.machine = tiny_team();
  s.machine.team_launch_us = 0.5;
  s.machine.hbm_GBps = 1e6;  // the load at its block cap, as over NVLink: 7 in a graph
  EXPECT_DOUBLE_EQ(run_program<LoadFromPeer>(s).time_us, 7 + 1 * 0.5);
  s.world = 4;
  EXPECT_DOUBLE_EQ(run_program<LoadFromPeer>(s).time_us, 7 + 3 * 0.5);
  s.machine.gpus = 2;  // 2 ranks on each GPU
  EXPECT_DOUBLE_EQ(run_program<LoadFromPeer>(s).time_us, 7 + 1 * 0.5);
}

TEST(Team, DataRunsOfMoreRanksThanGpusRunOnATeamMachine) {
  // With data, a team of 4 on one GPU computes the right answer; an NVLink machine refuses a world
  // past its GPUs unless timing-only.
  RunSpec s = spec(tiny_team(), 4, 4096, 2);
  s.timing_only = false;
  const RunResult r = run(s);
  EXPECT_LE(r.max_rel_err, r.err_bound);
  s.machine = tiny();
  s.machine.gpus = 2;
  try {
    run(s);
    ADD_FAILURE() << "world 4 on 2 GPUs ran with data";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("--timing-only"), std::string::npos) << e.what();
  }
}

TEST(Team, BadPlacementIsRefused) {
  // The key: 0 or 1, named in the message (tiny.ini's text with team = 2).
  std::ifstream f(SYMM_TEST_DIR "/tiny.ini");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_NE(text.find("team = 0"), std::string::npos);
  text.replace(text.find("team = 0"), 8, "team = 2");
  try {
    Machine::parse(text, "bad_team.ini");
    ADD_FAILURE() << "team = 2 loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    const std::string m = e.what();
    EXPECT_NE(m.find("bad_team.ini"), std::string::npos) << m;
    EXPECT_NE(m.find("'team'"), std::string::npos) << m;
    EXPECT_NE(m.find("(got 2)"), std::string::npos) << m;
  }
  // Multicast needs an NVSwitch, which ranks on one GPU do not have.
  RunSpec s = spec(tiny_team(), 2, 4096, 1);
  s.algo = &find_algo("all_reduce.multimem");
  try {
    run(s);
    ADD_FAILURE() << "multimem ran on a team machine";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("team = 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace symm::sim
