// `--algo auto` as users meet it: run and sweep print the choice and why, the CSV row names the
// chosen algorithm, and a machine without a table takes the simulator's choice (cached).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/apps/cli_run.h"

namespace {

std::string sh(const std::string& cmd, int* code) {
  const symm_test::Out r = symm_test::run_command(cmd);
  *code = r.code;
  return r.out;
}

// The committed table's algorithm and blocks for one key (experiments/auto/<machine>.csv).
std::string table_entry(const std::string& machine, const std::string& key) {
  std::ifstream f(std::string(SYMM_SOURCE_DIR) + "/experiments/auto/" + machine + ".csv");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) {
      std::stringstream ss(line.substr(key.size()));
      std::string algo, blocks;
      std::getline(ss, algo, ',');
      std::getline(ss, blocks, ',');
      return algo + " at blocks=" + blocks;
    }
  return "(no row " + key + ")";
}

TEST(CliAuto, RunPrintsTheMeasuredChoice) {
  int code = 0;
  const std::string out =
      sh(std::string(SYMMCOLL_BIN) + " run --machine h200x4 --algo auto --bytes 1M --timing-only", &code);
  EXPECT_EQ(code, 0) << out;
  const std::string want = "auto: all_reduce 1M: " + table_entry("h200x4", "all_reduce,4,bf16,1,1048576,");
  EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
  EXPECT_NE(out.find("measured on h200x4"), std::string::npos) << out;
}

TEST(CliAuto, SweepRowsNameTheChosenAlgorithm) {
  const std::string csv = ::testing::TempDir() + "symmcoll_auto_sweep.csv";
  int code = 0;
  const std::string out = sh(std::string(SYMMCOLL_BIN) + " sweep --machine h200x8 --op all_gather --algo auto " +
                                 "--sizes 4K,256M --timing-only -q --csv " + csv,
                             &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("simulated with machine file h200x8"), std::string::npos) << out;
  std::ifstream f(csv);
  std::string header, row;
  std::getline(f, header);
  int rows = 0;
  for (const std::string size : {"4096", "268435456"}) {
    ASSERT_TRUE(std::getline(f, row)) << out;
    ++rows;
    const std::string entry = table_entry("h200x8", "all_gather,8,bf16,1," + size + ",");
    const std::string algo = entry.substr(0, entry.find(' '));
    EXPECT_NE(row.find(",all_gather," + algo + ","), std::string::npos) << row << " want " << entry;
    EXPECT_EQ(row.find("auto"), std::string::npos) << row;
  }
  EXPECT_EQ(rows, 2);
}

// A machine file without a table (here a copy of h200x4.ini under another name) takes the
// simulator's choice, not a fixed rule: the fastest of the op's algorithms that need no multicast,
// as `sweep --algo all --timing-only` on the same file predicts them; the second call reads it
// from the cache.
TEST(CliAuto, MachineWithoutTableTakesTheSimulatorsChoice) {
  const std::string dir = ::testing::TempDir() + "symm_auto_cache_test";
  const std::string ini = ::testing::TempDir() + "symm_untabled.ini";
  ASSERT_EQ(
      std::system(("rm -rf " + dir + " && cp " SYMM_SOURCE_DIR "/experiments/machines/h200x4.ini " + ini).c_str()), 0);
  const std::string csv = ::testing::TempDir() + "symm_untabled_all.csv";
  int code = 0;
  std::string out =
      sh(std::string(SYMMCOLL_BIN) + " sweep --machine " + ini + " --sizes 1M --algo all --timing-only -q --csv " + csv,
         &code);
  ASSERT_EQ(code, 0) << out;
  std::ifstream f(csv);
  std::string line, best;
  double best_us = 1e300;
  std::getline(f, line);
  std::vector<std::string> head;
  {
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) head.push_back(c);
  }
  const auto col = [&](const std::string& name) {
    return std::size_t(std::find(head.begin(), head.end(), name) - head.begin());
  };
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) c.push_back(x);
    const std::string algo = c.at(col("algo"));
    if (algo.find(".mc_") != std::string::npos) continue;  // needs multicast: never auto's
    const double us = std::stod(c.at(col("time_us_median")));
    if (us < best_us) best_us = us, best = algo;
  }
  ASSERT_FALSE(best.empty());
  const std::string cmd = "SYMM_AUTO_DIR=/nonexistent XDG_CACHE_HOME=" + dir + " " + std::string(SYMMCOLL_BIN) +
                          " run --machine " + ini + " --algo auto --bytes 1M --timing-only";
  out = sh(cmd, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("auto: all_reduce 1M: " + best +
                     " at its default block count; no table for machine "
                     "symm_untabled: the simulator's fastest"),
            std::string::npos)
      << best << "\n"
      << out;
  EXPECT_NE(out.find("simulated now"), std::string::npos) << out;
  out = sh(cmd, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("auto: all_reduce 1M: " + best), std::string::npos) << out;
  EXPECT_NE(out.find("cached in " + dir), std::string::npos) << out;
}

TEST(CliAuto, BlocksBesideAutoIsRefused) {
  int code = 0;
  const std::string out = sh(std::string(SYMMCOLL_BIN) + " run --algo auto --blocks 4 --bytes 1M", &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_EQ(out, "symmcoll: error: --blocks 4 with --algo auto: auto runs the block count its table chose\n");
}

}  // namespace
