// The symmcoll binary's contract with its users: bad input gets one `symmcoll: error:` line
// and exit code 2; good input runs. Each case runs the real binary (SYMMCOLL_BIN).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "core/registry.h"
#include "core/result.h"

namespace {

struct Out {
  int code = -1;
  std::string out;  // stdout and stderr together, in order
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

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

struct BadInput {
  const char* args;
  const char* message;  // must appear in the single error line
};

class Cli : public ::testing::TestWithParam<BadInput> {};

TEST_P(Cli, BadInputIsOneLineAndExit2) {
  const Out r = symmcoll(GetParam().args);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("symmcoll: error: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(GetParam().message), std::string::npos) << r.out;
  EXPECT_EQ(lines(r.out), 1) << r.out;
}

const BadInput kBad[] = {
    {"frobnicate", "unknown command 'frobnicate'"},
    {"run --op all_reduce --algo nope --bytes 4K", "unknown algorithm 'nope'"},
    {"run --op allreduce --algo one_shot --bytes 4K", "unknown op 'allreduce'"},
    {"run --algo one_shot --dtype int8 --bytes 4K", "unknown dtype 'int8'"},
    {"run --algo one_shot --reduce prod --bytes 4K", "unknown reduce op 'prod'"},
    {"run --machine no_such_machine --algo one_shot --bytes 4K", "no_such_machine"},
    {"run --algo one_shot --world 1 --bytes 4K", "world=1"},
    {"run --algo one_shot --world 65 --bytes 4K", "world=65"},
    {"run --algo one_shot --bytes 1000", "bytes=1000 is not a multiple of 16"},
    {"run --op all_gather --algo push --world 4 --bytes 4112", "not a multiple of 64"},
    {"run --algo one_shot --bytes 0", "bytes=0"},
    {"run --algo one_shot --bytes 4Q", "malformed size '4Q'"},
    {"run --algo one_shot --bytes 1MBx", "malformed size '1MBx'"},
    {"run --algo one_shot_push --bytes 16M", "exceeds all_reduce.st_reduce's maximum"},
    {"run --algo one_shot --bytes 4K --blocks 100000", "blocks=100000"},
    {"run --algo one_shot --bytes 4K --blocks -3", "blocks=-3"},
    {"run --algo one_shot --bytes 4K --world abc", "'--world' is invalid"},
    {"run --algo one_shot --bytes 4K --trace /nonexistent-dir/t.json", "/nonexistent-dir/t.json"},
    {"run --algo one_shot --bytes 4K --frobnicate", "unrecognised option '--frobnicate'"},
    {"run --bytes 4K", "'--algo' is required"},
    {"run --backend cuda --algo one_shot", "symmcoll bench --backend cuda"},
    {"run --op all_reduce --algo reduce_scatter.pull --bytes 4K", "contradicts"},
    {"sweep --sizes 4K:1K", "bad size list '4K:1K'"},
    {"sweep --sizes 4K:1M:x1", "step factor"},
    {"sweep --algo one_shot,bogus", "unknown algorithm 'bogus'"},
    {"sweep --algo one_shot_push --sizes 16M:32M --quiet", "nothing to run"},
    {"sweep --sizes 4K --csv /nonexistent-dir/out.csv", "/nonexistent-dir/out.csv"},
    // The CSV schema has no reduction column: a min row would read as a sum row.
    {"sweep --reduce min --algo one_shot --sizes 4K --csv /nonexistent-dir/out.csv",
     "--reduce min cannot go with --csv: the CSV schema (docs/design.md \"Results\") has no column for the "
     "reduction"},
    {"bench --backend sim --reduce max --algo one_shot --sizes 4K --csv /nonexistent-dir/out.csv",
     "--reduce max cannot go with --csv"},
    {"sweep --sizes 4K:1M:4", "the step must look like x2 or x4"},
    {"sweep --sizes 4K,,1M", "empty element"},
    {"list --bogus", "unrecognised option"},
    {"bench --backend tpu", "unknown backend 'tpu'"},
};
// Stable names ("run_bytes_4Q") instead of gtest's byte dump, which holds addresses and so
// would differ between the discovery run and the test run.
std::string case_name(const ::testing::TestParamInfo<BadInput>& info) {
  std::string name;
  for (const char* c = info.param.args; *c && name.size() < 60; ++c)
    name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
  return std::to_string(info.index) + "_" + name;
}
void PrintTo(const BadInput& b, std::ostream* os) { *os << "symmcoll " << b.args; }
INSTANTIATE_TEST_SUITE_P(BadInput, Cli, ::testing::ValuesIn(kBad), case_name);

TEST(Cli, BareCommandPrintsUsage) {
  const Out r = symmcoll("");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("usage: symmcoll <command>"), std::string::npos) << r.out;
}

TEST(Cli, HelpAtEveryLevel) {
  for (const char* cmd : {"--help", "run --help", "sweep --help", "list --help", "bench --help",
                          "bench --backend sim --help"}) {
    const Out r = symmcoll(cmd);
    EXPECT_EQ(r.code, 0) << cmd << "\n" << r.out;
    EXPECT_NE(r.out.find("usage:"), std::string::npos) << cmd << "\n" << r.out;
  }
}

TEST(Cli, ListShowsEveryRegistryId) {
  const Out r = symmcoll("list");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const symm::AlgoInfo& a : symm::algorithms()) {
    EXPECT_NE(r.out.find(a.id), std::string::npos) << a.id;
    EXPECT_NE(r.out.find(a.alias), std::string::npos) << a.alias;
  }
  const Out md = symmcoll("list --markdown");
  ASSERT_EQ(md.code, 0);
  EXPECT_EQ(lines(md.out), 2 + int(symm::algorithms().size()));
}

// README.md shows the algorithm table; it must stay what `symmcoll list --markdown` prints.
TEST(Cli, ReadmeAlgorithmTableMatchesRegistry) {
  const Out md = symmcoll("list --markdown");
  ASSERT_EQ(md.code, 0);
  std::ifstream f(SYMM_SOURCE_DIR "/README.md");
  ASSERT_TRUE(f) << "no README.md";
  const std::string readme((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::size_t start = 0;
  while (start < md.out.size()) {
    const std::size_t end = md.out.find('\n', start);
    const std::string line = md.out.substr(start, end - start);
    EXPECT_NE(readme.find(line), std::string::npos) << "README.md lacks: " << line;
    start = end == std::string::npos ? md.out.size() : end + 1;
  }
}

TEST(Cli, RunOnSimPrintsLatencyAndPasses) {
  const Out r = symmcoll(
      "run --backend sim --machine h200x4 --world 4 --op all_reduce --algo one_shot "
      "--dtype bf16 --bytes 64K");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("predicted latency"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("busbw"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
}

TEST(Cli, RunAcceptsFullIdAndTimingOnly) {
  const Out r =
      symmcoll("run --algo reduce_scatter.ld_reduce --world 8 --machine h200x8 --bytes 1M --timing-only");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("not checked (timing-only)"), std::string::npos) << r.out;
}

TEST(Cli, RunWritesTrace) {
  const std::string path = ::testing::TempDir() + "symmcoll_cli_trace.json";
  std::remove(path.c_str());
  const Out r = symmcoll("run --algo two_shot --bytes 64K --trace " + path);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream f(path);
  std::string first;
  ASSERT_TRUE(std::getline(f, first)) << "no trace at " << path;
  EXPECT_NE(first.find('{'), std::string::npos);
}

TEST(Cli, SweepCsvHasTheSchemaHeader) {
  const std::string path = ::testing::TempDir() + "symmcoll_cli_sweep.csv";
  std::remove(path.c_str());
  const Out r = symmcoll(
      "sweep --backend sim --machine h200x4 --op all_reduce --algo one_shot,two_shot "
      "--sizes 4K,64K --check-up-to 4K --csv " +
      path + " --quiet");
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream f(path);
  std::string header, line;
  ASSERT_TRUE(std::getline(f, header));
  EXPECT_EQ(header, symm::csv_header());
  int rows = 0, unchecked = 0;
  while (std::getline(f, line)) {
    ++rows;
    EXPECT_EQ(line.rfind("sim,h200x4,4,all_reduce,all_reduce.", 0), 0u) << line;
    unchecked += line.find(",-1,") != std::string::npos;
  }
  EXPECT_EQ(rows, 4);
  EXPECT_EQ(unchecked, 2);  // the 64K rows ran timing-only (above --check-up-to)
}

TEST(Cli, SweepSkipsUnsupportedCombinationsWithANote) {
  const Out r = symmcoll("sweep --algo one_shot_push,one_shot --sizes 4M:16M:x4 --timing-only");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: skip all_reduce.st_reduce 16M"), std::string::npos) << r.out;
}

TEST(Cli, BenchSimIsSweep) {
  const Out r = symmcoll("bench --backend sim --algo one_shot --sizes 4K --quiet");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("# symmcoll sweep"), std::string::npos) << r.out;
}

TEST(Cli, SweepShowsANonSumReductionWithoutCsv) {
  const Out r = symmcoll("sweep --reduce max --algo one_shot --sizes 4K --quiet");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("bf16 max"), std::string::npos) << r.out;
}

// The CUDA bench refuses the same before any rank starts (so no GPU is needed to test it).
TEST(Cli, BenchCudaRefusesUnrecordedOptionsWithCsv) {
  const Out probe = symmcoll("launch --help");
  if (probe.out.find("no CUDA backend") != std::string::npos) GTEST_SKIP() << "this build has no CUDA";
  const std::string csv = " --sizes 4K --csv " + ::testing::TempDir() + "symmcoll_cli_bench.csv";
  const std::pair<const char*, const char*> cases[] = {
      {"bench --backend cuda --reduce-op max", "--reduce-op max cannot go with --csv"},
      {"bench --backend cuda --reduce-op min --op all_gather", "--reduce-op min cannot go with --csv"},
      {"bench --backend cuda --threads 256", "--threads 256 cannot go with --csv"},
  };
  for (const auto& [args, message] : cases) {
    const Out r = symmcoll(args + csv);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind(std::string("symmcoll: error: ") + message, 0), 0u) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("no column for the"), std::string::npos) << r.out;
    EXPECT_EQ(lines(r.out), 1) << r.out;
  }
  // Without --csv they pass option parsing (and fail later only for want of ranks).
  const Out r = symmcoll("bench --backend cuda --reduce-op max --threads 256 --sizes 4K");
  EXPECT_EQ(r.out.find("cannot go with --csv"), std::string::npos) << r.out;
}

// `list` keeps its columns aligned whatever max_bytes prints ("1M per rank").
TEST(Cli, ListColumnsStayAligned) {
  const Out r = symmcoll("list");
  ASSERT_EQ(r.code, 0) << r.out;
  std::size_t start = 0, mcast_col = std::string::npos;
  while (start < r.out.size()) {
    const std::size_t end = r.out.find('\n', start);
    const std::string line = r.out.substr(start, end - start);
    start = end == std::string::npos ? r.out.size() : end + 1;
    if (mcast_col == std::string::npos) {
      mcast_col = line.find("mcast");
      ASSERT_NE(mcast_col, std::string::npos) << line;
      continue;
    }
    // The multicast column ("yes" / "no") starts where its header does, after a space.
    EXPECT_TRUE(line.compare(mcast_col, 3, "yes") == 0 || line.compare(mcast_col, 2, "no") == 0) << line;
    EXPECT_EQ(line[mcast_col - 1], ' ') << line;
  }
}

TEST(Cli, CudaCommandsExplainWhenMissing) {
  // Meaningful only in a build without the CUDA backend; skip when the binary has it.
  const Out r = symmcoll("launch -n 2 -- true");
  if (r.out.find("no CUDA backend") == std::string::npos) GTEST_SKIP() << "this build has CUDA";
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.out), 1) << r.out;
}

}  // namespace
