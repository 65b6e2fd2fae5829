// The algorithm-list parser and option helpers, without the binary.
#include <gtest/gtest.h>

#include "apps/cli.h"

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

}  // namespace
}  // namespace symm::apps
