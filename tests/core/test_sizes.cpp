// symm::parse_size_list (core/sizes.h): the --sizes grammar of sweep and of the CUDA bench.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "core/common.h"
#include "core/sizes.h"

namespace symm {
namespace {

using Sizes = std::vector<std::size_t>;

TEST(SizeList, RangeDoublesByDefault) {
  EXPECT_EQ(parse_size_list("4K:16K"), (Sizes{4096, 8192, 16384}));
  EXPECT_EQ(parse_size_list("4K:32K"), (Sizes{4096, 8192, 16384, 32768}));
  EXPECT_EQ(parse_size_list("3000:12000"), (Sizes{3000, 6000, 12000}));  // x2 from the start
  EXPECT_EQ(parse_size_list("4K:4K"), (Sizes{4096}));
}

TEST(SizeList, RangeWithFactorIncludesEndOnlyWhenHit) {
  EXPECT_EQ(parse_size_list("4K:64K:x4"), (Sizes{4096, 16384, 65536}));
  EXPECT_EQ(parse_size_list("4K:64K:X4"), (Sizes{4096, 16384, 65536}));
  EXPECT_EQ(parse_size_list("4K:256M:x4").back(), std::size_t(256) << 20);
  EXPECT_EQ(parse_size_list("4K:256M:x4").size(), 9u);
  EXPECT_EQ(parse_size_list("4K:32K:x4").back(), std::size_t(16) << 10);
  EXPECT_EQ(parse_size_list("1K:1M:x1024"), (Sizes{1024, 1 << 20}));
}

TEST(SizeList, CommaListKeepsOrder) {
  EXPECT_EQ(parse_size_list("1M,4K,1000"), (Sizes{1 << 20, 4096, 1000}));
  EXPECT_EQ(parse_size_list("4K"), (Sizes{4096}));
}

// The lists scripts/gpu/h200.sh, tests/gpu/run.sh and the results READMEs pass to the bench.
TEST(SizeList, ScriptListsParse) {
  EXPECT_EQ(parse_size_list("4K:256M").size(), 17u);
  EXPECT_EQ(parse_size_list("4K:256M").back(), std::size_t(256) << 20);
  EXPECT_EQ(parse_size_list("4K:1M:x4"), (Sizes{4096, 16384, 65536, 262144, 1 << 20}));
  EXPECT_EQ(parse_size_list("16K,64K,1M,4M"), (Sizes{16384, 65536, 1 << 20, 4 << 20}));
  EXPECT_EQ(parse_size_list("4K,16K"), (Sizes{4096, 16384}));
  EXPECT_EQ(parse_size_list("16M,256M"), (Sizes{16 << 20, std::size_t(256) << 20}));
}

// A range near SIZE_MAX stops before the step that would wrap (it used to loop forever on 0).
TEST(SizeList, RangeNeverOverflows) {
  const Sizes s = parse_size_list("1G:17179869183G");  // (2^34 - 1) * 2^30 = 2^64 - 2^30
  ASSERT_EQ(s.size(), 34u);
  EXPECT_EQ(s.front(), std::size_t(1) << 30);
  EXPECT_EQ(s.back(), std::size_t(1) << 63);
  const Sizes t = parse_size_list("1:17179869183G:x1024");
  ASSERT_EQ(t.size(), 7u);  // 1024^6 = 2^60; 2^70 would wrap
  EXPECT_EQ(t.back(), std::size_t(1) << 60);
  for (std::size_t i = 1; i < t.size(); ++i) EXPECT_EQ(t[i], t[i - 1] * 1024);
}

TEST(SizeList, RejectsMalformed) {
  for (const char* bad : {"",
                          "4K:",
                          ":4K",
                          "4K:1K",
                          "0:4K",
                          "4K:1M:x1",
                          "4K:1M:x2000",
                          "4K:1M:y2",
                          "4K:1M:x",
                          "4K:1M:4",  // the bench's old bare factor: the step is written xF
                          "4K:1M:*4",
                          "4K:1M:x99999999999999999999",
                          "4K,,1M",
                          "4K,1M,",
                          ",4K",
                          "0,4K",
                          "4Q",
                          "1M:4K:x2:x2",
                          "4K,16K:1M",
                          "4K:1M,16M"}) {
    EXPECT_THROW(parse_size_list(bad), Error) << bad;
  }
  try {
    parse_size_list("4K:1K");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("bad size list '4K:1K'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace symm
