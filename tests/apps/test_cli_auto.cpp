// `--algo auto` as users meet it: run and sweep print the choice and why, the CSV row names the
// chosen algorithm, and a machine without a table takes the documented rule.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

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

TEST(CliAuto, MachineWithoutTableTakesTheRule) {
  const std::string ini = ::testing::TempDir() + "symm_untabled.ini";
  ASSERT_EQ(std::system(("cp " SYMM_SOURCE_DIR "/experiments/machines/h200x4.ini " + ini).c_str()), 0);
  int code = 0;
  const std::string out = sh("SYMM_AUTO_DIR=/nonexistent " + std::string(SYMMCOLL_BIN) + " run --machine " + ini +
                                 " --algo auto --bytes 64M --timing-only",
                             &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("auto: all_reduce 64M: all_reduce.rs_ld_ag_st at its default block count; no auto table for "
                     "machine 'symm_untabled'; rule: the bandwidth program"),
            std::string::npos)
      << out;
}

TEST(CliAuto, BlocksBesideAutoIsRefused) {
  int code = 0;
  const std::string out = sh(std::string(SYMMCOLL_BIN) + " run --algo auto --blocks 4 --bytes 1M", &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_EQ(out, "symmcoll: error: --blocks 4 with --algo auto: auto runs the block count its table chose\n");
}

}  // namespace
