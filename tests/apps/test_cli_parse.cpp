// The size-list and algorithm-list parsers, without the binary.
#include <gtest/gtest.h>

#include "apps/cli.h"

namespace symm::apps {
namespace {

TEST(SizeList, RangeDoublesByDefault) {
  const std::vector<std::size_t> want = {4096, 8192, 16384};
  EXPECT_EQ(parse_size_list("4K:16K"), want);
}

TEST(SizeList, RangeWithFactorIncludesEndOnlyWhenHit) {
  EXPECT_EQ(parse_size_list("4K:256M:x4").back(), std::size_t(256) << 20);
  EXPECT_EQ(parse_size_list("4K:256M:x4").size(), 9u);
  EXPECT_EQ(parse_size_list("4K:32K:x4").back(), std::size_t(16) << 10);
}

TEST(SizeList, CommaListKeepsOrder) {
  const std::vector<std::size_t> want = {1 << 20, 4096, 1000};
  EXPECT_EQ(parse_size_list("1M,4K,1000"), want);
}

TEST(SizeList, RejectsMalformed) {
  for (const char* bad : {"", "4K:", ":4K", "4K:1K", "0:4K", "4K:1M:x1", "4K:1M:y2", "4K:1M:x", "4K,,1M",
                          "4Q", "1M:4K:x2:x2"}) {
    EXPECT_THROW(parse_size_list(bad), Error) << bad;
  }
}

TEST(AlgoList, AllAndNames) {
  EXPECT_EQ(parse_algo_list(Op::kReduceScatter, "all").size(), 2u);  // pull, push_ll
  const auto two = parse_algo_list(Op::kAllReduce, "one_shot,rs_ld_ag_st,all_reduce.ld_reduce");
  ASSERT_EQ(two.size(), 2u);  // one_shot and all_reduce.ld_reduce are the same algorithm
  EXPECT_EQ(two[0]->id, "all_reduce.ld_reduce");
  EXPECT_EQ(two[1]->id, "all_reduce.rs_ld_ag_st");
  EXPECT_THROW(parse_algo_list(Op::kAllReduce, "one_shot,nope"), Error);
  EXPECT_THROW(parse_algo_list(Op::kAllReduce, "all_gather.st"), Error);
}

}  // namespace
}  // namespace symm::apps
