// The library's simulated node runs your data (include/symmcoll/symmcoll.h, sim_node): the
// simulated program reads your `in` buffers and your `out` buffers get the bytes it wrote, checked
// against the float64 reference of your inputs.
#include <gtest/gtest.h>
#include <symmcoll/symmcoll.h>

#include <cmath>
#include <vector>

namespace symm {
namespace {

struct Node {
  std::vector<std::unique_ptr<Communicator>> ranks;
  int world = 0;
  explicit Node(std::size_t check_up_to = std::size_t(16) << 20) {
    SimOptions o;
    o.machine = "h200x4";
    o.check_up_to = check_up_to;
    ranks = sim_node(o);
    world = ranks[0]->world();
  }
};

// fp32 all-reduce of 1 + 2^-24 + 2^-24 + 2^-24: the exact sum 1 + 3 * 2^-24 rounds to 1 + 2^-22,
// while one_shot accumulates in fp32 in rank order (1 + 2^-24 rounds back to 1, three times) and
// stores 1. Your `out` holds the program's 1, not the reference's 1 + 2^-22.
TEST(LibraryData, TheSimulatedProgramsBytesReachYourOutput) {
  Node n;
  ASSERT_EQ(n.world, 4);
  const std::size_t count = 256;
  std::vector<std::vector<float>> in(4, std::vector<float>(count, std::ldexp(1.0f, -24))), out(4);
  for (float& x : in[0]) x = 1.0f;
  CallInfo info;
  for (int r = 0; r < 4; ++r) {
    out[std::size_t(r)].assign(count, -7.0f);
    info = n.ranks[std::size_t(r)]->all_reduce(in[std::size_t(r)].data(), out[std::size_t(r)].data(), count,
                                               DType::kFP32, ReduceOp::kSum, nullptr, "one_shot");
  }
  ASSERT_TRUE(info.complete);
  EXPECT_GE(info.max_rel_err, std::ldexp(1.0, -23));  // the program's 1 against the reference's 1 + 2^-22
  EXPECT_LE(info.max_rel_err, info.err_bound);
  for (int r = 0; r < 4; ++r)
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(out[std::size_t(r)][i], 1.0f) << "rank " << r << " [" << i << "]";
}

TEST(LibraryData, EveryOpMovesYourBytesInPlaceToo) {
  Node n;
  const std::size_t count = 128;  // all_gather: sendcount; reduce_scatter: recvcount
  std::vector<std::vector<float>> in(4), out(4);
  for (int r = 0; r < 4; ++r) {
    in[std::size_t(r)].resize(count * 4);
    for (std::size_t i = 0; i < count * 4; ++i) in[std::size_t(r)][i] = float(r) * 0.125f + float(i % 5) * 0.0625f;
    out[std::size_t(r)].assign(count * 4, NAN);
  }
  CallInfo info;
  for (int r = 0; r < 4; ++r)
    info = n.ranks[std::size_t(r)]->all_gather(in[std::size_t(r)].data(), out[std::size_t(r)].data(), count,
                                               DType::kFP32, nullptr, "push");
  ASSERT_TRUE(info.complete);
  EXPECT_EQ(info.max_rel_err, 0);
  for (int r = 0; r < 4; ++r)
    for (int q = 0; q < 4; ++q)
      for (std::size_t i = 0; i < count; ++i)
        ASSERT_EQ(out[std::size_t(r)][std::size_t(q) * count + i], in[std::size_t(q)][i]) << r << " " << q << " " << i;
  for (int r = 0; r < 4; ++r)
    info = n.ranks[std::size_t(r)]->reduce_scatter(in[std::size_t(r)].data(), out[std::size_t(r)].data(), count,
                                                   DType::kFP32, ReduceOp::kMax, nullptr, "pull");
  for (int r = 0; r < 4; ++r)
    for (std::size_t i = 0; i < count; ++i)
      ASSERT_EQ(out[std::size_t(r)][i], in[3][std::size_t(r) * count + i]) << r << " " << i;  // rank 3's is largest
  // In place: `in` is `out`.
  std::vector<std::vector<float>> io = in;
  for (int r = 0; r < 4; ++r)
    info = n.ranks[std::size_t(r)]->all_reduce(io[std::size_t(r)].data(), io[std::size_t(r)].data(), count * 4,
                                               DType::kFP32, ReduceOp::kSum, nullptr, "two_shot");
  for (int r = 0; r < 4; ++r)
    for (std::size_t i = 0; i < count * 4; ++i)
      ASSERT_EQ(io[std::size_t(r)][i], in[0][i] + in[1][i] + in[2][i] + in[3][i]) << r << " " << i;
}

// Above check_up_to the call is timing-only: `out` gets the reference, and CallInfo says so.
TEST(LibraryData, TimingOnlyCallsWriteTheReferenceAndSaySo) {
  Node n(/*check_up_to=*/1024);
  const std::size_t count = 1024;
  std::vector<std::vector<float>> in(4, std::vector<float>(count, 0.5f)), out(4, std::vector<float>(count));
  CallInfo info;
  for (int r = 0; r < 4; ++r)
    info = n.ranks[std::size_t(r)]->all_reduce(in[std::size_t(r)].data(), out[std::size_t(r)].data(), count,
                                               DType::kFP32, ReduceOp::kSum, nullptr, "one_shot");
  EXPECT_EQ(info.max_rel_err, -1);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(out[std::size_t(r)][7], 2.0f);
}

}  // namespace
}  // namespace symm
