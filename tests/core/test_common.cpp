#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/common.h"
#include "core/partition.h"

namespace symm {

TEST(Common, ParseSize) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("4K"), 4096u);
  EXPECT_EQ(parse_size("1M"), 1u << 20);
  EXPECT_EQ(parse_size("256MiB"), 256u << 20);
  EXPECT_EQ(parse_size("1G"), 1u << 30);
  for (const char* bad : {"", "K", "1X", "1MM", "-4", "4 K", "99999999999999999999999"})
    EXPECT_THROW(parse_size(bad), Error) << bad;
  EXPECT_EQ(format_size(1u << 20), "1M");
  EXPECT_EQ(format_size(1000), "1000");
}

TEST(Common, Bf16RoundTripAndRounding) {
  for (float f : {0.0f, 1.0f, -2.5f, 3.140625f, 65504.0f, 1e-20f})
    EXPECT_EQ(to_float(from_float<bf16>(to_float(from_float<bf16>(f)))), to_float(from_float<bf16>(f)));
  EXPECT_EQ(to_float(from_float<bf16>(1.0f)), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even gives 1.
  EXPECT_EQ(to_float(from_float<bf16>(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_EQ(to_float(from_float<bf16>(1.0f + 3 * std::ldexp(1.0f, -8))), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(to_float(from_float<bf16>(NAN))));
}

TEST(Common, Fp16RoundTripAndRounding) {
  EXPECT_EQ(to_float(from_float<fp16>(1.0f)), 1.0f);
  EXPECT_EQ(to_float(from_float<fp16>(-2.5f)), -2.5f);
  EXPECT_EQ(to_float(from_float<fp16>(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(to_float(from_float<fp16>(70000.0f))));
  EXPECT_EQ(to_float(from_float<fp16>(std::ldexp(1.0f, -24))), std::ldexp(1.0f, -24));  // subnormal
  EXPECT_EQ(to_float(from_float<fp16>(1.0f + std::ldexp(1.0f, -11))), 1.0f);            // tie to even
  EXPECT_EQ(to_float(from_float<fp16>(1.0f + 3 * std::ldexp(1.0f, -11))), 1.0f + std::ldexp(1.0f, -9));
}

TEST(Partition, SplitCoversExactlyOnce) {
  for (std::size_t n : {0u, 1u, 7u, 64u, 1000u})
    for (int parts : {1, 3, 8, 132}) {
      std::size_t next = 0;
      for (int i = 0; i < parts; ++i) {
        Range r = split(n, parts, i);
        EXPECT_EQ(r.begin, next);
        next += r.count;
      }
      EXPECT_EQ(next, n);
    }
  Range r = split_vec<bf16>(24, 2, 1);  // 3 vectors of 8 bf16: pieces of 2 and 1 vectors
  EXPECT_EQ(r.begin, 16u);
  EXPECT_EQ(r.count, 8u);
}

// split_aligned: the pieces tile the whole vectors in order, each starts on a boundary of g vectors
// (a power of two, at most 64 KiB, at most a sixteenth of the even share), and none is more than g
// vectors longer than another (the last also takes the vectors past the last whole g, and has the
// fewest g); 256M of bf16 over 33 blocks starts every piece on 64 KiB.
TEST(Partition, AlignedPiecesTileTheVectorsOnLargeBoundaries) {
  constexpr std::size_t kPer = kVecBytes / sizeof(bf16);
  for (std::size_t bytes : {std::size_t(16), std::size_t(4096), std::size_t(98304), std::size_t(3) << 20,
                            std::size_t(255) << 20, std::size_t(256) << 20})
    for (int parts : {1, 2, 3, 7, 33, 64, 96, 132}) {
      const std::size_t count = bytes / sizeof(bf16), vecs = count / kPer;
      std::size_t g = 1;
      while (g * 2 <= vecs / (std::size_t(parts) * 16) && g * 2 <= (64 << 10) / kVecBytes) g *= 2;
      std::size_t next = 0, lo = SIZE_MAX, hi = 0;
      for (int i = 0; i < parts; ++i) {
        const Range r = split_aligned<bf16>(count, parts, i);
        EXPECT_EQ(r.begin, next) << bytes << " " << parts << " " << i;
        EXPECT_EQ(r.begin % (g * kPer), 0u) << bytes << " " << parts << " " << i;
        next += r.count;
        lo = std::min(lo, r.count), hi = std::max(hi, r.count);
      }
      EXPECT_EQ(next, vecs * kPer) << bytes << " " << parts;
      EXPECT_LE(hi - lo, g * kPer) << bytes << " " << parts;
    }
  EXPECT_EQ(split_aligned<bf16>((std::size_t(256) << 20) / 2, 33, 5).begin * 2 % (64 << 10), 0u);
}

}  // namespace symm
