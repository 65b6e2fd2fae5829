// The files of `bench --backend cuda --trace` (apps/harness/cuda/trace_parts.h), on the CPU: a
// rank's part as the simulator writes a trace, rank 0's merge of the parts, the file names.
#include <gtest/gtest.h>
#include <unistd.h>

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

}  // namespace
}  // namespace symm::cuda
