// `symmcoll bench --backend cuda --op ag_mm,mm_rs`: bad shapes and options get one
// `symmcoll: error:` line and exit 2 before any GPU is touched (the shape check runs as soon as
// the world size is known: WORLD_SIZE=2 stands in for `symmcoll launch -n 2`).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/fused.h"
#include "tests/apps/cli_run.h"

namespace {

using namespace symm_test;

// As a rank of a 2-rank job would see it (the CUDA bench's checks run before any GPU is touched).
Out run(const std::string& args) {
  return run_command("env RANK=0 WORLD_SIZE=2 " + std::string(SYMMCOLL_BIN) + " " + args);
}

bool has_cuda() { return run("launch --help").out.find("no CUDA backend") == std::string::npos; }

TEST(CliFused, BadShapesAreOneLineAndExit2) {
  if (!has_cuda()) GTEST_SKIP() << "this build has no CUDA";
  const std::pair<const char*, const char*> cases[] = {
      {"--op ag_mm --shape 8b --m 4097", "--m 4097 is not divisible by the world size 2"},
      {"--op mm_rs --n 64 --k 4099 --m 64", "--k 4099 is not divisible by the world size 2"},
      {"--op mm_rs --shape 70b --m 0", "--m must be positive"},
      {"--op ag_mm --n 0 --k 64 --m 64", "--n must be positive"},
      {"--op ag_mm --shape 70b --m 4194304", "--m 4194304 is above the largest dimension"},
      {"--op ag_mm --n 1048576 --k 1048576 --m 1048576", "above the limit"},
      {"--op ag_mm --shape 13b --m 64", "--shape '13b' is not a known shape"},
      {"--op ag_mm --m 64", "needs --shape 8b,70b or --n and --k"},
      {"--op ag_mm --shape 8b --n 64 --k 64", "--shape cannot go with --n/--k"},
      {"--op ag_mm,all_reduce --shape 8b", "mixes fused ops"},
      {"--op mm_rs --shape 8b --algo bogus", "unknown mm_rs algorithm 'bogus'"},
      {"--op ag_mm --shape 8b --dtype fp32", "--dtype fp32 is not supported by ag_mm"},
      {"--op ag_mm --shape 8b --m x", "--m 'x' is not a non-negative integer"},
      {"--op ag_mm --shape 8b --streams 3 --chunk-rows 64 --csv /tmp/x.csv", "--chunk-rows 64 cannot go with --csv"},
  };
  for (const auto& [args, message] : cases) {
    const Out r = run(std::string("bench --backend cuda ") + args);
    expect_one_line_error(r, args, message);
  }
}

TEST(CliFused, HelpNamesTheShapesAndBaselines) {
  if (!has_cuda()) GTEST_SKIP() << "this build has no CUDA";
  const Out r = run("bench --backend cuda --op ag_mm --help");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* s : {"--shape", "8b", "70b", "--m", "--n", "--k", "cublaslt", "nccl_cublaslt", "mm_rs"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

}  // namespace

// The simulator's side: `symmcoll run|sweep --backend sim --op ag_mm|mm_rs`.
TEST(CliFusedSim, RunChecksTheProductAndSweepWritesMNK) {
  const Out r = run("run --backend sim --machine h200x8 --world 4 --op mm_rs --algo ce --n 128 --k 192 --m 384");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("predicted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": ok"), std::string::npos) << r.out;
  const std::string csv = ::testing::TempDir() + "fused_sweep.csv";
  const Out s =
      run("sweep --backend sim --machine h200x4 --op ag_mm --shape 8b --m 4096,8192 --timing-only --csv " + csv);
  EXPECT_EQ(s.code, 0) << s.out;
  std::ifstream f(csv);
  std::string header, line;
  std::getline(f, header);
  EXPECT_NE(header.find(",M,N,K"), std::string::npos) << header;
  int n = 0;
  while (std::getline(f, line)) {
    ++n;
    EXPECT_NE(line.find(",1792,4096"), std::string::npos) << line;
  }
  EXPECT_EQ(n, 14);  // (four algorithms + the three baselines) x two M
}

// Back-to-back calls (run --calls, as for the collectives): every call checked, the last one timed.
TEST(CliFusedSim, RunTakesCalls) {
  for (const char* op : {"ag_mm", "mm_rs"}) {
    const Out r = run(std::string("run --backend sim --machine h200x8 --world 4 --op ") + op +
                      " --algo ce --n 128 --k 192 --m 384 --calls 3");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("3 calls back to back"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(": ok"), std::string::npos) << r.out;
  }
  expect_one_line_error(run("run --backend sim --op ag_mm --algo ce --shape 8b --m 4096 --timing-only --calls 0"),
                        "--calls 0", "--calls 0 must be at least 1");
  expect_one_line_error(run("sweep --backend sim --op ag_mm --shape 8b --m 4096 --timing-only --calls 2"),
                        "sweep --calls", "unrecognised option '--calls'");
}

// Op and shape lists, the baselines beside the fused algorithms (and --no-baselines without them).
TEST(CliFusedSim, SweepTakesOpAndShapeListsWithBaselines) {
  const std::string csv = ::testing::TempDir() + "fused_lists.csv";
  for (const bool baselines : {true, false}) {
    const Out s = run("sweep --backend sim --machine h200x2 --op ag_mm,mm_rs --shape 8b,70b --m 4096 --timing-only" +
                      std::string(baselines ? "" : " --no-baselines") + " --csv " + csv);
    ASSERT_EQ(s.code, 0) << s.out;
    std::ifstream f(csv);
    std::string line;
    std::getline(f, line);
    std::map<std::string, int> per_op, per_k;
    int base_rows = 0;
    while (std::getline(f, line)) {
      per_op[line.find(",ag_mm,") != std::string::npos ? "ag_mm" : "mm_rs"]++;
      per_k[line.substr(line.rfind(',') + 1)]++;
      base_rows += line.find(",cublaslt,") != std::string::npos || line.find(",seq_coll_gemm,") != std::string::npos ||
                   line.find(",tile_gemm,") != std::string::npos;
    }
    // Per shape: ag_mm's four algorithms and mm_rs's seven (+ three baselines each).
    const int ag = baselines ? 7 : 4, rs = baselines ? 10 : 7;
    EXPECT_EQ(per_op["ag_mm"], 2 * ag) << s.out;
    EXPECT_EQ(per_op["mm_rs"], 2 * rs) << s.out;
    EXPECT_EQ(per_k["4096"], ag + rs) << s.out;  // 8b
    EXPECT_EQ(per_k["8192"], ag + rs) << s.out;  // 70b
    EXPECT_EQ(base_rows, baselines ? 12 : 0) << s.out;
  }
  // run takes a baseline by name, and checks it.
  const Out r =
      run("run --backend sim --machine h200x8 --world 4 --op ag_mm --algo seq_coll_gemm --n 128 --k 192 --m 384");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(": ok"), std::string::npos) << r.out;
}

TEST(CliFusedSim, SweepRefusesMixedOpsAndPerOpAlgoNames) {
  const std::pair<const char*, const char*> cases[] = {
      {"--op mm_rs,reduce_scatter --shape 8b", "mixes fused ops (ag_mm, mm_rs) with collectives"},
      {"--op all_reduce,ag_mm --shape 8b", "mixes fused ops (ag_mm, mm_rs) with collectives"},
      {"--op ag_mm,mm_rs --shape 8b --algo ce_bulk", "unknown mm_rs algorithm 'ce_bulk'"},
  };
  for (const auto& [args, message] : cases) {
    const Out r = run(std::string("sweep --backend sim --timing-only ") + args);
    expect_one_line_error(r, args, message);
  }
}

TEST(CliFusedSim, BadShapesAreOneLineAndExit2) {
  const std::pair<const char*, const char*> cases[] = {
      {"--op ag_mm --algo ce --shape 8b --m 4097 --world 2", "--m 4097 is not divisible by the world size 2"},
      {"--op mm_rs --algo ce --n 64 --k 4099 --m 64 --world 2", "--k 4099 is not divisible by the world size 2"},
      {"--op mm_rs --algo ce --shape 70b --m 0", "--m must be positive"},
      {"--op ag_mm --algo ce --shape 70b --m 4194304", "--m 4194304 is above the largest dimension"},
      {"--op ag_mm --algo ce --m 64", "needs --shape or --n and --k"},
      {"--op ag_mm --algo bogus --shape 8b", "unknown ag_mm algorithm 'bogus'"},
      {"--op ag_mm,mm_rs --algo ce --shape 8b", "run takes one op"},
      {"--op ag_mm --algo ce --shape 8b,70b", "run takes one shape"},
      {"--op ag_mm --algo ce --shape 8b,13b", "--shape '13b' is not a known shape"},
      {"--op ag_mm,all_reduce --algo ce --shape 8b", "mixes fused ops (ag_mm, mm_rs) with collectives"},
  };
  for (const auto& [args, message] : cases) {
    const Out r = run(std::string("run --backend sim --timing-only ") + args);
    expect_one_line_error(r, args, message);
  }
}

// Fused operations are first-class on the simulator's command line: named by list and run's help,
// their baselines among the valid names, auto refused with its reason.
TEST(CliFusedSim, ListAndHelpNameTheFusedOps) {
  const Out l = run("list");
  ASSERT_EQ(l.code, 0) << l.out;
  for (const symm::FusedAlgo& a : symm::fused_algorithms()) {
    EXPECT_NE(l.out.find(a.id), std::string::npos) << a.id << "\n" << l.out;
  }
  for (const char* s : {"ag_mm", "mm_rs", "cublaslt", "seq_coll_gemm"})
    EXPECT_NE(l.out.find(s), std::string::npos) << s << "\n" << l.out;
  for (const char* help : {"run --help", "sweep --help"}) {
    const Out h = run(help);
    EXPECT_EQ(h.code, 0) << h.out;
    for (const char* s : {"ag_mm", "mm_rs"}) EXPECT_NE(h.out.find(s), std::string::npos) << help << ": " << s;
  }
}

TEST(CliFusedSim, ValidNamesIncludeTheBaselinesAndAutoSaysWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"run --op ag_mm --algo bogus --shape 8b", "cublaslt, seq_coll_gemm"},
      {"sweep --op mm_rs --algo bogus --shape 8b --timing-only", "cublaslt, seq_coll_gemm"},
      {"run --op mm_rs --algo auto --shape 8b", "--algo auto: no table chooses among mm_rs algorithms"},
      {"sweep --op ag_mm --algo auto --shape 8b --timing-only", "--algo auto: no table chooses among ag_mm"},
  };
  for (const auto& [args, message] : cases) expect_one_line_error(run(args), args, message);
  // A baseline named in a sweep's --algo runs (once, beside the others unless --no-baselines).
  const std::string csv = ::testing::TempDir() + "fused_named_baseline.csv";
  for (const bool baselines : {false, true}) {
    const Out s = run("sweep --op ag_mm --shape 8b --m 4096 --algo ce,cublaslt --timing-only --quiet --csv " + csv +
                      (baselines ? "" : " --no-baselines"));
    ASSERT_EQ(s.code, 0) << s.out;
    const std::string rows = slurp(csv);
    int alone = 0, seq = 0;
    for (std::size_t at = rows.find(",cublaslt,"); at != std::string::npos; at = rows.find(",cublaslt,", at + 1))
      ++alone;
    for (std::size_t at = rows.find(",seq_coll_gemm,"); at != std::string::npos;
         at = rows.find(",seq_coll_gemm,", at + 1))
      ++seq;
    EXPECT_EQ(alone, 1) << rows;
    EXPECT_EQ(seq, baselines ? 1 : 0) << rows;
  }
}

// A data-mode fused run this host cannot afford is refused before it starts, as a collective's is
// (issue 22: mm_rs 70b M=16384 ran > 300 s at 3.3 GB with no output).
TEST(CliFusedSim, DataRunsTooLargeAreRefusedUpFront) {
  const std::pair<const char*, const char*> cases[] = {
      {"run --op mm_rs --algo ce --shape 70b --m 262144", "add --timing-only"},
      {"sweep --op ag_mm --shape 70b --m 262144 --quiet", "add --timing-only"},
  };
  for (const auto& [args, message] : cases) expect_one_line_error(run(args), args, message);
}

// run --csv: one row in the one schema, for a collective and a fused op alike; fused rows carry
// their collective's nccl-tests bandwidths (ag_mm: all_gather of A, mm_rs: reduce_scatter of C).
TEST(CliFusedSim, RunCsvForFusedOpsAndCollectivesAlike) {
  const std::string dir = ::testing::TempDir();
  const std::string coll = dir + "run_coll.csv", fused = dir + "run_fused.csv";
  Out r = run("run --algo one_shot --bytes 4K --csv " + coll);
  ASSERT_EQ(r.code, 0) << r.out;
  r = run("run --op mm_rs --algo ce --world 4 --n 128 --k 192 --m 384 --csv " + fused);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream a(coll), b(fused);
  std::string ha, hb, row_a, row_b, extra;
  std::getline(a, ha), std::getline(b, hb), std::getline(a, row_a), std::getline(b, row_b);
  EXPECT_EQ(ha, hb);
  EXPECT_NE(row_a.find(",all_reduce,all_reduce.ld_reduce,bf16,4096,"), std::string::npos) << row_a;
  EXPECT_NE(row_b.find(",mm_rs,mm_rs.gemm_ce_ring_reduce,bf16,"), std::string::npos) << row_b;
  EXPECT_FALSE(std::getline(a, extra) || std::getline(b, extra));
  // Both refuse what the schema cannot record, in the same words.
  const Out c = run("run --algo one_shot --bytes 4K --reduce max --csv " + coll);
  expect_one_line_error(c, "run --reduce max --csv", "--reduce max cannot go with --csv");
  const Out f = run("run --op ag_mm --algo ce --n 128 --k 192 --m 384 --chunk-rows 16 --csv " + fused);
  expect_one_line_error(f, "run --chunk-rows --csv", "--chunk-rows 16 cannot go with --csv");
}

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  for (std::string f; std::getline(s, f, ',');) out.push_back(f);
  return out;
}

TEST(CliFusedSim, FusedRowsHaveTheirCollectivesBandwidths) {
  const std::string csv = ::testing::TempDir() + "fused_bw.csv";
  const Out s = run("sweep --op ag_mm,mm_rs --shape 8b --m 4096 --world 4 --timing-only --quiet --csv " + csv);
  ASSERT_EQ(s.code, 0) << s.out;
  std::ifstream f(csv);
  std::string line;
  std::getline(f, line);
  const std::vector<std::string> h = fields(line);
  auto col = [&](const char* name) { return std::size_t(std::find(h.begin(), h.end(), name) - h.begin()); };
  int n = 0;
  while (std::getline(f, line)) {
    const std::vector<std::string> v = fields(line);
    const bool ag = v[col("op")] == "ag_mm";
    const double bytes = std::stod(v[col("bytes")]), t = std::stod(v[col("time_us_median")]);
    EXPECT_EQ(bytes, ag ? 4096.0 * 4096 * 2 : 4096.0 * 1792 * 2) << line;  // A gathered / C reduced
    const double algbw = bytes / (t * 1e3);
    EXPECT_NEAR(std::stod(v[col("algbw_GBps")]), algbw, 1e-3 + 1e-3 * algbw) << line;
    EXPECT_NEAR(std::stod(v[col("busbw_GBps")]), algbw * 3 / 4, 1e-3 + 1e-3 * algbw) << line;
    ++n;
  }
  EXPECT_EQ(n, 17);  // ag_mm: 4 + 3 baselines; mm_rs: 7 + 3
}

// A fused sweep says what it is doing, row by row, on stderr (unless --quiet).
TEST(CliFusedSim, SweepPrintsProgressPerRow) {
  const std::string args = "sweep --op ag_mm --shape 8b --m 4096,8192 --timing-only";
  // run_command adds 2>&1 after the group: stderr to the test, stdout away.
  Out s = run_command("{ " + std::string(SYMMCOLL_BIN) + " " + args + " >/dev/null; }");
  ASSERT_EQ(s.code, 0) << s.out;
  int progress = 0;
  for (std::size_t at = s.out.find("sweep: ["); at != std::string::npos; at = s.out.find("sweep: [", at + 1))
    ++progress;
  EXPECT_EQ(progress, 14) << s.out;
  EXPECT_NE(s.out.find("sweep: [14/14] ag_mm 8b M=8192 ag_mm.ce_tile_gemm"), std::string::npos) << s.out;
  s = run_command("{ " + std::string(SYMMCOLL_BIN) + " " + args + " --quiet >/dev/null; }");
  EXPECT_EQ(s.code, 0) << s.out;
  EXPECT_EQ(s.out, "");
}

// The float64 check of a large product covers a sample of rows and says so.
TEST(CliFusedSim, RunSaysWhichRowsItChecked) {
  Out r = run("run --op ag_mm --algo ce --world 4 --n 128 --k 192 --m 384");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("all 1536 rows of C (4 ranks) checked against float64"), std::string::npos) << r.out;
  r = run("run --op mm_rs --algo st --world 4 --shape 8b --m 4096");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("rows of C (4 ranks) checked against float64 (a sample"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("every row scanned for unwritten values"), std::string::npos) << r.out;
}
