// `--algo auto`'s loader (core/auto_select.h) on a small fixture table: the neighbour rule, the
// fallbacks (dtype, graph mode, world, a refused algorithm, a refused block count) and the rule
// without a table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/auto_select.h"

namespace symm {
namespace {

namespace fs = std::filesystem;

class AutoSelect : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("symm_auto_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    path_ = (dir_ / "fixture.csv").string();
    std::ofstream f(path_);
    f << "op,world,dtype,graph,bytes,algo,blocks,source,time_us\n"
         "all_reduce,4,bf16,1,4096,all_reduce.st_ll_reduce,2,measured,3.0\n"
         "all_reduce,4,bf16,1,65536,all_reduce.ld_reduce,8,measured,5.0\n"
         "all_reduce,4,bf16,1,1048576,all_reduce.st_reduce,32,measured,9.0\n"
         "all_reduce,4,bf16,1,4194304,all_reduce.rs_ld_ag_st,64,measured,20.0\n"
         "all_reduce,4,bf16,0,4096,all_reduce.ld_reduce,1,simulated,6.0\n"
         "all_gather,4,bf16,1,4096,all_gather.st_ll,100000,simulated,2.0\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  AutoChoice choose(std::size_t bytes, DType t = DType::kBF16, bool graph = true, int world = 4,
                    Op op = Op::kAllReduce) {
    return auto_choose_from(path_, AutoQuery{"fixture", op, bytes, world, t, graph});
  }
  fs::path dir_;
  std::string path_;
};

TEST_F(AutoSelect, ExactSizeTakesItsRow) {
  const AutoChoice c = choose(65536);
  EXPECT_EQ(c.algo->id, "all_reduce.ld_reduce");
  EXPECT_EQ(c.blocks, 8);
  EXPECT_EQ(c.source, "measured");
  EXPECT_NE(c.why.find("measured on fixture"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("this size"), std::string::npos) << c.why;
}

TEST_F(AutoSelect, BetweenSizesTakesTheNearestLower) {
  const AutoChoice c = choose(512 << 10);  // between 64K (ld_reduce) and 1M (st_reduce)
  EXPECT_EQ(c.algo->id, "all_reduce.ld_reduce");
  EXPECT_EQ(c.blocks, 8);
  EXPECT_NE(c.why.find("64K row"), std::string::npos) << c.why;
  EXPECT_EQ(choose(1u << 30).algo->id, "all_reduce.rs_ld_ag_st");  // above the largest: the largest
  EXPECT_EQ(choose(2048).algo->id, "all_reduce.st_ll_reduce");     // below the smallest: the smallest
}

TEST_F(AutoSelect, RefusedAlgorithmGivesWayToTheNearestHigher) {
  // 3M: the 1M row's st_reduce stops at 2M; the 4M row's two_shot runs it.
  const AutoChoice c = choose(3u << 20);
  EXPECT_EQ(c.algo->id, "all_reduce.rs_ld_ag_st");
  EXPECT_NE(c.why.find("refuses this size"), std::string::npos) << c.why;
}

TEST_F(AutoSelect, RefusedBlockCountFallsToTheDefault) {
  const AutoChoice c = choose(4096, DType::kBF16, true, 4, Op::kAllGather);
  EXPECT_EQ(c.algo->id, "all_gather.st_ll");
  EXPECT_EQ(c.blocks, 0);
  EXPECT_EQ(c.source, "simulated");
  EXPECT_NE(c.why.find("simulated with machine file fixture"), std::string::npos) << c.why;
  EXPECT_NE(c.why.find("default block count"), std::string::npos) << c.why;
}

TEST_F(AutoSelect, GraphModeSelectsItsRows) {
  const AutoChoice c = choose(4096, DType::kBF16, /*graph=*/false);
  EXPECT_EQ(c.algo->id, "all_reduce.ld_reduce");
  EXPECT_EQ(c.source, "simulated");
  EXPECT_NE(c.why.find("eager"), std::string::npos) << c.why;
}

TEST_F(AutoSelect, MissingDtypeOrModeFallsBackAndSaysSo) {
  const AutoChoice c = choose(65536, DType::kFP32);
  EXPECT_EQ(c.algo->id, "all_reduce.ld_reduce");
  EXPECT_NE(c.why.find("no fp32 rows, bf16's choice"), std::string::npos) << c.why;
  const AutoChoice g = choose(65536, DType::kBF16, true, 4, Op::kAllGather);  // all_gather: graph rows only
  EXPECT_EQ(g.algo->id, "all_gather.st_ll");
  const AutoChoice e = choose(65536, DType::kBF16, /*graph=*/false, 4, Op::kAllGather);
  EXPECT_NE(e.why.find("no eager rows, the graph rows' choice"), std::string::npos) << e.why;
}

TEST_F(AutoSelect, MissingWorldOrTableTakesTheRule) {
  const AutoChoice w = choose(4096, DType::kBF16, true, /*world=*/8);
  EXPECT_EQ(w.source, "rule");
  EXPECT_EQ(w.algo->id, "all_reduce.st_ll_reduce");
  EXPECT_NE(w.why.find("no all_reduce rows at world 8"), std::string::npos) << w.why;
  const AutoChoice none = auto_choose_from("", AutoQuery{"nowhere", Op::kAllReduce, 64u << 20, 4, DType::kBF16, true});
  EXPECT_EQ(none.source, "rule");
  EXPECT_EQ(none.algo->id, "all_reduce.rs_ld_ag_st");  // above the LL program's 1M
  EXPECT_NE(none.why.find("no auto table for machine 'nowhere'"), std::string::npos) << none.why;
}

TEST_F(AutoSelect, TableIsFoundThroughSymmAutoDir) {
  fs::copy_file(path_, dir_ / "fixture_dir.csv");
  ::setenv("SYMM_AUTO_DIR", dir_.c_str(), 1);
  const std::string found = auto_table_path("fixture_dir");
  const AutoChoice c = auto_choose(AutoQuery{"fixture_dir", Op::kAllReduce, 65536, 4, DType::kBF16, true});
  ::unsetenv("SYMM_AUTO_DIR");
  EXPECT_EQ(found, (dir_ / "fixture_dir.csv").string());
  EXPECT_EQ(c.source, "measured");
  EXPECT_EQ(auto_table_path("no_such_machine_anywhere"), "");
}

TEST_F(AutoSelect, MalformedTableIsAnError) {
  std::ofstream(path_) << "op,world\nall_reduce,4\n";
  EXPECT_THROW(choose(4096), Error);
}

}  // namespace
}  // namespace symm
