// `symmcoll bench --backend cuda --op ag_mm,mm_rs`: bad shapes and options get one
// `symmcoll: error:` line and exit 2 before any GPU is touched (the shape check runs as soon as
// the world size is known: WORLD_SIZE=2 stands in for `symmcoll launch -n 2`).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <utility>

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
  EXPECT_EQ(n, 10);  // (three algorithms + the two baselines) x two M
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
      base_rows += line.find(",cublaslt,") != std::string::npos || line.find(",seq_coll_gemm,") != std::string::npos;
    }
    // Per shape: ag_mm's three algorithms and mm_rs's three (+ two baselines each).
    const int ag = baselines ? 5 : 3, rs = baselines ? 5 : 3;
    EXPECT_EQ(per_op["ag_mm"], 2 * ag) << s.out;
    EXPECT_EQ(per_op["mm_rs"], 2 * rs) << s.out;
    EXPECT_EQ(per_k["4096"], ag + rs) << s.out;  // 8b
    EXPECT_EQ(per_k["8192"], ag + rs) << s.out;  // 70b
    EXPECT_EQ(base_rows, baselines ? 8 : 0) << s.out;
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
