// Every rank of a call meets its team at the same number of points (the CUDA backend's lockstep of a
// team sharing a GPU, backends/cuda/plan_exec.h set_step: at a call's start, after each flag write and
// each kernel launch, or after every verb but a GEMM): each host and fused plan of the registry, run
// through CheckedHost for every rank at worlds 2..8, stream counts 1..3 and several sizes, enqueues
// as many of each on every rank. A plan whose ranks differ would leave a rank waiting at a meeting
// its peers never reach.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/plan.h"

namespace symm {
namespace {

// Counts what reaches it, as the CUDA backend's lockstep meets: `meets` (flag writes and launches)
// and `items` (every verb but a GEMM). Addresses are never read.
struct CountingHost {
  int r, n, s;
  int meets = 0, items = 0;
  int rank() const { return r; }
  int world() const { return n; }
  int streams() const { return s; }
  template <class T>
  T* peer(T* p, int) const {
    return p;
  }
  template <class Program, class T>
  void launch(int, const CollArgs&, int) {
    ++meets, ++items;
  }
  void copy_engine(int, void*, const void*, std::size_t) { ++items; }
  void write_flag(int, int, uint32_t, uint32_t) { ++meets, ++items; }
  void wait_flag(int, uint32_t, uint32_t) { ++items; }
  void record(int, int) { ++items; }
  void wait_event(int, int) { ++items; }
  void gemm(int, const GemmArgs&) {}
};
static_assert(HostCtx<CheckedHost<CountingHost>>);

char* fake(std::size_t at) { return reinterpret_cast<char*>(std::size_t(1) << 40) + at; }

// Each rank's (meets, items) of one call of `run(host)`.
template <class Run>
std::vector<std::pair<int, int>> per_rank(int world, int streams, Run&& run) {
  std::vector<std::pair<int, int>> out;
  for (int r = 0; r < world; ++r) {
    CountingHost h{r, world, streams};
    CheckedHost<CountingHost> c(h);
    run(c);
    c.end_call();
    out.push_back({h.meets, h.items});
  }
  return out;
}

void expect_alike(const std::vector<std::pair<int, int>>& v, const std::string& what) {
  for (std::size_t r = 1; r < v.size(); ++r) {
    EXPECT_EQ(v[r].first, v[0].first) << what << ": rank " << r << "'s meetings (flag writes and launches)";
    EXPECT_EQ(v[r].second, v[0].second) << what << ": rank " << r << "'s items";
  }
  EXPECT_GT(v[0].first, 0) << what;
}

TEST(PlanSteps, EveryRankOfAHostPlanMeetsAlike) {
  int plans = 0;
  for_each_entry(HostPlans{}, [&]<class P>(int) {
    ++plans;
    for (int world = 2; world <= 8; ++world)
      for (int streams = 1; streams <= 3; ++streams)
        for (std::size_t bytes : {std::size_t(4) << 10, std::size_t(1) << 20, std::size_t(72) << 20}) {
          PlanArgs a;
          a.coll.count = bytes / sizeof(bf16) / std::size_t(world);
          a.coll.in = fake(0);
          a.coll.out = fake(std::size_t(1) << 32);
          a.coll.scratch = fake(std::size_t(2) << 32);
          a.coll.op = ReduceOp::kSum;
          expect_alike(per_rank(world, streams, [&](auto& c) { P::template run<bf16>(c, a); }),
                       std::string(P::kDescriptor.name) + " world " + std::to_string(world) + " streams " +
                           std::to_string(streams) + " bytes " + std::to_string(bytes));
        }
  });
  EXPECT_EQ(plans, HostPlans::kSize);
}

TEST(PlanSteps, EveryRankOfAFusedPlanMeetsAlike) {
  int plans = 0;
  for_each_entry(FusedPlans{}, [&]<class P>(int) {
    ++plans;
    for (int world = 2; world <= 8; ++world)
      for (int streams = 1; streams <= 3; ++streams)
        for (std::size_t m : {std::size_t(1680), std::size_t(13440)}) {  // shapes the bench accepts at every world
          FusedArgs f;
          f.a = fake(0);
          f.b = fake(std::size_t(1) << 32);
          f.c = fake(std::size_t(2) << 32);
          f.work = fake(std::size_t(3) << 32);
          f.partial = fake(std::size_t(4) << 32);
          f.m = m, f.n = 1792, f.k = 6720;
          f.sms = 132;
          validate_fused(P::kDescriptor.fused_op, MatShape{f.m, f.n, f.k, ""}, world, DType::kBF16);
          expect_alike(per_rank(world, streams, [&](auto& c) { P::template run<bf16>(c, f); }),
                       std::string(P::kDescriptor.name) + " world " + std::to_string(world) + " streams " +
                           std::to_string(streams) + " M " + std::to_string(m));
        }
  });
  EXPECT_EQ(plans, FusedPlans::kSize);
}

}  // namespace
}  // namespace symm
