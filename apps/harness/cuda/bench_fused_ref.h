// The fused bench's float64 reference of a rank's C (bench_fused.cpp), from every rank's inputs
// regenerated from the seed (bench_common.h), as the collective bench's reference is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "apps/harness/cuda/bench_common.h"
#include "core/fused.h"
#include "core/reference.h"

namespace symm::cuda {

// This rank's C in float64: ag_mm, all_gather(A) @ B (every rank's shard regenerated from the
// seed); mm_rs, my rows of sum_r A_r @ B_r.
template <class T>
inline std::vector<double> fused_reference_c(FusedOp op, const MatShape& s, uint64_t seed, int w, int me) {
  auto as_double = [](const std::vector<T>& v) {
    std::vector<double> d(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) d[i] = double(to_float(v[i]));
    return d;
  };
  const std::size_t rows = s.m / std::size_t(w);
  if (op == FusedOp::kAgMm) {
    std::vector<double> a;
    a.reserve(s.m * s.k);
    for (int r = 0; r < w; ++r) {
      const std::vector<double> shard = as_double(make_input<T>(seed, r, rows * s.k));
      a.insert(a.end(), shard.begin(), shard.end());
    }
    return reference_matmul(a, as_double(make_input<T>(seed + 1, 0, s.k * s.n)), s.m, s.n, s.k);
  }
  const std::size_t kl = s.k / std::size_t(w);
  std::vector<double> sum(rows * s.n, 0.0);
  for (int r = 0; r < w; ++r) {
    const std::vector<double> a = as_double(make_input<T>(seed, r, s.m * kl));
    const std::vector<double> mine(a.begin() + std::ptrdiff_t(std::size_t(me) * rows * kl),
                                   a.begin() + std::ptrdiff_t(std::size_t(me + 1) * rows * kl));
    const std::vector<double> p =
        reference_matmul(mine, as_double(make_input<T>(seed + 1, r, kl * s.n)), rows, s.n, kl);
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += p[i];
  }
  return sum;
}

}  // namespace symm::cuda
