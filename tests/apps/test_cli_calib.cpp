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

namespace {

struct Out {
  int code = -1;
  std::string out;
};

Out symmcoll(const std::string& args) {
  const std::string cmd = std::string(SYMMCOLL_BIN) + " " + args + " 2>&1";
  Out r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The latency line of `run`.
std::string latency(const std::string& machine) {
  const Out r = symmcoll("run --machine " + machine + " --world 4 --algo two_shot --bytes 1M --timing-only");
  EXPECT_EQ(r.code, 0) << r.out;
  const auto at = r.out.find("predicted latency");
  return at == std::string::npos ? "" : r.out.substr(at, r.out.find('\n', at) - at);
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
  EXPECT_NE(first.find("flag_latency_us = 1.34  # pingpong_relaxed"), std::string::npos) << first;
  EXPECT_EQ(latency(ini), latency("h200x4"));
  // Deterministic: the same rows give the same bytes.
  r = symmcoll("fit --calibration " + csv + " --out " + ini + " --base " + src);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(slurp(ini), first);
}

TEST(CliCalib, BadInputIsOneLineAndExit2) {
  const std::string dir = testing::TempDir();
  const struct {
    std::string args, message;
  } cases[] = {
      {"calibrate --backend tpu --csv " + dir + "x.csv", "--backend 'tpu'"},
      {"calibrate --backend sim --machine nope --csv " + dir + "x.csv", "--machine"},
      {"fit --calibration " + dir + "missing.csv --out " + dir + "o.ini --base " + std::string(SYMM_SOURCE_DIR) +
           "/experiments/machines/h200x4.ini",
       "--calibration"},
      {"fit --calibration " + dir + "missing.csv --out " + dir + "nothing_here.ini", "--base"},
      {"fit --calibration " + dir + "missing.csv --out " + dir + "o.ini --keys 'gem_*'", "--keys: 'gem_*' names no"},
  };
  for (const auto& c : cases) {
    const Out r = symmcoll(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("symmcoll: error: ", 0), 0u) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << "\n" << r.out;
  }
}

}  // namespace
