// The files of `bench --backend cuda --trace` (apps/harness/cuda/trace_parts.h), on the CPU: a
// rank's part as the simulator writes a trace, rank 0's merge of the parts, the file names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/harness/cuda/trace_parts.h"
#include "core/common.h"

namespace symm::cuda {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

class TraceParts : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("symm_trace_parts_" + std::to_string(::getpid()))).string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(TraceParts, MergesEveryRanksSpansIntoOneTraceAndRemovesTheParts) {
  prepare_trace_dir(dir_);
  const std::string path = trace_file(dir_, "mm_rs", "mm_rs.gemm_ce_acc", "bf16", "M16384_N3584_K8192");
  EXPECT_EQ(fs::path(path).filename(), "mm_rs.mm_rs.gemm_ce_acc.bf16.M16384_N3584_K8192.json");
  const std::vector<PlanSpan> r0 = {{0, "wait_flag", "\"slot\":7,\"value\":1", 1.0, 3.5},
                                    {0, "gemm", "\"m\":8,\"n\":8,\"k\":8", 3.5, 10.25},
                                    {1, "copy_engine", "\"bytes\":4096,\"from\":-1,\"to\":1", 4.0, 6.0}};
  const std::vector<PlanSpan> r1 = {{2, "launch", "\"blocks\":4", 0.5, 2.0}};
  write_rank_trace(trace_part(path, 0), 0, 0, r0, {{0.0, 12.0}});
  write_rank_trace(trace_part(path, 1), 1, 1, r1, {{0.0, 8.0}});
  merge_rank_traces(path, 2);
  EXPECT_FALSE(fs::exists(trace_part(path, 0)));
  EXPECT_FALSE(fs::exists(trace_part(path, 1)));
  const std::string t = slurp(path);
  ASSERT_EQ(t.rfind("{\"traceEvents\":[\n", 0), 0u) << t;
  EXPECT_NE(t.find("\n],\"displayTimeUnit\":\"ns\"}\n"), std::string::npos);
  // Every span and each rank's host span, on its rank's process and its stream's track.
  EXPECT_EQ(count(t, "\"ph\":\"X\""), r0.size() + r1.size() + 2);
  EXPECT_NE(t.find("\"name\":\"gemm\",\"ph\":\"X\",\"pid\":1,\"tid\":1000,\"ts\":3.500"), std::string::npos) << t;
  EXPECT_NE(t.find("\"name\":\"copy_engine\",\"ph\":\"X\",\"pid\":1,\"tid\":1001"), std::string::npos) << t;
  EXPECT_NE(t.find("\"name\":\"launch\",\"ph\":\"X\",\"pid\":2,\"tid\":1002"), std::string::npos) << t;
  EXPECT_NE(t.find("\"args\":{\"bytes\":4096,\"from\":-1,\"to\":1}"), std::string::npos);
  EXPECT_NE(t.find("rank 1 (GPU 1, measured)"), std::string::npos);
  // Parts joined by commas only: no empty element, no doubled separator.
  EXPECT_EQ(t.find(",\n,"), std::string::npos);
  EXPECT_EQ(t.find("[\n,"), std::string::npos);
  EXPECT_EQ(count(t, "}\n{"), 0u) << "two events without a comma between them";
}

TEST_F(TraceParts, AMissingOrForeignPartIsAnErrorNamingIt) {
  prepare_trace_dir(dir_);
  const std::string path = dir_ + "/x.json";
  write_rank_trace(trace_part(path, 0), 0, 0, {}, {{0.0, 1.0}});
  try {
    merge_rank_traces(path, 2);
    FAIL() << "merged without rank 1's part";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find(".rank1"), std::string::npos) << e.what();
  }
  std::ofstream(trace_part(path, 1)) << "not a trace\n";
  EXPECT_THROW(merge_rank_traces(path, 2), Error);
}

TEST_F(TraceParts, AGraphReplaysPartHasNoHostTrack) {
  prepare_trace_dir(dir_);
  const std::string path = dir_ + "/g.json";
  write_rank_trace(trace_part(path, 0), 0, 0,
                   {{0, "call", "\"call\":0", 0.0, 2.0}, {1, "copy_engine", "\"bytes\":16", 0.0, 1.0}}, {});
  merge_rank_traces(path, 1);
  const std::string t = slurp(path);
  EXPECT_EQ(count(t, "\"ph\":\"X\""), 2u) << t;
  EXPECT_EQ(t.find("enqueue"), std::string::npos) << t;
  // The call on the host track (the simulator's), before the copy that starts with it.
  EXPECT_NE(t.find("\"name\":\"call\",\"ph\":\"X\",\"pid\":1,\"tid\":999"), std::string::npos) << t;
}

TEST_F(TraceParts, FileNamesKeepOnlySafeCharacters) {
  EXPECT_EQ(fs::path(trace_file("d", "all_gather", "a b/c", "bf16", "1M")).filename(), "all_gather.a_b_c.bf16.1M.json");
}

TEST_F(TraceParts, ATraceFolderThatIsAFileIsRefused) {
  fs::create_directories(fs::path(dir_).parent_path());
  std::ofstream(dir_) << "a file";
  EXPECT_THROW(prepare_trace_dir(dir_), Error);
  fs::remove(dir_);
}

// A device program's stamps (verb_trace.h) as spans: cycles at a 2 GHz SM clock, a global timer that
// ticks every microsecond, two calls of two blocks.
// The global timer counts from 1970 (~1.8e18 ns, where a double's steps are 256 ns) and a
// multiprocessor's cycle counter from its boot; the stamps carry both as such.
constexpr unsigned long long kEpochNs = 1795000000000000000ull;

std::vector<VerbStamp> program_stamps(uint32_t cap, double block1_start_ns, uint32_t blocks_end_arg = 0) {
  struct Step {
    VerbId v;
    uint32_t arg;
    double ns;  // since the block's start
  };
  const std::vector<Step> steps = {{VerbId::kStart, 0, 0},
                                   {VerbId::kAdvance, 9, 100},
                                   {VerbId::kCopy, 2048 | 1u << kStampRemoteShift, 300},
                                   {VerbId::kSignalRelease, 1 | kFenced, 800},
                                   {VerbId::kWaitAcquire, 41, 1500},
                                   {VerbId::kReduce, 2048, 2900},
                                   {VerbId::kEnd, 6, 3400}};
  std::vector<VerbStamp> out(2 * 2 * cap);
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b) {
      // Each block's cycle counter has its own origin (its SM's); the global timer is one clock.
      const double start_ns = 1e6 + c * 10000.0 + (b ? block1_start_ns : 0.0);
      const unsigned long long clk0 = 123456789012345ull * (b + 1);
      for (std::size_t i = 0; i < steps.size(); ++i) {
        VerbStamp& s = out[(std::size_t(c) * 2 + b) * cap + i];
        s.clk = clk0 + (unsigned long long)(steps[i].ns * 2.0);
        s.gt = kEpochNs + (unsigned long long)(std::floor((start_ns + steps[i].ns) / 1000.0) * 1000.0);
        s.verb = uint32_t(steps[i].v);
        s.arg = steps[i].v == VerbId::kEnd && blocks_end_arg ? blocks_end_arg : steps[i].arg;
      }
    }
  return out;
}

TEST_F(TraceParts, AProgramsStampsBecomeEachBlocksVerbSpans) {
  const VerbTrace vt = verb_spans(program_stamps(8, 700.0), 2, 2, 8, 2.0);
  EXPECT_EQ(vt.lost, 0);
  EXPECT_EQ(vt.tick_ns, 1000.0);
  // Per call: the call, then per block its block span and its five verbs.
  ASSERT_EQ(vt.spans.size(), 2u * (1 + 2 * 6));
  const VerbSpan& call0 = vt.spans[0];
  EXPECT_STREQ(call0.name, "call");
  EXPECT_EQ(call0.block, -1);
  const VerbSpan& copy = vt.spans[3];  // call 0, block 0: block, advance, copy
  EXPECT_STREQ(copy.name, "copy");
  EXPECT_EQ(copy.args, "\"call\":0,\"bytes\":2048,\"remote\":1");
  // Durations come from the cycles, exactly: 500 ns of copy, 1.4 us of waiting.
  EXPECT_NEAR(copy.end_us - copy.begin_us, 0.5, 1e-9);
  EXPECT_STREQ(vt.spans[4].name, "signal.release");
  EXPECT_EQ(vt.spans[4].args, "\"call\":0,\"peer\":1,\"fence\":1");
  EXPECT_NEAR(vt.spans[5].end_us - vt.spans[5].begin_us, 1.4, 1e-9);
  // Placement comes from the coarse timer, within a tick: block 1 started 0.7 us after block 0,
  // the second call 10 us after the first; the first call's earliest start is the zero.
  EXPECT_NEAR(vt.spans[1].begin_us, 0.0, 1e-9);
  const VerbSpan& block1 = vt.spans[7];
  EXPECT_STREQ(block1.name, "block");
  EXPECT_EQ(block1.block, 1);
  EXPECT_NEAR(block1.begin_us, 0.7, 1.0);
  EXPECT_NEAR(block1.end_us - block1.begin_us, 3.4, 1e-9);
  EXPECT_NEAR(vt.spans[13].begin_us, 10.0, 1.0);
  EXPECT_NEAR(call0.end_us, block1.end_us, 1e-9);
}

TEST_F(TraceParts, LostStampsAndUnrunBlocksAreSaid) {
  // The end stamp says the block made 9 stamps where 7 are kept: 2 lost per block, 8 in all.
  const VerbTrace vt = verb_spans(program_stamps(8, 0.0, 9), 2, 2, 8, 2.0);
  EXPECT_EQ(vt.lost, 8);
  EXPECT_NE(vt.spans[6].args.find("stamps_lost_after"), std::string::npos) << vt.spans[6].args;
  std::vector<VerbStamp> unrun = program_stamps(8, 0.0);
  unrun[3 * 8 + 6] = VerbStamp{};  // call 1, block 1: no end
  try {
    verb_spans(unrun, 2, 2, 8, 2.0);
    FAIL() << "a block without its end stamp was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("call 1, block 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(verb_spans(unrun, 2, 3, 8, 2.0), Error);  // the sizes do not match
}

TEST_F(TraceParts, TheRawStampsAreKeptBesideTheTrace) {
  prepare_trace_dir(dir_);
  const std::string path = dir_ + "/s.csv";
  write_stamps_csv(path, program_stamps(8, 700.0), 2, 2, 8, 2.0);
  const std::string t = slurp(path);
  EXPECT_EQ(count(t, "\n"), 2u + 2 * 2 * 7) << t;  // two header lines, 7 stamps a block
  EXPECT_NE(t.find("0,0,3,signal.release,65537,123456789013945,"), std::string::npos) << t;
}

TEST_F(TraceParts, AProgramsPartHasATrackPerBlock) {
  prepare_trace_dir(dir_);
  const std::string path = dir_ + "/p.json";
  write_block_trace(trace_part(path, 0), 0, 0, verb_spans(program_stamps(8, 700.0), 2, 2, 8, 2.0));
  merge_rank_traces(path, 1);
  const std::string t = slurp(path);
  EXPECT_EQ(count(t, "\"ph\":\"X\""), 26u) << t;
  EXPECT_NE(t.find("\"name\":\"block\",\"ph\":\"X\",\"pid\":1,\"tid\":2"), std::string::npos) << t;
  EXPECT_NE(t.find("\"name\":\"wait.acquire\",\"ph\":\"X\",\"pid\":1,\"tid\":1"), std::string::npos) << t;
  EXPECT_NE(t.find("\"name\":\"call\",\"ph\":\"X\",\"pid\":1,\"tid\":999"), std::string::npos) << t;
  EXPECT_NE(t.find("block 1"), std::string::npos);
}

}  // namespace
}  // namespace symm::cuda
