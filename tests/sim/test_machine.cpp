// Machine files: the shipped ones load; malformed ones name the file and the key.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "backends/sim/sim.h"

namespace symm::sim {
namespace {

const char* const kTinyBody =
    "gpus = 8\nteam = 0\nteam_launch_us = 0\nnvlink_egress_GBps = 4\nnvlink_ingress_GBps = 4\nstore_latency_us = 1\n"
    "flag_latency_us = 1\nload_rtt_us = 2\nload_overlap = 1\nacquire_us = 0\nrelease_fence_share = 0\nfence_gap_us = "
    "0\nfence_crowd_us = 0\nfence_crowd_blocks = 0\n"
    "local_store_fence_us = 0\nsignal_next_us = 0\nwait_next_us = 0\npeer_kernel_us = "
    "0\nblock_GBps = "
    "1\nblock_reduce_GBps = 0\nload_slowdown = 0\n"
    "sms = 8\nhbm_GBps = 8\nl2_MB = 0\nl2_GBps = 0\n"
    "launch_eager_us = 2\nlaunch_graph_us = 1\nlaunch_eager_gap_us = 0\neager_release_us = 0\npdl_saving_us = "
    "0\nstream_op_us = "
    "0\nstream_batch_op_us = 0\ncopy_engines = "
    "1\nce_startup_us = 1\nce_GBps = "
    "1\n"
    "nvls_GBps = 2\ngemm_TFLOPs = 1\n";

std::string write_ini(const std::string& name, const std::string& body) {
  const std::string path = ::testing::TempDir() + "/" + name + ".ini";
  std::ofstream(path) << body;
  return path;
}

std::string load_error(const std::string& path) {
  try {
    Machine::load(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << path << " loaded";
  return {};
}

TEST(Machine, ShippedFilesLoad) {
  const Machine m = Machine::by_name("h200x4");
  EXPECT_EQ(m.name, "h200x4");
  EXPECT_EQ(m.gpus, 4);
  // A remote load's round trip from calibrate's load_chain_lines rows (0.9 us on H200), not the
  // flag ping-pong's 2.67 of the base file.
  EXPECT_GT(m.load_rtt_us, 0.5);
  EXPECT_LT(m.load_rtt_us, 1.5);
  EXPECT_EQ(m.sms, 132);
  EXPECT_EQ(Machine::by_name("h200x8").gpus, 8);
  // h200x2 and h200x4: fitted from their own calibration runs (experiments/results/h200x2/
  // calibrate_h200x2.csv, world 2; h200x4/round_96b7148_cal/, world 4) and the one-GPU run, so their
  // link, latency and per-block keys are their own; the chip's agree. h200x8 (no run of its own)
  // takes the fabric's keys from h200x2's run (experiments/Makefile FABRIC_KEYS), its links from
  // its base.
  const Machine x2 = Machine::by_name("h200x2"), x8 = Machine::by_name("h200x8");
  EXPECT_DOUBLE_EQ(x8.flag_latency_us, x2.flag_latency_us);
  EXPECT_DOUBLE_EQ(x8.acquire_us, x2.acquire_us);
  EXPECT_DOUBLE_EQ(x8.block_GBps, x2.block_GBps);
  EXPECT_DOUBLE_EQ(x8.load_rtt_us, x2.load_rtt_us);
  EXPECT_DOUBLE_EQ(x8.local_store_fence_us, x2.local_store_fence_us);
  EXPECT_GT(m.flag_latency_us, 0.0);
  EXPECT_NE(m.nvlink_egress_GBps, x2.nvlink_egress_GBps);
  EXPECT_EQ(x2.gpus, 2);
  EXPECT_EQ(x2.sms, m.sms);
  EXPECT_EQ(x2.copy_engines, m.copy_engines);
  EXPECT_GT(x2.block_GBps, 0);
  EXPECT_GT(x2.load_rtt_us, 0);
  EXPECT_EQ(Machine::by_name("h100x8").gpus, 8);
  EXPECT_EQ(m.team, 0);  // NVLink nodes: a GPU per rank
  // One GPU, N ranks (in-process teams): one GPU that every rank shares.
  for (const char* team : {"h200x1", "h100x1"}) {
    const Machine t1 = Machine::by_name(team);
    EXPECT_EQ(t1.team, 1) << team;
    EXPECT_EQ(t1.gpus, 1) << team;
    EXPECT_EQ(t1.gpu_of(7), 0) << team;
    EXPECT_EQ(t1.ranks_per_gpu(8), 8) << team;
  }
  const Machine t = Machine::by_name(SYMM_TEST_DIR "/tiny.ini");
  EXPECT_EQ(t.name, "tiny");
  EXPECT_DOUBLE_EQ(t.hbm_GBps, 8);
}

TEST(Machine, UnknownKey) {
  const std::string p = write_ini("m_unknown", std::string(kTinyBody) + "warp_speed = 9\n");
  EXPECT_EQ(load_error(p), p + ": unknown key 'warp_speed'");
}

TEST(Machine, MissingKey) {
  std::string body = kTinyBody;
  body.erase(body.find("sms = 8\n"), 8);
  const std::string p = write_ini("m_missing", body);
  EXPECT_EQ(load_error(p), p + ": key 'sms' is missing");
}

TEST(Machine, NonPositiveValue) {
  std::string body = kTinyBody;
  body.replace(body.find("hbm_GBps = 8"), 12, "hbm_GBps = 0");
  const std::string p = write_ini("m_zero", body);
  EXPECT_EQ(load_error(p), p + ": key 'hbm_GBps' must be positive (got 0)");
  body.replace(body.find("hbm_GBps = 0"), 12, "hbm_GBps = -3");
  const std::string q = write_ini("m_negative", body);
  EXPECT_EQ(load_error(q), q + ": key 'hbm_GBps' must be positive (got -3)");
}

TEST(Machine, ReleaseFenceShareIsAShare) {
  std::ifstream tiny(SYMM_TEST_DIR "/tiny.ini");
  std::string body((std::istreambuf_iterator<char>(tiny)), std::istreambuf_iterator<char>());
  body.replace(body.find("release_fence_share = 0"), 23, "release_fence_share = 1.5");
  const std::string p = write_ini("m_share", body);
  EXPECT_EQ(load_error(p), p + ": key 'release_fence_share' is a share of acquire_us, at most 1 (got 1.500000)");
}

TEST(Machine, MalformedValue) {
  std::string body = kTinyBody;
  body.replace(body.find("gpus = 8"), 8, "gpus = 8x");
  const std::string p = write_ini("m_malformed", body);
  EXPECT_EQ(load_error(p), p + ": key 'gpus' has value '8x', not a number");
}

TEST(Machine, UnknownNameListsTheAvailable) {
  try {
    Machine::by_name("h900x3");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("h200x4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("h900x3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Machine::load("/nonexistent/m.ini"), Error);
}

}  // namespace
}  // namespace symm::sim
