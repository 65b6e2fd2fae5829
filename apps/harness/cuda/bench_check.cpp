// The collective bench's checking (bench_impl.h): each rank's expected output by the float64
// reference and NCCL's answer on the same input, one checked call (input uploaded, output poisoned,
// downloaded), its replays as a one-call graph, and the comparison with its error bounds.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/harness/cuda/bench_common.h"
#include "apps/harness/cuda/bench_impl.h"
#include "backends/cuda/check.h"
#include "backends/cuda/team_graph.h"
#include "core/reference.h"

namespace symm::cuda::coll_bench {
namespace {

// This rank's expected output (float64) by symm::reference (core/reference.h), the rule every
// backend is checked against. Computed a slice of elements at a time from every rank's input
// regenerated from the seed, so memory stays at world x kSlice values whatever the size: a
// slice of every rank's input is itself a valid input of the reference. reduce_scatter's
// output for rank `me` is the all_reduce of every rank's slice `me`; all_gather's is every
// rank's input in rank order, so a slice of it lands at r * count for each rank r.
template <class T>
std::vector<double> expected(Op op, ReduceOp rop, uint64_t seed, int world, int me, std::size_t count) {
  constexpr std::size_t kSlice = std::size_t(1) << 14;
  const bool gather = op == Op::kAllGather;
  const std::size_t base = op == Op::kReduceScatter ? std::size_t(me) * count : 0;
  std::vector<double> want(gather ? count * std::size_t(world) : count);
  std::vector<std::vector<double>> in(static_cast<std::size_t>(world));
  for (std::size_t i0 = 0; i0 < count; i0 += kSlice) {
    const std::size_t n = std::min(kSlice, count - i0);
    for (int r = 0; r < world; ++r) {
      std::vector<double>& v = in[std::size_t(r)];
      v.resize(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = double(to_float(from_float<T>(gen(seed, r, base + i0 + i))));
    }
    const std::vector<std::vector<double>> out = reference(gather ? Op::kAllGather : Op::kAllReduce, rop, in);
    const std::vector<double>& mine = out[std::size_t(me)];
    if (gather)
      for (int r = 0; r < world; ++r)
        std::copy_n(mine.begin() + std::ptrdiff_t(std::size_t(r) * n), n,
                    want.begin() + std::ptrdiff_t(std::size_t(r) * count + i0));
    else
      std::copy(mine.begin(), mine.end(), want.begin() + std::ptrdiff_t(i0));
  }
  return want;
}

}  // namespace

template <class T>
Answers<T> Bench::answers(Op op, DType t, std::size_t bytes, uint64_t seed, std::size_t count, std::size_t in_count,
                          std::size_t out_count) {
  Answers<T> a;
  a.count = count;
  a.out_count = out_count;
  a.want = expected<T>(op, o_.rop, seed, rt_.world(), rt_.rank(), count);
  a.input = make_input<T>(seed, rt_.rank(), in_count);
  if (!team()) {  // a team has no NCCL: the reference alone checks it
    // NCCL's answer on the same inputs, to compare every algorithm with. Taken from NCCL's
    // symmetric kernels, which accumulate in fp32 as ours do; NCCL's ring on plain buffers
    // rounds every partial sum to the element type, so near-cancelling sums differ by far
    // more than one rounding (its own row reports that error against the reference).
    rt_.set_context(describe(Case{nullptr, true, 0}, op, t, bytes) + ", the answer every algorithm is compared with");
    a.nccl = run_once<T>(Case{nullptr, true, 0}, op, t, bytes, count, a.input, out_count, nullptr);
  }
  return a;
}

template <class T>
bool Bench::check_case(const Case& c, Op op, DType t, std::size_t bytes, const LaunchPlan& plan, const Answers<T>& a,
                       ResultRow& row) {
  rt_.set_context(describe(c, op, t, bytes) + ", checked call");
  auto got = run_once<T>(c, op, t, bytes, a.count, a.input, a.out_count, &plan);
  // No NCCL answer (a team): -1 in that column, and only the reference decides.
  const bool vs_nccl = !a.nccl.empty();
  double e[2] = {max_rel_err(got, a.want), vs_nccl ? max_rel_err(got, a.nccl) : -1.0};
  if (o_.replays > 0 && (c.info || c.ce)) {
    rt_.set_context(describe(c, op, t, bytes) + ", graph of 1 call replayed " + std::to_string(o_.replays) + " times");
    got = run_replays<T>(c, op, t, bytes, a.count, a.input, a.out_count, plan);
    e[0] = std::max(e[0], max_rel_err(got, a.want));
    if (vs_nccl) e[1] = std::max(e[1], max_rel_err(got, a.nccl));
  }
  reduce_max(e, 2);
  const double err = e[0], err_nccl = e[1];
  const double bound = rel_err_bound(t, rt_.world());
  // Two correctly rounded results may differ by one rounding each: 2x the bound vs NCCL.
  // Plain NCCL is held to what intermediate rounding allows (finite, same magnitude).
  const bool bad = c.info   ? !(err <= bound) || (vs_nccl && !(err_nccl <= 2 * bound))
                   : c.symm ? !(err <= bound)
                            : !(err <= 1.0);
  if (bad) {
    ++failures_;
    if (rt_.rank() == 0)
      std::printf("FAIL %s %s %s bytes=%zu blocks=%d: max_rel_err %.3g vs reference, %.3g vs NCCL (bound %.3g)\n",
                  row.op.c_str(), row.algo.c_str(), row.dtype.c_str(), bytes, plan.blocks, err, err_nccl, bound);
  }
  row.max_rel_err = err;
  return bad;
}

template <class T>
void Bench::upload_and_poison(const Buffers& b, const std::vector<T>& input, std::size_t out_count) {
  cudaStream_t s = rt_.stream();
  SYMM_CUDA_CHECK(cudaMemcpyAsync(b.in, input.data(), input.size() * sizeof(T), cudaMemcpyHostToDevice, s));
  SYMM_CUDA_CHECK(cudaMemsetAsync(b.out, 0xFF, out_count * sizeof(T), s));  // NaN in every dtype
}

template <class T>
std::vector<double> Bench::download(const Buffers& b, std::size_t out_count) {
  std::vector<T> got(out_count);
  SYMM_CUDA_CHECK(cudaMemcpyAsync(got.data(), b.out, out_count * sizeof(T), cudaMemcpyDeviceToHost, rt_.stream()));
  rt_.sync();
  std::vector<double> d(out_count);
  for (std::size_t i = 0; i < out_count; ++i) d[i] = double(to_float(got[i]));
  return d;
}

template <class T>
std::vector<double> Bench::run_once(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count,
                                    const std::vector<T>& input, std::size_t out_count, const LaunchPlan* plan) {
  const Buffers b = buffers(c, op, bytes);
  upload_and_poison(b, input, out_count);
  enqueue(c, op, t, bytes, count, plan)();
  settle(c, bytes);
  rt_.sync();
  return download<T>(b, out_count);
}

template <class T>
std::vector<double> Bench::run_replays(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count,
                                       const std::vector<T>& input, std::size_t out_count, const LaunchPlan& plan) {
  const Buffers b = buffers(c, op, bytes);
  upload_and_poison(b, input, out_count);
  // A team whose ranks share a GPU: one graph of every rank's call, replayed by rank 0 (team_graph.h).
  ReplayGraph g(rt_, enqueue(c, op, t, bytes, count, &plan), 1);
  // A team: no rank replays into a peer still instantiating its graph (which may wait for the device).
  if (team()) rt_.barrier();
  for (int i = 0; i < o_.replays; ++i) g.launch();
  g.join();
  settle(c, bytes);
  rt_.sync();
  return download<T>(b, out_count);
}

// The run loop (bench.cpp) runs each element type of core/dispatch.h's with_type.
#define SYMM_BENCH_CHECK_FOR(T)                                                                                   \
  template Answers<T> Bench::answers<T>(Op, DType, std::size_t, uint64_t, std::size_t, std::size_t, std::size_t); \
  template bool Bench::check_case<T>(const Case&, Op, DType, std::size_t, const LaunchPlan&, const Answers<T>&,   \
                                     ResultRow&);
SYMM_BENCH_CHECK_FOR(bf16)
SYMM_BENCH_CHECK_FOR(fp16)
SYMM_BENCH_CHECK_FOR(float)
#undef SYMM_BENCH_CHECK_FOR

}  // namespace symm::cuda::coll_bench
