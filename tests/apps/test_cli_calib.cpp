// symmcoll calibrate --backend sim and symmcoll fit as users meet them: the rows a machine file
// predicts, fitted back into a machine file the simulator loads and predicts the same with;
// bad input is one line and exit 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/apps/cli_run.h"

namespace {

using namespace symm_test;

// The predicted latency of `run`, us (-1: none printed).
double latency(const std::string& machine) {
  const Out r = symmcoll("run --machine " + machine + " --world 4 --algo two_shot --bytes 1M --timing-only");
  EXPECT_EQ(r.code, 0) << r.out;
  const auto at = r.out.find("predicted latency");
  return at == std::string::npos ? -1 : std::stod(r.out.substr(at + std::string("predicted latency").size()));
}

TEST(CliCalib, CalibrateThenFitGivesAMachineThatPredictsTheSame) {
  const std::string dir = testing::TempDir(), csv = dir + "cal_h4.csv", ini = dir + "fit_h4.ini";
  const std::string src = std::string(SYMM_SOURCE_DIR) + "/experiments/machines/h200x4.ini";
  Out r = symmcoll("calibrate --backend sim --machine h200x4 --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(slurp(csv).find("# command: symmcoll calibrate --backend sim --machine h200x4"), std::string::npos);
  r = symmcoll("fit --calibration " + csv + " --out " + ini + " --base " + src);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string first = slurp(ini);
  // h200x4.ini's flag latency (from its own calibration run), fitted back from the rows it predicts.
  const std::string shipped = slurp(src);
  const auto at = shipped.find("\nflag_latency_us = ");
  ASSERT_NE(at, std::string::npos) << shipped;
  const std::string value = shipped.substr(at + 1, shipped.find("  #", at) - at - 1);  // "flag_latency_us = X"
  EXPECT_NE(first.find(value + "  # pingpong_relaxed"), std::string::npos) << value << "\n" << first;
  // The same prediction to 0.01 %: the rows are not exactly the model's straight lines (a block's
  // local load wait, local_load_us, makes the scatter rows' intercepts differ by ~0.05 us between
  // sizes, so the egress rate comes back 0.02 % off).
  const double want = latency("h200x4");
  ASSERT_GT(want, 0);
  EXPECT_NEAR(latency(ini), want, 1e-4 * want);
  // Deterministic: the same rows give the same bytes.
  r = symmcoll("fit --calibration " + csv + " --out " + ini + " --base " + src);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(slurp(ini), first);
}

TEST(CliCalib, BadInputIsOneLineAndExit2) {
  const std::string dir = testing::TempDir();
  ASSERT_EQ(symmcoll("calibrate --backend sim --csv " + dir + "cal_bad_input.csv").code, 0);
  const struct {
    std::string args, message;
  } cases[] = {
      {"calibrate --backend tpu --csv " + dir + "x.csv", "--backend 'tpu'"},
      {"calibrate --backend sim --machine nope --csv " + dir + "x.csv", "--machine"},
      {"fit --calibration " + dir + "missing.csv --out " + dir + "o.ini --base " + std::string(SYMM_SOURCE_DIR) +
           "/experiments/machines/h200x4.ini",
       "--calibration"},
      // The rows are read first: a missing or garbage --calibration is named, not --base.
      {"fit --calibration " + dir + "missing.csv --out " + dir + "nothing_here.ini", "--calibration"},
      {"fit --calibration " + std::string(SYMM_SOURCE_DIR) + "/README.md --out " + dir + "nothing_here.ini",
       "--calibration"},
      {"fit --calibration " + dir + "cal_bad_input.csv --out " + dir + "nothing_here.ini", "--base"},
      {"fit --calibration " + dir + "missing.csv --out " + dir + "o.ini --keys 'gem_*'", "--keys: 'gem_*' names no"},
  };
  for (const auto& c : cases) {
    expect_one_line_error(symmcoll(c.args), c.args, c.message);
  }
}

}  // namespace
