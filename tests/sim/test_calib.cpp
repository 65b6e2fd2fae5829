// The calibration fit: parameters in, microbenchmark rows out (the simulator running the
// programs of core/calib_programs.h), the fit, parameters back within 1%. The fit is
// deterministic, a changed row changes the file, and the machine reader accepts what it writes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "apps/harness/sim/calib.h"
#include "backends/sim/testing.h"
#include "core/calib_programs.h"
#include "core/fused.h"

namespace symm::sim {
namespace {

Machine machine(const char* name) {
  return Machine::by_name(std::string(SYMM_MACHINES_DIR_TEST) + "/" + name + ".ini");
}

// Distinct values for every key (store != flag, HBM under the all-SM block cap, ingress under
// egress), so a fit that swaps or merges two parameters cannot pass.
Machine odd_machine() {
  Machine m = machine("h200x4");
  m.name = "odd";
  m.nvlink_egress_GBps = 300;
  m.nvlink_ingress_GBps = 250;
  m.store_latency_us = 0.8;
  m.acquire_us = 0.35;
  m.release_fence_share = 0.6;
  m.fence_gap_us = 0.013;
  m.fence_crowd_us = 0.05;  // a round after the first, per other block, at most 6 of them
  m.fence_crowd_blocks = 6;
  m.local_store_fence_us = 0.17;  // a release after local stores, apart from the ping-pongs' costs
  m.signal_next_us = 0.3;         // a later signal and a later wait apart, both charged
  m.wait_next_us = 0.2;
  m.ll_read_GBps = 23;
  m.flag_latency_us = 1.7;
  m.load_rtt_us = 3.1;
  m.block_GBps = 41;
  m.block_reduce_GBps = 53;  // a reduce's loads apart from a copy's
  m.hbm_GBps = 2500;
  m.launch_eager_us = 5.5;
  m.launch_graph_us = 1.2;
  m.launch_eager_gap_us = 1.3;
  m.eager_release_us = 0.9;
  m.pdl_saving_us = 0.31;
  m.peer_kernel_us = 0.9;
  m.stream_op_us = 2.2;
  m.stream_batch_op_us = 0.7;
  m.sms = 100;
  m.copy_engines = 3;
  m.ce_startup_us = 6.5;
  m.ce_GBps = 210;
  m.gemm_TFLOPs = 700;
  m.gemm_fixed_us = 2.5;
  m.gemm_GBps = 4000;
  m.gemm_tile_m = 128;
  m.gemm_tile_n = 256;
  m.mma_TFLOPs = 610;  // the tile GEMM apart from cuBLASLt's rate, with a fixed cost per tile
  m.mma_tile_us = 1.9;
  m.local_load_us = 0.27;  // apart from the base's ll_poll_us (the fit copies it there)
  return m;
}

// The same on one GPU whose ranks share it (team = 1: base.team machines, h200x1).
Machine odd_team() {
  Machine m = odd_machine();
  m.team = 1;
  m.gpus = 1;
  return m;
}

// Copy-engine rows: the simulator models them in host plans (copy_engines.cpp), not as device
// programs, so these rows come from the machine file's formula t = S + bytes / rate. (GEMM rows
// come from simulate_calibration, through the machine's GEMM model.)
void add_formula_rows(const Machine& m, int world, std::vector<CalibRow>& rows) {
  for (double b : {1 << 20, 8 << 20, 64 << 20})
    rows.push_back({"ce_copy", world, 0, true, b, m.ce_startup_us + b / (m.ce_GBps * 1e3)});
  rows.push_back({"plan_flag", world, 0, true, 0, 2 * m.stream_op_us});
  for (double n : {1, 2, 4, 8})
    rows.push_back({"plan_flag_batch", world, 0, true, n, 2 * m.stream_op_us + (n - 1) * 2 * m.stream_batch_op_us});
}

CalibTable table_for(const Machine& m, int world) {
  CalibTable t;
  t.comments.push_back(" test rows");
  t.rows = simulate_calibration(m, world);
  add_formula_rows(m, world, t.rows);
  return t;
}

std::string fmt_like(double v) {  // as the fit writes a value
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void expect_near_rel(double got, double want, const char* key) {
  // A cost set to 0 must come back as 0 to the simulator's resolution (1 ps).
  EXPECT_LE(std::fabs(got - want), want == 0 ? 1e-6 : 0.01 * std::fabs(want))
      << key << ": fitted " << got << ", set " << want;
}

void expect_recovers(const Machine& in, int world) {
  Machine base = machine("h200x8");  // a different machine: nothing may be copied from it
  const FitResult f = fit_machine(table_for(in, world), base, "fitted", "test.csv");
  const Machine& out = f.machine;
  EXPECT_EQ(out.gpus, in.gpus);
  EXPECT_EQ(out.sms, in.sms);
  EXPECT_EQ(out.copy_engines, in.copy_engines);
  expect_near_rel(out.nvlink_egress_GBps, in.nvlink_egress_GBps, "nvlink_egress_GBps");
  expect_near_rel(out.nvlink_ingress_GBps, in.nvlink_ingress_GBps, "nvlink_ingress_GBps");
  expect_near_rel(out.store_latency_us, in.store_latency_us, "store_latency_us");
  expect_near_rel(out.acquire_us, in.acquire_us, "acquire_us");
  EXPECT_NEAR(out.release_fence_share, in.release_fence_share, 0.01) << "release_fence_share";
  // fence_gap_us and fence_crowd_us are fitted together from the same barrier rows (fit.cpp): the
  // other keys' small errors move the pair along their trade-off (about 0.0005 and 0.004 us at 4 ranks).
  EXPECT_NEAR(out.fence_gap_us, in.fence_gap_us, 7e-4) << "fence_gap_us";
  EXPECT_NEAR(out.fence_crowd_us, in.fence_crowd_us, 5e-3) << "fence_crowd_us";
  EXPECT_EQ(out.fence_crowd_blocks, in.fence_crowd_blocks) << "fence_crowd_blocks";
  expect_near_rel(out.local_store_fence_us, in.local_store_fence_us, "local_store_fence_us");
  expect_near_rel(out.flag_latency_us, in.flag_latency_us, "flag_latency_us");
  expect_near_rel(out.ll_read_GBps, in.ll_read_GBps, "ll_read_GBps");
  expect_near_rel(out.load_rtt_us, in.load_rtt_us, "load_rtt_us");
  expect_near_rel(out.block_GBps, in.block_GBps, "block_GBps");
  // A reduce's own rate is of sources in the GPU's memory: only a team's reduce_peers rows time it
  // (verbs.cpp); an NVLink machine's rows leave the base's value.
  if (in.team)
    expect_near_rel(out.reduce_GBps(), in.reduce_GBps(), "block_reduce_GBps (or block_GBps where 0)");
  else
    EXPECT_EQ(out.block_reduce_GBps, base.block_reduce_GBps) << "block_reduce_GBps";
  expect_near_rel(out.hbm_GBps, in.hbm_GBps, "hbm_GBps");
  expect_near_rel(out.launch_eager_us, in.launch_eager_us, "launch_eager_us");
  expect_near_rel(out.launch_graph_us, in.launch_graph_us, "launch_graph_us");
  expect_near_rel(out.launch_eager_gap_us, in.launch_eager_gap_us, "launch_eager_gap_us");
  expect_near_rel(out.eager_release_us, in.eager_release_us, "eager_release_us");
  expect_near_rel(out.pdl_saving_us, in.pdl_saving_us, "pdl_saving_us");
  expect_near_rel(out.peer_kernel_us, in.peer_kernel_us, "peer_kernel_us");
  expect_near_rel(out.stream_op_us, in.stream_op_us, "stream_op_us");
  expect_near_rel(out.stream_batch_op_us, in.stream_batch_op_us, "stream_batch_op_us");
  expect_near_rel(out.ce_startup_us, in.ce_startup_us, "ce_startup_us");
  expect_near_rel(out.ce_GBps, in.ce_GBps, "ce_GBps");
  expect_near_rel(out.gemm_TFLOPs, in.gemm_TFLOPs, "gemm_TFLOPs");
  expect_near_rel(out.gemm_fixed_us, in.gemm_fixed_us, "gemm_fixed_us");
  expect_near_rel(out.gemm_GBps, in.gemm_GBps, "gemm_GBps");
  EXPECT_EQ(out.gemm_tile_m, in.gemm_tile_m);
  EXPECT_EQ(out.gemm_tile_n, in.gemm_tile_n);
  expect_near_rel(out.mma_TFLOPs, in.mma_TFLOPs, "mma_TFLOPs");
  expect_near_rel(out.mma_tile_us, in.mma_tile_us, "mma_tile_us");
  expect_near_rel(out.local_load_us, in.local_load_us, "local_load_us");
  if (world >= 3) {  // at world 2 a barrier signals and waits once: the base's values stay
    EXPECT_NEAR(out.signal_next_us, in.signal_next_us, 0.01) << "signal_next_us";
    EXPECT_NEAR(out.wait_next_us, in.wait_next_us, 0.01) << "wait_next_us";
  }
  // The one key no microbenchmark measures comes from the base, and the file says so.
  EXPECT_EQ(out.nvls_GBps, base.nvls_GBps);
  EXPECT_NE(f.ini.find("nvls_GBps = " + std::to_string(int(base.nvls_GBps)) + "  # not calibrated: as in h200x8.ini"),
            std::string::npos)
      << f.ini;
}

TEST(Calib, FitRecoversTheShippedMachine) { expect_recovers(machine("h200x4"), 4); }
TEST(Calib, FitRecoversDistinctParameters) { expect_recovers(odd_machine(), 4); }
TEST(Calib, FitRecoversAtEightRanks) { expect_recovers(odd_machine(), 8); }

TEST(Calib, DeterministicAndThroughTheCsv) {
  const CalibTable t = table_for(odd_machine(), 4);
  const Machine base = machine("h200x4");
  const std::string a = fit_machine(t, base, "m", "x.csv").ini;
  EXPECT_EQ(a, fit_machine(t, base, "m", "x.csv").ini);
  // Written and read back, the rows give the same file.
  const std::string path = testing::TempDir() + "calib_rows.csv";
  {
    std::ofstream f(path);
    write_calibration(f, t);
  }
  const CalibTable back = read_calibration(path);
  ASSERT_EQ(back.rows.size(), t.rows.size());
  EXPECT_EQ(fit_machine(back, base, "m", "x.csv").ini, a);
  // And the machine reader takes the file, comments and all, with the fitted values.
  const std::string ini = testing::TempDir() + "calib_fit.ini";
  {
    std::ofstream f(ini);
    f << a;
  }
  const Machine m = Machine::load(ini);
  EXPECT_NEAR(m.flag_latency_us, 1.7, 0.017);
  EXPECT_EQ(m.sms, 100);
}

TEST(Calib, AChangedRowChangesTheFile) {
  CalibTable t = table_for(odd_machine(), 4);
  const Machine base = machine("h200x4");
  const std::string a = fit_machine(t, base, "m", "x.csv").ini;
  for (CalibRow& r : t.rows)
    if (r.bench == "load_chain_lines" && r.x == 8) r.time_us *= 1.1;
  const FitResult b = fit_machine(t, base, "m", "x.csv");
  EXPECT_NE(b.ini, a);
  EXPECT_GT(b.machine.load_rtt_us, 3.1 * 1.01);  // the change moved the key it belongs to
}

// The round trip comes from the chain a line apart where a run has it, else from the 16-byte one
// (whose back-to-back loads share sectors on a GPU); the 16-byte chain's intercept still defines
// peer_kernel_us.
TEST(Calib, TheLineApartChainSetsTheRoundTrip) {
  CalibTable t = table_for(odd_machine(), 4);
  const Machine base = machine("h200x4");
  for (CalibRow& r : t.rows)
    if (r.bench == "load_chain") r.time_us -= 0.5 * r.x;  // cheaper per load, as a GPU's cache makes it
  const FitResult lines = fit_machine(t, base, "m", "x.csv");
  EXPECT_NEAR(lines.machine.load_rtt_us, 3.1, 0.031);
  EXPECT_NE(lines.ini.find("load_chain_lines (n >= 4)"), std::string::npos);
  std::erase_if(t.rows, [](const CalibRow& r) { return r.bench == "load_chain_lines"; });
  const FitResult chain = fit_machine(t, base, "m", "x.csv");
  EXPECT_NEAR(chain.machine.load_rtt_us, 2.6, 0.026);
  EXPECT_NEAR(chain.machine.peer_kernel_us, lines.machine.peer_kernel_us, 1e-9);
}

TEST(Calib, RowsThatDetermineNothingAreRefused) {
  CalibTable t = table_for(odd_machine(), 4);
  // A copy that gets faster with more bytes: a negative rate, which the fit must not write.
  for (CalibRow& r : t.rows)
    if (r.bench == "copy_local") r.time_us = 1000.0 / r.x * 1e6;
  EXPECT_THROW(fit_machine(t, machine("h200x4"), "m", "x.csv"), Error);
}

// A single-GPU run: only the per-GPU rows, world 1. It calibrates launch, HBM and GEMM; `gpus`
// and the link keys stay the base's (its device_gpus row says 1 and must not set gpus).
TEST(Calib, SingleGpuRowsCalibratePerGpuKeysOnly) {
  const Machine in = odd_machine();
  CalibTable t;
  for (CalibRow r : table_for(in, 2).rows) {
    const bool per_gpu =
        r.bench == "launch" || r.bench == "copy_local" || r.bench.starts_with("gemm") || r.bench.starts_with("device_");
    if (!per_gpu) continue;
    r.world = 1;
    if (r.bench == "device_gpus") r.x = 1;
    t.rows.push_back(r);
  }
  const Machine base = machine("h200x2");
  const FitResult f = fit_machine(t, base, "one", "one.csv");
  EXPECT_EQ(f.machine.gpus, base.gpus);
  EXPECT_EQ(f.machine.nvlink_egress_GBps, base.nvlink_egress_GBps);
  EXPECT_EQ(f.machine.flag_latency_us, base.flag_latency_us);
  expect_near_rel(f.machine.launch_graph_us, in.launch_graph_us, "launch_graph_us");
  expect_near_rel(f.machine.gemm_TFLOPs, in.gemm_TFLOPs, "gemm_TFLOPs");
  expect_near_rel(f.machine.gemm_fixed_us, in.gemm_fixed_us, "gemm_fixed_us");
  expect_near_rel(f.machine.gemm_GBps, in.gemm_GBps, "gemm_GBps");
  EXPECT_EQ(f.machine.gemm_tile_m, 128);
  EXPECT_EQ(f.machine.gemm_tile_n, 256);
}

// `only`: the keys the rows may set; the others keep the base's values and say so.
TEST(Calib, OnlyTheNamedKeysAreSet) {
  const Machine in = odd_machine();
  const Machine base = machine("h200x2");
  const FitResult f = fit_machine(table_for(in, 2), base, "m", "x.csv", {"gemm_*", "hbm_GBps"});
  expect_near_rel(f.machine.gemm_TFLOPs, in.gemm_TFLOPs, "gemm_TFLOPs");
  expect_near_rel(f.machine.hbm_GBps, in.hbm_GBps, "hbm_GBps");
  EXPECT_EQ(f.machine.launch_graph_us, base.launch_graph_us);
  EXPECT_EQ(f.machine.flag_latency_us, base.flag_latency_us);
  EXPECT_EQ(f.machine.sms, base.sms);
  // The GEMM's fixed cost is net of the measuring host's launch (the rows'), not the base's.
  expect_near_rel(f.machine.gemm_fixed_us, in.gemm_fixed_us, "gemm_fixed_us");
  EXPECT_NE(f.ini.find("launch_graph_us = " + fmt_like(base.launch_graph_us) + "  # not calibrated"), std::string::npos)
      << f.ini;
}

// A team's rows written and read back stay a team's (core/calib_plan.h kTeamComment): the reduce
// rate, fitted from a team's reduce_peers rows only, comes back the same; an NVLink run's rows stay not.
TEST(Calib, ATeamsRowsStayATeamsThroughTheCsv) {
  Machine in = odd_team();
  in.block_reduce_GBps = 70;
  const CalibTable t = table_for(in, 2);
  const std::vector<CalibRow> simulated = simulate_calibration(in, 2);
  ASSERT_TRUE(std::all_of(simulated.begin(), simulated.end(), [](const CalibRow& r) { return r.team; }));
  const std::string path = testing::TempDir() + "calib_team_rows.csv";
  {
    std::ofstream f(path);
    write_calibration(f, t);
  }
  const CalibTable back = read_calibration(path);
  ASSERT_EQ(back.rows.size(), t.rows.size());
  EXPECT_TRUE(std::all_of(back.rows.begin(), back.rows.end(), [](const CalibRow& r) { return r.team; }));
  const Machine base = machine("h200x1");
  // The same fit (the file says one line more: the team comment).
  const Machine a = fit_machine(t, base, "m", "x.csv").machine, b = fit_machine(back, base, "m", "x.csv").machine;
  EXPECT_NEAR(a.block_reduce_GBps, 70, 0.02 * 70);
  EXPECT_DOUBLE_EQ(b.block_reduce_GBps, a.block_reduce_GBps);
  EXPECT_DOUBLE_EQ(b.load_slowdown, a.load_slowdown);
  EXPECT_DOUBLE_EQ(b.block_GBps, a.block_GBps);
  const CalibTable nvlink = table_for(odd_machine(), 2);
  const std::string other = testing::TempDir() + "calib_nvlink_rows.csv";
  {
    std::ofstream f(other);
    write_calibration(f, nvlink);
  }
  const CalibTable back2 = read_calibration(other);
  EXPECT_TRUE(std::none_of(back2.rows.begin(), back2.rows.end(), [](const CalibRow& r) { return r.team; }));
}

// A team machine (base team = 1: the ranks share one GPU), its team run (2 ranks on the GPU,
// simulated on the team machine: the ranks' local copies share its HBM) pooled with a lone rank's
// launch and GEMM rows (world 1, other values): HBM counts both ranks' bytes, launch comes from the
// team's rows (what a team rank pays), the GEMM from the lone rank's (the GPU alone).
TEST(Calib, ATeamMachineTakesLaunchFromTheTeamAndTheGpuFromBoth) {
  Machine in = odd_team();
  Machine alone = odd_machine();  // a GPU per rank: each rank's GEMM has its GPU
  alone.launch_graph_us = 2 * in.launch_graph_us;
  alone.launch_eager_us = 2 * in.launch_eager_us;
  alone.gemm_TFLOPs = 900;
  CalibTable t = table_for(in, 2);
  // The simulator times a team's eager call as its graph time + each rank's launch (sim.h
  // team_launch_us), not launch_eager_us; the team calibration's eager launch row is that key's.
  for (CalibRow& r : t.rows)
    if (r.bench == "launch" && !r.graph) r.time_us = in.launch_eager_us;
  for (CalibRow r : table_for(alone, 2).rows) {
    if (r.bench != "launch" && !r.bench.starts_with("gemm")) continue;
    r.world = 1;
    t.rows.push_back(r);
  }
  const FitResult f = fit_machine(t, machine("h200x1"), "team", "team.csv", {"hbm_GBps", "launch_*", "gemm_*"});
  expect_near_rel(f.machine.hbm_GBps, in.hbm_GBps, "hbm_GBps");
  expect_near_rel(f.machine.launch_graph_us, in.launch_graph_us, "launch_graph_us");
  expect_near_rel(f.machine.launch_eager_us, in.launch_eager_us, "launch_eager_us");
  expect_near_rel(f.machine.gemm_TFLOPs, alone.gemm_TFLOPs, "gemm_TFLOPs");
}

// The L2 (backends/sim/l2.h) from a team's rows: its size from device_l2_bytes, its rate from the
// copy_local rows whose bytes on the GPU fit in it (1M and 4M at a team of 2), and HBM's from the
// rest (16M and up); copies that fit run from the L2 in the simulator, as on the GPU.
TEST(Calib, ATeamMachineFitsItsL2FromTheCopiesThatFitInIt) {
  Machine in = odd_team();
  in.l2_MB = 30;
  in.l2_GBps = 4100;
  const FitResult f = fit_machine(table_for(in, 2), machine("h200x1"), "team", "team.csv", {"hbm_GBps", "l2_*"});
  EXPECT_DOUBLE_EQ(f.machine.l2_MB, 30);
  expect_near_rel(f.machine.l2_GBps, in.l2_GBps, "l2_GBps");
  expect_near_rel(f.machine.hbm_GBps, in.hbm_GBps, "hbm_GBps");
  // Runs with one size within the L2 (the NVLink machines' 16M rows): the rate through the HBM
  // line's intercept, near the set one (the two lines' fixed costs differ a little).
  in.l2_MB = 100;  // 16M x 2 ranks x 2 fits
  CalibTable one = table_for(in, 2);
  std::erase_if(one.rows, [](const CalibRow& r) { return r.bench == "copy_local" && r.x < (16 << 20); });
  const FitResult g = fit_machine(one, machine("h200x1"), "team", "team.csv", {"hbm_GBps", "l2_*"});
  EXPECT_NEAR(g.machine.l2_GBps, in.l2_GBps, 0.1 * in.l2_GBps);
  EXPECT_NE(g.ini.find("hbm_GBps's intercept"), std::string::npos) << g.ini;
}

// Rows that are data only never move the fit: the held-out GEMM rows (the fused ops' shapes), the
// eager GEMM rows and the acquire chain (acquires of a flag the block set itself: as a key of its
// own, acquire_set_us, fitted from one H100's chain at 0.19 us beside the bench-fitted fence share,
// it made world 4's barrier-bound programs 15-20 % optimistic held out). acquire_peer_flags is not
// data only: FenceShareFromPeerFlagAcquires below; nor is fence_chain_local (local_store_fence_us).
TEST(Calib, DataOnlyRowsDoNotMoveTheFit) {
  CalibTable t = table_for(odd_machine(), 4);
  const Machine base = machine("h200x4");
  const std::string a = fit_machine(t, base, "m", "x.csv").ini;
  for (const char* bench : {"gemm_fused", "acquire_chain", "peer_copy_chain", "fence_chain_peer"}) {
    int changed = 0;
    for (CalibRow& r : t.rows)
      if (r.bench == bench) r.time_us *= 1.5, ++changed;
    ASSERT_GT(changed, 0) << bench;
    EXPECT_EQ(fit_machine(t, base, "m", "x.csv").ini, a) << bench;
  }
  for (CalibRow& r : t.rows)
    if (r.bench == "gemm" && r.m == 4096 && r.n == 8192) r.time_us *= 1.5;
  EXPECT_NE(fit_machine(t, base, "m", "x.csv").ini, a);  // a fitted row does
}

// release_fence_share comes from acquire_peer_flags alone (with acquire_us): slower acquires of
// set flags leave less of acquire_us to the release's fence; without those rows the base's value
// stays, and the file says so.
TEST(Calib, FenceShareFromPeerFlagAcquires) {
  CalibTable t = table_for(odd_machine(), 2);
  const Machine base = machine("h200x4");
  const FitResult a = fit_machine(t, base, "m", "x.csv");
  EXPECT_NEAR(a.machine.release_fence_share, 0.6, 0.01);
  for (CalibRow& r : t.rows)
    if (r.bench == "acquire_peer_flags") r.time_us += 0.1 * r.x;  // 0.1 us more per acquire
  const FitResult b = fit_machine(t, base, "m", "x.csv");
  EXPECT_NEAR(b.machine.release_fence_share, 0.6 - 0.1 / 0.35, 0.01);
  EXPECT_EQ(b.machine.acquire_us, a.machine.acquire_us);
  std::erase_if(t.rows, [](const CalibRow& r) { return r.bench == "acquire_peer_flags"; });
  const FitResult c = fit_machine(t, base, "m", "x.csv");
  EXPECT_EQ(c.machine.release_fence_share, base.release_fence_share);
  const std::size_t at = c.ini.find("\nrelease_fence_share = ");
  ASSERT_NE(at, std::string::npos) << c.ini;
  const std::string line = c.ini.substr(at + 1, c.ini.find('\n', at + 1) - at - 1);
  EXPECT_NE(line.find("# not calibrated"), std::string::npos) << line;
}

// local_load_us comes from the reduce chains' slope alone: peer_reduce_chain's (lines a peer
// stored) where a run has them, else local_reduce_chain's; without either the base's value stays,
// and the file says so. ll_poll_us (the packet spin's last look, such a load) takes its value.
TEST(Calib, LocalReduceWaitFromTheReduceChains) {
  CalibTable t = table_for(odd_machine(), 2);
  const Machine base = machine("h200x4");
  const FitResult a = fit_machine(t, base, "m", "x.csv");
  expect_near_rel(a.machine.local_load_us, 0.27, "local_load_us");
  EXPECT_EQ(a.machine.ll_poll_us, a.machine.local_load_us);
  EXPECT_NE(a.machine.ll_poll_us, base.ll_poll_us);
  for (CalibRow& r : t.rows) {
    if (r.bench == "peer_reduce_chain") r.time_us += 0.1 * r.x;   // 0.1 us more per reduce
    if (r.bench == "local_reduce_chain") r.time_us += 0.3 * r.x;  // not read beside peer rows
  }
  expect_near_rel(fit_machine(t, base, "m", "x.csv").machine.local_load_us, 0.37, "local_load_us");
  std::erase_if(t.rows, [](const CalibRow& r) { return r.bench == "peer_reduce_chain"; });
  expect_near_rel(fit_machine(t, base, "m", "x.csv").machine.local_load_us, 0.57, "local_load_us");
  std::erase_if(t.rows, [](const CalibRow& r) { return r.bench == "local_reduce_chain"; });
  const FitResult c = fit_machine(t, base, "m", "x.csv");
  EXPECT_EQ(c.machine.local_load_us, base.local_load_us);
  EXPECT_NE(c.ini.find("local_load_us = " + fmt_like(base.local_load_us) + "  # not calibrated"), std::string::npos)
      << c.ini;
}

// A host plan's call pays one launch latency, not two (streams.cpp: the streams' kick is the
// call's launch, and a kernel or GEMM that is a stream's first item starts at it): the one-GEMM
// plan (the fused ops' cublaslt baseline) takes launch_graph_us plus the GEMM's own time, and the
// calibration rows simulated from it are that time.
TEST(Calib, AOneGemmPlanPaysOneLaunch) {
  const Machine m = odd_machine();
  FusedRunSpec f;
  f.machine = m;
  f.world = 2;
  f.algo = find_fused_baseline(FusedOp::kAgMm, "cublaslt");
  f.shape.m = 4096, f.shape.n = 4096, f.shape.k = 4096;
  f.timing_only = true;
  const double want = m.launch_graph_us + m.gemm_time_us(4096, 4096, 4096);
  EXPECT_NEAR(run_fused(f).time_us, want, 1e-3 * want);
  int seen = 0;
  for (const CalibRow& r : simulate_calibration(m, 2)) {
    if (r.bench != "gemm") continue;
    ++seen;
    const double w = m.launch_graph_us + m.gemm_time_us(r.m, r.n, r.k);
    EXPECT_NEAR(r.time_us, w, 1e-3 * w) << r.m << " x " << r.n << " x " << r.k;
  }
  EXPECT_GT(seen, 0);
}

// Without tile_gemm rows the tile verb keeps cuBLASLt's fitted rate and no fixed cost, and the
// file says it was assumed; with them (the same rows, tile_gemm kept) it is the tile GEMM's own.
TEST(Calib, TileKeysComeFromTileRowsOrAreAssumed) {
  const Machine in = odd_machine();
  CalibTable t = table_for(in, 2);
  const Machine base = machine("h200x2");
  const FitResult with = fit_machine(t, base, "m", "x.csv");
  expect_near_rel(with.machine.mma_TFLOPs, in.mma_TFLOPs, "mma_TFLOPs");
  std::erase_if(t.rows, [](const CalibRow& r) { return r.bench == "tile_gemm"; });
  const FitResult without = fit_machine(t, base, "m", "x.csv");
  EXPECT_EQ(without.machine.mma_TFLOPs, without.machine.gemm_TFLOPs);
  EXPECT_EQ(without.machine.mma_tile_us, 0);
  EXPECT_NE(without.ini.find("mma_tile_us = 0  # assumed 0: no tile_gemm row"), std::string::npos) << without.ini;
}

// gemm-bench's CSV (one GPU, our tile GEMM beside cuBLASLt) reads as calibration rows of world 1:
// tile in bf16 as tile_gemm (fitted), the rest under names no fit reads; its rows fit the tile keys.
TEST(Calib, GemmBenchRowsReadAsTileGemmRows) {
  const Machine in = odd_machine();
  const std::string path = testing::TempDir() + "gemm_bench.csv";
  {
    std::ofstream f(path);
    f << "backend,machine,op,impl,dtype,M,N,K,graph,time_us_median,time_us_p10,time_us_p90,tflops,max_rel_err,"
         "git_sha\n";
    for (const CalibRow& r : simulate_calibration(in, 2)) {
      if (r.bench != "tile_gemm") continue;
      for (const char* impl : {"tile", "cublaslt"})
        f << "cuda,x,gemm," << impl << ",bf16," << r.m << "," << r.n << "," << r.k << "," << int(r.graph) << ","
          << (std::string(impl) == "tile" ? r.time_us : 1.0) << ",0,0,0,-1,abc\n";
    }
    f << "cuda,x,gemm,tile,fp16,256,1024,512,1,1.0,0,0,0,-1,abc\n";
  }
  const CalibTable t = read_calibration(path);
  int tiles = 0, others = 0;
  for (const CalibRow& r : t.rows) {
    EXPECT_EQ(r.world, 1);
    if (r.bench == "tile_gemm") {
      ++tiles;
      EXPECT_DOUBLE_EQ(r.x, 2.0 * r.m * r.n * double(r.k));
    } else {
      ++others;
      EXPECT_TRUE(r.bench == "gemm_bench_cublaslt" || r.bench == "tile_gemm_fp16") << r.bench;
    }
  }
  EXPECT_GT(tiles, 3);
  EXPECT_EQ(others, tiles + 1);
  Machine base = machine("h200x2");
  base.sms = in.sms;  // gemm-bench has no device rows: the sms the tiles were dealt over come from the base
  const FitResult f = fit_machine(t, base, "m", path, {"mma_*"});
  expect_near_rel(f.machine.mma_TFLOPs, in.mma_TFLOPs, "mma_TFLOPs");
  expect_near_rel(f.machine.mma_tile_us, in.mma_tile_us, "mma_tile_us");
  EXPECT_EQ(f.machine.gemm_TFLOPs, base.gemm_TFLOPs);
}

TEST(Calib, CsvErrorsNameTheLine) {
  const std::string path = testing::TempDir() + "calib_bad.csv";
  {
    std::ofstream f(path);
    f << "# c\nbench,world,blocks,graph,x,time_us\nlaunch,4,1,1,0,0.7\nlaunch,4,1,x,0,0.7\n";
  }
  try {
    read_calibration(path);
    FAIL() << "accepted a bad field";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":4:"), std::string::npos) << e.what();
  }
}

// The exchange rows (data only, no key): every rank signals every peer and waits for them. On the
// simulator a round costs one flag's one-way trip, so a call of one round is cheaper than a
// ping-pong's round trip, and more rounds cost more, at every world.
// At world 2 a round is one flag's trip, under a ping-pong round's two; each further peer adds a
// later signal and a later wait (signal_next_us, wait_next_us): on 4x H200 an exchange round at
// world 4 measured more than a ping-pong round (25.4 against 23.2 us at 16 rounds,
// experiments/results/h200x4/round_605ae01), as the simulator has it.
TEST(Calib, ExchangeIsAOneWayTripPerRound) {
  const Machine m = machine("h200x4");
  const CalibPlan plan;
  std::map<int, std::vector<double>> by_world;  // exchange rows by rounds, per world
  for (int world : {2, 3, 4}) {
    const std::vector<CalibRow> rows = simulate_calibration(m, world, plan);
    auto at = [&](const char* bench, double x) {
      for (const CalibRow& r : rows)
        if (r.bench == bench && r.x == x) return r.time_us;
      ADD_FAILURE() << bench << " x " << x << " missing at world " << world;
      return 0.0;
    };
    double prev = 0;
    for (int n : plan.rounds) {
      const double t = at("exchange", n);
      EXPECT_GT(t, prev) << "world " << world << " rounds " << n;
      if (world == 2) {
        EXPECT_LT(t, at("pingpong_relaxed", n)) << "rounds " << n;
      }
      if (world == 4 && n >= 16) {
        EXPECT_GT(t, at("pingpong_relaxed", n)) << "rounds " << n;
      }
      by_world[world].push_back(t);
      prev = t;
    }
  }
  for (std::size_t i = 0; i < plan.rounds.size(); ++i)
    if (plan.rounds[i] >= 4) {
      EXPECT_GT(by_world[3][i], by_world[2][i]) << "rounds " << plan.rounds[i];
      EXPECT_GT(by_world[4][i], by_world[3][i]) << "rounds " << plan.rounds[i];
    }
}

// A ping-pong call with fewer rounds than the call before it on the same signal pads (calibrate
// --trace's first traced case, 16 rounds after the timed rows' 32) must still wait for every
// round's flag: each call owns kMaxRounds flag values (calib_programs.h round_value). With the
// old stride of the call's own round count, the second call found every flag already set and its
// 16 round trips took no flag time at all.
struct ShrinkingPingPong {  // call 1: 32 rounds, call 2: 16 (its own counter, block 7's)
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.block() != 0) return;
    const uint32_t call = ctx.advance(pad::counter(7, calib::kCounter));
    CollArgs b = a;
    b.count = (call % 2 == 1 ? 32 : 16) * kVecBytes / sizeof(T);
    calib::PingPongRelaxed::run<T>(ctx, b);
  }
};

TEST(Calib, APingPongAfterALongerOneStillWaits) {
  const Machine m = machine("h200x4");
  RunSpec s = timing_spec(m, 2, 32 * kVecBytes, 1);
  s.calls = 2;  // the second call is timed
  const double t = run_program<ShrinkingPingPong>(s).time_us;
  EXPECT_GT(t, 16 * 2 * m.flag_latency_us) << "16 round trips of two one-way flags each";
  for (uint32_t e = 1; e < 4; ++e)
    EXPECT_LT(calib::round_value(e, calib::kMaxRounds), calib::round_value(e + 1, 1)) << "call " << e;
  EXPECT_NO_THROW(calib::CalibPlan().check());
  calib::CalibPlan too_many;
  too_many.rounds.push_back(int(calib::kMaxRounds) + 1);
  EXPECT_THROW(too_many.check(), Error);
}

// A team machine's block rates under load (sim.h load_slowdown): copy_peer and reduce_peers at
// 1..32 blocks, simulated with a slowdown, give it back with the unslowed rates of a copy and a
// reduce (block_GBps, block_reduce_GBps), at 4 ranks on the GPU. The rows' times include their fixed
// costs, which the fit's traffic (bytes over the whole time) leaves in: a few per cent.
TEST(Calib, ATeamMachineFitsItsBlocksSlowingUnderLoad) {
  Machine in = odd_team();
  in.block_GBps = 45;
  in.block_reduce_GBps = 70;
  in.load_slowdown = 0.06;
  const FitResult f = fit_machine(table_for(in, 4), machine("h200x1"), "team", "team.csv",
                                  {"block_GBps", "block_reduce_GBps", "load_slowdown"});
  EXPECT_NEAR(f.machine.load_slowdown, in.load_slowdown, 0.05 * in.load_slowdown);
  EXPECT_NEAR(f.machine.block_GBps, in.block_GBps, 0.02 * in.block_GBps);
  EXPECT_NEAR(f.machine.block_reduce_GBps, in.block_reduce_GBps, 0.02 * in.block_reduce_GBps);
  // Without the slowdown the fit finds none.
  in.load_slowdown = 0;
  const FitResult g = fit_machine(table_for(in, 4), machine("h200x1"), "team", "team.csv", {"load_slowdown"});
  EXPECT_LT(g.machine.load_slowdown, 0.005);
}

}  // namespace
}  // namespace symm::sim
