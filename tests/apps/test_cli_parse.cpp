// The algorithm-list parser and option helpers, without the binary.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "apps/cli.h"
#include "core/nccl_tests_format.h"

namespace symm::apps {
namespace {

// Size lists: symm::parse_size_list, tested in tests/core/test_sizes.cpp.

TEST(AlgoList, AllAndNames) {
  EXPECT_EQ(parse_algo_list(Op::kReduceScatter, "all").size(), 4u);  // pull, push_ll, ce, ce_overlap
  const auto two = parse_algo_list(Op::kAllReduce, "one_shot,rs_ld_ag_st,all_reduce.ld_reduce");
  ASSERT_EQ(two.size(), 2u);  // one_shot and all_reduce.ld_reduce are the same algorithm
  EXPECT_EQ(two[0]->id, "all_reduce.ld_reduce");
  EXPECT_EQ(two[1]->id, "all_reduce.rs_ld_ag_st");
  EXPECT_THROW(parse_algo_list(Op::kAllReduce, "one_shot,nope"), Error);
  EXPECT_THROW(parse_algo_list(Op::kAllReduce, "all_gather.st"), Error);
}

TEST(RefuseWithCsv, OnlyWithCsv) {
  EXPECT_NO_THROW(refuse_with_csv("", "--reduce", "max", "reduction", "sum"));
  try {
    refuse_with_csv("out.csv", "--reduce", "max", "reduction", "sum");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("--reduce max cannot go with --csv", 0), 0u) << msg;
    EXPECT_NE(msg.find("no column for the reduction"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// A failed row is counted as wrong in its row and in its table's footer; unchecked rows are N/A.
TEST(NcclTestsFormat, WrongRowsAndFooter) {
  std::vector<ResultRow> rows(3);
  for (int i = 0; i < 3; ++i) {
    rows[i].backend = "cuda";
    rows[i].machine = "h200x4";
    rows[i].world = 4;
    rows[i].op = "reduce_scatter";
    rows[i].algo = "nccl";
    rows[i].dtype = "fp32";
    rows[i].bytes = 4096u << i;
    rows[i].graph = true;
    rows[i].time_us_median = 10;
    fill_bandwidth(rows[i]);
    rows[i].max_rel_err = i == 2 ? -1 : 0.5;
  }
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  write_nccl_tests(f, rows, {false, true, true}, ReduceOp::kMax);
  std::fclose(f);
  const std::string out(buf, len);
  std::free(buf);
  EXPECT_NE(out.find("        4096          1024     float     max      -1    10.00    0.41    0.31      0\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("        8192          2048     float     max      -1    10.00    0.82    0.61      1\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    N/A\n"), std::string::npos) << out;  // the unchecked row, though marked failed
  EXPECT_NE(out.find("# Out of bounds values : 1 FAILED\n"), std::string::npos) << out;
  EXPECT_NE(out.find("# Avg bus bandwidth    : "), std::string::npos) << out;
}

}  // namespace
}  // namespace symm::apps
