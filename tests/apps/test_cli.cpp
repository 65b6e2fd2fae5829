// The symmcoll binary's contract with its users: bad input gets one `symmcoll: error:` line
// and exit code 2; good input runs. Each case runs the real binary (SYMMCOLL_BIN).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/registry.h"
#include "core/result.h"
#include "tests/apps/cli_run.h"

namespace {

using namespace symm_test;

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
    {"run --algo one_shot --world 1 --bytes 4K", "--world 1 is outside"},
    {"run --algo one_shot --world 65 --bytes 4K", "--world 65 is outside"},
    // A team machine (its ranks share its GPUs) has no default world.
    {"run --machine h200x1 --algo one_shot --bytes 4K", "--world: machine h200x1 is an in-process team"},
    {"run --machine h200x1 --op ag_mm --algo ce --shape 8b --m 4096", "give --world N"},
    {"run --machine h200x1 --world 2 --algo multimem --bytes 4K --timing-only", "no switch between them"},
    {"run --algo one_shot --bytes 1000", "bytes=1000 is not a multiple of 16"},
    {"run --op all_gather --algo push --world 4 --bytes 4112", "not a multiple of 64"},
    {"run --algo one_shot --bytes 0", "bytes=0"},
    {"run --algo one_shot --bytes 4Q", "malformed size '4Q'"},
    {"run --algo one_shot --bytes 1MBx", "malformed size '1MBx'"},
    {"run --algo one_shot_push --bytes 16M", "exceeds all_reduce.st_reduce's maximum"},
    {"run --algo one_shot --bytes 4K --blocks 100000", "blocks=100000"},
    {"run --algo one_shot --bytes 4K --blocks -3", "--blocks -3 is negative"},
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
    // Every error names the option it is about.
    {"run --op allreduce --algo one_shot --bytes 4K", "--op: unknown op 'allreduce'"},
    {"run --algo one_shot --dtype int8 --bytes 4K", "--dtype: unknown dtype"},
    {"run --algo one_shot --reduce prod --bytes 4K", "--reduce: unknown reduce op"},
    {"run --algo nope --bytes 4K", "--algo: unknown algorithm 'nope'"},
    {"run --algo one_shot --bytes 4Q", "--bytes: malformed size '4Q'"},
    {"run --machine no_such_machine --algo one_shot", "--machine: unknown machine"},
    {"run --algo one_shot --calls 0", "--calls 0 must be at least 1"},
    {"run --algo one_shot --mode both", "--mode: unknown launch mode 'both' (valid: graph, eager)"},
    {"sweep --check-up-to -1", "--check-up-to: malformed size '-1'"},
    {"sweep --sizes 4K:1K", "--sizes: bad size list"},
    {"sweep --algo one_shot,bogus", "--algo: unknown algorithm 'bogus'"},
    // Stray words are refused, naming the word and what it follows.
    {"run --algo one_shot --bytes 1M extra", "unexpected argument 'extra' after '--bytes 1M'"},
    {"run --algo one_shot --bytes 1 M", "unexpected argument 'M' after '--bytes 1'"},
    {"run extra --algo one_shot", "unexpected argument 'extra'"},
    {"run --algo one_shot --timing-only yes", "unexpected argument 'yes' after '--timing-only'"},
    {"sweep --sizes 4K 8K", "unexpected argument '8K' after '--sizes 4K'"},
    {"list extra", "unexpected argument 'extra'"},
    // One vocabulary: the old spellings are refused with the new one.
    {"run --algo one_shot --eager", "--eager was renamed --mode eager"},
    {"sweep --reduce-op max", "--reduce-op was renamed --reduce"},
    {"sweep --check-max 1M", "--check-max was renamed --check-up-to"},
    {"bench --backend sim --reduce-op=max", "--reduce-op was renamed --reduce"},
    {"bench --backend sim --no-check", "--no-check was renamed --timing-only"},
    // A barrier moves no data: a size, dtype or reduction for it is a mistake.
    {"run --op barrier --algo acq_rel --bytes 1M", "--bytes means nothing for a barrier"},
    {"run --op barrier --algo acq_rel --dtype fp32", "--dtype means nothing for a barrier"},
    // Data-mode runs this host cannot hold are refused up front, with the option to use.
    {"run --algo one_shot --bytes 64G", "add --timing-only"},
    {"sweep --algo one_shot --sizes 64G --check-up-to 64G --quiet", "lower --check-up-to"},
    // ... or that would take minutes (here: 100000 calls of 32M, each ~1 s on this host; a
    // broken estimate runs into the test's timeout instead).
    {"run --algo one_shot --bytes 32M --calls 100000", "in data mode would take about"},
    {"sweep --format csv", "--format: unknown format 'csv' (valid: table, nccl-tests)"},
    // Options that mean nothing for what runs are refused, not ignored: host-plan knobs for a
    // device program, a reduction for an all-gather, a dtype or size for a barrier.
    {"run --algo one_shot --streams 2", "--streams 2 means nothing for all_reduce.ld_reduce (one_shot)"},
    {"run --algo one_shot --chunk-bytes 4K", "--chunk-bytes 4K means nothing for all_reduce.ld_reduce (one_shot)"},
    {"run --op all_gather --algo push --streams 2", "it sets the host plans' streams (all_gather: ce, ce_sm)"},
    {"sweep --algo one_shot,two_shot --sizes 4K --streams 2", "--streams 2 means nothing for"},
    {"sweep --op all_reduce --sizes 4K --chunk-bytes 4K", "no all_reduce algorithm is a host plan"},
    {"run --op all_gather --algo push --reduce max", "--reduce means nothing for all_gather"},
    {"run --algo all_gather.st --reduce min", "--reduce means nothing for all_gather"},
    {"sweep --op all_gather --reduce max --sizes 4K", "--reduce means nothing for all_gather"},
    {"sweep --op barrier --dtype fp32", "--dtype means nothing for a barrier"},
    {"sweep --op barrier --reduce max", "--reduce means nothing for a barrier"},
    {"sweep --op barrier --sizes 4K:1M", "--sizes means nothing for a barrier"},
    // Whole option names only: a prefix is not guessed.
    {"run --mach h200x8 --algo one_shot --bytes 4K", "unrecognised option '--mach'"},
    {"run --algo one_shot --by 4K", "unrecognised option '--by'"},
    {"run --algo one_shot --m 384", "unrecognised option '--m'"},
    {"sweep --siz 4K", "unrecognised option '--siz'"},
    {"run --op ag_mm --algo ce --shape 8b --m 4096 --timing", "unrecognised option '--timing'"},
    {"sweep --op mm_rs --shape 8b --m 4096 --timing-only --no-base", "unrecognised option '--no-base'"},
    {"calibrate --backend sim --cs x.csv", "unrecognised option '--cs'"},
    {"fit --cal x.csv --out y.ini", "unrecognised option '--cal'"},
    {"list --mark", "unrecognised option '--mark'"},
    // Sizes are whole numbers of bytes, named once; seeds are not negative; a heap the simulator
    // cannot address says what to do.
    {"run --algo one_shot --bytes 1.5M",
     "--bytes: malformed size '1.5M': sizes are whole numbers of bytes (1.5M is 1536K)"},
    {"run --algo one_shot --bytes 1.3M", "--bytes: malformed size '1.3M': sizes are whole numbers of bytes"},
    {"sweep --sizes 4K,1M,4K", "--sizes: bad size list '4K,1M,4K': 4K appears twice"},
    {"sweep --sizes 4K,4096", "4096 appears twice"},
    {"run --algo one_shot --seed -5", "--seed '-5' is not a non-negative integer"},
    {"sweep --seed -1 --sizes 4K", "--seed '-1' is not a non-negative integer"},
    {"run --op mm_rs --algo ce --shape 8b --seed -5", "--seed '-5' is not a non-negative integer"},
    {"run --algo one_shot --bytes 64G --timing-only", "lower --bytes"},
    {"run --op ag_mm --algo cublaslt --shape 8b --chunk-rows 64 --timing-only",
     "--chunk-rows means nothing for the baselines"},
    {"sweep --op mm_rs --algo seq_coll_gemm --no-baselines --shape 8b --streams 2 --timing-only",
     "--streams means nothing for the baselines"},
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
  for (const char* cmd :
       {"--help", "run --help", "sweep --help", "list --help", "bench --help", "bench --backend sim --help"}) {
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

// Two sentences run together ("with zero errors.A build") read as a typo to every newcomer.
TEST(Cli, ReadmeSentencesAreSeparated) {
  std::ifstream f(SYMM_SOURCE_DIR "/README.md");
  ASSERT_TRUE(f) << "no README.md";
  int n = 0;
  for (std::string line; std::getline(f, line);) {
    ++n;
    for (std::size_t i = 1; i + 1 < line.size(); ++i)
      EXPECT_FALSE(std::islower(static_cast<unsigned char>(line[i - 1])) && line[i] == '.' &&
                   std::isupper(static_cast<unsigned char>(line[i + 1])))
          << "README.md:" << n << ": " << line;
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
  const Out r = symmcoll("run --algo reduce_scatter.ld_reduce --world 8 --machine h200x8 --bytes 1M --timing-only");
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
      {"bench --backend cuda --reduce max", "--reduce max cannot go with --csv"},
      {"bench --backend cuda --reduce min --op all_gather", "--reduce min cannot go with --csv"},
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
  const Out r = symmcoll("bench --backend cuda --reduce max --threads 256 --sizes 4K");
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
    if (line.empty()) break;  // the collectives' table ends; the fused matmuls have no such column
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

// `sweep --format nccl-tests` prints what nccl-tests users parse: one table per algorithm, rows of
// size, count, type, redop, root, time, algbw, busbw, #wrong, and the average bus bandwidth footer.
TEST(Cli, SweepPrintsTheNcclTestsTable) {
  const Out r =
      symmcoll("sweep --algo one_shot,two_shot --sizes 4K:64K:x4 --check-up-to 16K --quiet --format nccl-tests");
  ASSERT_EQ(r.code, 0) << r.out;
  std::istringstream in(r.out);
  std::string line;
  int tables = 0, rows = 0, checked = 0;
  double busbw_sum = 0;
  std::vector<std::size_t> sizes;
  while (std::getline(in, line)) {
    if (line.rfind("#       size         count      type   redop    root     time   algbw   busbw #wrong", 0) == 0)
      ++tables, rows = 0, busbw_sum = 0;
    if (line.rfind("# Avg bus bandwidth    : ", 0) == 0) {
      ASSERT_EQ(rows, 3) << r.out;
      EXPECT_NEAR(std::stod(line.substr(25)), busbw_sum / rows, 1e-3 * busbw_sum) << line;
    }
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::size_t size = 0, count = 0;
    std::string type, redop, root, wrong;
    double time = 0, algbw = 0, busbw = 0;
    ASSERT_TRUE(f >> size >> count >> type >> redop >> root >> time >> algbw >> busbw >> wrong) << line;
    EXPECT_EQ(count, size / 2) << line;
    EXPECT_EQ(type, "bfloat16");
    EXPECT_EQ(redop, "sum");
    EXPECT_EQ(root, "-1");
    EXPECT_NEAR(algbw, double(size) / (time * 1e3), 0.01 + 0.01 * algbw) << line;
    EXPECT_TRUE(wrong == "0" || wrong == "N/A") << line;
    checked += wrong == "0";
    if (tables == 1) sizes.push_back(size);
    busbw_sum += busbw;
    ++rows;
  }
  EXPECT_EQ(tables, 2) << r.out;
  EXPECT_EQ(sizes, (std::vector<std::size_t>{4096, 16384, 65536})) << r.out;
  EXPECT_EQ(checked, 4) << r.out;  // 4K and 16K of both algorithms
}

// The sweep's heading and footer say what it did: no reduction for an all-gather, no data kind
// for a barrier, and "data-checked up to" only the largest size that was checked.
TEST(Cli, SweepSaysWhatItChecked) {
  struct Case {
    const char* args;
    const char* heading;  // in the first line
    const char* footer;   // in the last line
  };
  const Case cases[] = {
      {"sweep --sizes 4K:16K --algo one_shot --quiet", "all_reduce, bf16 sum, graph", "data-checked up to 16K"},
      {"sweep --sizes 4K:64K --check-up-to 8K --algo one_shot --quiet", "bf16 sum", "data-checked up to 8K"},
      {"sweep --sizes 32K --check-up-to 8K --algo one_shot --quiet", "bf16 sum",
       "no row data-checked (every size is above --check-up-to 8K)"},
      {"sweep --sizes 4K --algo one_shot --timing-only --quiet", "bf16 sum", "timing-only: no row data-checked"},
      {"sweep --op all_gather --sizes 4K --algo push --quiet", "all_gather, bf16, graph", "data-checked up to 4K"},
      {"sweep --op barrier --quiet", "world 4, barrier, graph launch", "2 rows, 0 skipped, 0 failed\n"},
  };
  for (const Case& c : cases) {
    const Out r = symmcoll(c.args);
    ASSERT_EQ(r.code, 0) << c.args << "\n" << r.out;
    const std::string first = r.out.substr(0, r.out.find('\n'));
    const std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
    EXPECT_NE(first.find(c.heading), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_NE(last.find(c.footer), std::string::npos) << c.args << "\n" << r.out;
  }
}

// A sweep with nothing to run fails and leaves no CSV behind (an empty one would read as a
// run with no rows); so does a run whose trace path was probed but that then failed.
TEST(Cli, AFailedSweepLeavesNoCsv) {
  const std::string path = ::testing::TempDir() + "symmcoll_cli_empty.csv";
  std::remove(path.c_str());
  const Out r = symmcoll("sweep --algo one_shot_push --sizes 16M:32M --quiet --csv " + path);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("nothing to run"), std::string::npos) << r.out;
  EXPECT_FALSE(std::ifstream(path)) << path << " was left behind";
  const std::string trace = ::testing::TempDir() + "symmcoll_cli_failed_trace.json";
  std::remove(trace.c_str());
  const Out t = symmcoll("run --algo one_shot --bytes 64G --trace " + trace);
  EXPECT_EQ(t.code, 2) << t.out;
  EXPECT_FALSE(std::ifstream(trace)) << trace << " was left behind";
}

// A barrier run prints what a barrier has: latency, no dtype, size, bandwidth or error bound.
TEST(Cli, BarrierRunPrintsNoDataLines) {
  const Out r = symmcoll("run --op barrier --algo acq_rel");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("predicted latency"), std::string::npos) << r.out;
  for (const char* absent : {"bf16", "bytes", "busbw", "max rel error", "bound"})
    EXPECT_EQ(r.out.find(absent), std::string::npos) << absent << " in:\n" << r.out;
}

// --mode eager charges the eager launch latency (the renamed --eager).
TEST(Cli, ModeEagerIsSlowerThanGraph) {
  const Out g = symmcoll("run --algo one_shot --bytes 4K --timing-only --mode graph");
  const Out e = symmcoll("run --algo one_shot --bytes 4K --timing-only --mode eager");
  ASSERT_EQ(g.code, 0) << g.out;
  ASSERT_EQ(e.code, 0) << e.out;
  EXPECT_NE(e.out.find("eager launch"), std::string::npos) << e.out;
  auto latency = [](const std::string& out) {
    const std::size_t at = out.find("predicted latency");
    return at == std::string::npos ? 0.0 : std::stod(out.substr(at + 17));
  };
  EXPECT_GT(latency(e.out), latency(g.out)) << g.out << e.out;
}

// The CUDA bench speaks the same vocabulary (option parsing needs no GPU).
TEST(Cli, BenchCudaRefusesOldSpellings) {
  const Out probe = symmcoll("launch --help");
  if (probe.out.find("no CUDA backend") != std::string::npos) GTEST_SKIP() << "this build has no CUDA";
  const std::pair<const char*, const char*> cases[] = {
      {"bench --backend cuda --reduce-op max", "--reduce-op was renamed --reduce"},
      {"bench --backend cuda --check-max 1M", "--check-max was renamed --check-up-to"},
      {"bench --backend cuda --no-check", "--no-check was renamed --timing-only"},
      {"bench --backend cuda --sizes 4K extra", "unexpected argument 'extra' after '--sizes 4K'"},
      {"bench --backend cuda --mode sometimes", "--mode: unknown launch mode 'sometimes'"},
      {"bench --backend cuda --sizes 4Q", "--sizes: "},
      {"bench --backend cuda --format nccl", "--format: unknown format 'nccl'"},
  };
  for (const auto& [args, message] : cases) {
    const Out r = symmcoll(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind(std::string("symmcoll: error: ") + message, 0), 0u) << args << "\n" << r.out;
    EXPECT_EQ(lines(r.out), 1) << r.out;
  }
}

// On a host without a usable GPU, launching the CUDA bench is one line, not one error per rank.
TEST(Cli, NoGpuIsOneLine) {
  const Out probe = symmcoll("launch --help");
  if (probe.out.find("no CUDA backend") != std::string::npos) GTEST_SKIP() << "this build has no CUDA";
  if (std::system("nvidia-smi -L >/dev/null 2>&1") == 0) GTEST_SKIP() << "this host has a GPU";
  for (const char* args :
       {"launch -n 2 -- symmcoll bench --backend cuda --sizes 4K", "bench --backend cuda --sizes 4K"}) {
    const Out r = symmcoll(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("symmcoll: error: no CUDA device", 0), 0u) << args << "\n" << r.out;
    EXPECT_EQ(lines(r.out), 1) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find(".cpp:"), std::string::npos) << r.out;  // no source paths
  }
}

// `symmcoll` hands the CUDA commands to symmcoll-cuda beside it (apps/CMakeLists.txt): a copy
// without it says so in one line instead of running anything.
TEST(Cli, CudaCommandsNeedTheCudaProgramBeside) {
  const std::string bin = SYMMCOLL_BIN;
  const std::string cuda = bin.substr(0, bin.rfind('/') + 1) + "symmcoll-cuda";
  if (!std::ifstream(cuda)) GTEST_SKIP() << "this build has no CUDA backend";
  const std::string dir = ::testing::TempDir() + "symmcoll_alone";
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir + " && cp " + bin + " " + dir + "/").c_str()), 0);
  for (const char* args :
       {"bench --backend cuda --sizes 4K", "launch -n 2 -- true", "calibrate --backend cuda --csv x"})
    expect_one_line_error(run_command(dir + "/symmcoll " + args), args, "symmcoll-cuda, which is not beside");
}

// gemm-bench's schedule options are parsed before any GPU is touched: a bad one is one line.
TEST(Cli, GemmBenchScheduleOptions) {
  const std::string bin = SYMMCOLL_BIN;
  if (!std::ifstream(bin.substr(0, bin.rfind('/') + 1) + "symmcoll-cuda")) GTEST_SKIP() << "no CUDA backend";
  const Out help = symmcoll("gemm-bench --help");
  EXPECT_EQ(help.code, 0) << help.out;
  for (const char* s : {"--schedule arg (=auto)", "coop", "pingpong", "--tile-m"})
    EXPECT_NE(help.out.find(s), std::string::npos) << s << "\n" << help.out;
  const std::pair<const char*, const char*> cases[] = {
      {"gemm-bench --schedule bogus", "--schedule: unknown 'bogus' (valid: auto, coop, pingpong)"},
      {"gemm-bench --schedule ping-pong", "--schedule: unknown 'ping-pong'"},
      {"gemm-bench --tile-m 96", "--tile-m 96: valid 0, 64, 128"},
      {"gemm-bench --schedule coop --tile-m 64", "the coop schedule has no tile 64"},
      {"gemm-bench --schedule pingpong --tile-m 128 --tile-n 256", "the pingpong schedule has no tile 128 x 256"},
  };
  for (const auto& [args, message] : cases) expect_one_line_error(symmcoll(args), args, message);
}

TEST(Cli, CudaCommandsExplainWhenMissing) {
  // Meaningful only in a build without the CUDA backend; skip when the binary has it.
  const Out r = symmcoll("launch -n 2 -- true");
  if (r.out.find("no CUDA backend") == std::string::npos) GTEST_SKIP() << "this build has CUDA";
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.out), 1) << r.out;
}

// ---- machine files: found by an installed or moved binary ---------------------------------

// A copy of the binary in <prefix>/bin finds <prefix>/share/symmcoll/machines, and
// SYMM_MACHINES_DIR names another directory; neither is the source tree the build knows.
TEST(Machines, FoundNextToAMovedBinaryAndThroughTheEnvironment) {
  const std::string prefix = ::testing::TempDir() + "symmcoll_moved";
  ASSERT_EQ(std::system(("rm -rf " + prefix + " && mkdir -p " + prefix + "/bin " + prefix +
                         "/share/symmcoll/machines " + prefix + "/env")
                            .c_str()),
            0);
  ASSERT_EQ(std::system(("cp " + std::string(SYMMCOLL_BIN) + " " + prefix + "/bin/symmcoll").c_str()), 0);
  const std::string ini = slurp(SYMM_SOURCE_DIR "/experiments/machines/h200x4.ini");
  ASSERT_FALSE(ini.empty());
  std::ofstream(prefix + "/share/symmcoll/machines/installed_box.ini") << ini;
  std::ofstream(prefix + "/env/env_box.ini") << ini;
  const std::string args = " run --algo one_shot --bytes 4K --timing-only --machine ";
  auto run = [&](const std::string& env, const std::string& machine) {
    Out r;
    const std::string cmd = env + prefix + "/bin/symmcoll" + args + machine + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf;
    for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
    const int st = pclose(p);
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
  };
  Out r = run("", "installed_box");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sim installed_box"), std::string::npos) << r.out;
  r = run("SYMM_MACHINES_DIR=" + prefix + "/env ", "env_box");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sim env_box"), std::string::npos) << r.out;
  r = run("", "env_box");  // not without the variable
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown machine 'env_box'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("installed_box"), std::string::npos) << r.out;  // listed as available
}

// ---- experiments/keep_if_same.sh: a rerun whose data did not change keeps its files -----------

TEST(KeepIfSame, OnlyProvenanceChangedKeepsTheOldFiles) {
  const std::string dir = ::testing::TempDir() + "symmcoll_keep";
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  const std::string csv = dir + "/r.csv", txt = dir + "/r.txt";
  const std::string script = SYMM_SOURCE_DIR "/experiments/keep_if_same.sh " + csv + " " + txt + " >/dev/null";
  std::ofstream(csv) << "backend,bytes,time_us_median,git_sha\nsim,4096,6.333,0fd0f84e1d6c\n";
  std::ofstream(txt) << "# symmcoll sweep: sim h200x4, git 0fd0f84e1d6c\n  4096  6.333\n";
  // Another commit, same data: both files stay as they were.
  std::ofstream(csv + ".tmp") << "backend,bytes,time_us_median,git_sha\nsim,4096,6.333,8f16a672f359-dirty\n";
  std::ofstream(txt + ".tmp") << "# symmcoll sweep: sim h200x4, git 8f16a672f359-dirty\n  4096  6.333\n";
  ASSERT_EQ(std::system(script.c_str()), 0);
  EXPECT_NE(slurp(csv).find("0fd0f84e1d6c"), std::string::npos) << slurp(csv);
  EXPECT_NE(slurp(txt).find("0fd0f84e1d6c"), std::string::npos) << slurp(txt);
  EXPECT_FALSE(std::ifstream(csv + ".tmp")) << "the new version is left behind";
  // A changed number in the CSV only: both files are replaced, so they stay one run.
  std::ofstream(csv + ".tmp") << "backend,bytes,time_us_median,git_sha\nsim,4096,6.400,8f16a672f359\n";
  std::ofstream(txt + ".tmp") << "# symmcoll sweep: sim h200x4, git 8f16a672f359\n  4096  6.333\n";
  ASSERT_EQ(std::system(script.c_str()), 0);
  EXPECT_NE(slurp(csv).find("6.400,8f16a672f359"), std::string::npos) << slurp(csv);
  EXPECT_NE(slurp(txt).find("git 8f16a672f359"), std::string::npos) << slurp(txt);
  // A changed number in the table only counts too.
  std::ofstream(csv + ".tmp") << "backend,bytes,time_us_median,git_sha\nsim,4096,6.400,aaaaaaaaaaaa\n";
  std::ofstream(txt + ".tmp") << "# symmcoll sweep: sim h200x4, git aaaaaaaaaaaa\n  4096  7.000\n";
  ASSERT_EQ(std::system(script.c_str()), 0);
  EXPECT_NE(slurp(txt).find("7.000"), std::string::npos) << slurp(txt);
}

}  // namespace
