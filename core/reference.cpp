#include "core/reference.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace symm {

std::vector<std::vector<double>> reference(Op op, ReduceOp rop, const std::vector<std::vector<double>>& in) {
  const int n = int(in.size());
  const std::size_t len = in.empty() ? 0 : in[0].size();
  auto reduce_at = [&](std::size_t i) {
    double acc = in[0][i];
    for (int r = 1; r < n; ++r) acc = reference_combine(rop, acc, in[r][i]);
    return acc;
  };
  std::vector<std::vector<double>> out(static_cast<std::size_t>(n));
  switch (op) {
    case Op::kAllReduce: {
      std::vector<double> all(len);
      for (std::size_t i = 0; i < len; ++i) all[i] = reduce_at(i);
      for (auto& o : out) o = all;
      break;
    }
    case Op::kReduceScatter: {
      const std::size_t chunk = len / std::size_t(n);
      for (int r = 0; r < n; ++r) {
        out[r].resize(chunk);
        for (std::size_t i = 0; i < chunk; ++i) out[r][i] = reduce_at(std::size_t(r) * chunk + i);
      }
      break;
    }
    case Op::kAllGather: {
      std::vector<double> all;
      all.reserve(len * std::size_t(n));
      for (int r = 0; r < n; ++r) all.insert(all.end(), in[r].begin(), in[r].end());
      for (auto& o : out) o = all;
      break;
    }
    case Op::kBarrier: break;
  }
  return out;
}

double max_rel_err(const std::vector<double>& got, const std::vector<double>& want, double floor) {
  if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) || std::isnan(want[i])) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::fabs(got[i] - want[i]) / std::max(std::fabs(want[i]), floor));
  }
  return worst;
}

double rel_err_bound(DType t, int world) {
  // One final rounding to t (half an ulp relative to the result: 2^-8 bf16, 2^-11 fp16,
  // 2^-24 fp32) plus fp32 accumulation in any order: at most world * 2^-23 * sum|x| absolute,
  // with inputs in (-1, 1), measured against max_rel_err's floor of 1e-3 ... 1e-2. A result
  // that reads a stale or unwritten element is off by O(1) and fails by orders of magnitude.
  const double half_ulp = t == DType::kBF16   ? std::ldexp(1.0, -8)
                          : t == DType::kFP16 ? std::ldexp(1.0, -11)
                                              : std::ldexp(1.0, -24);
  return half_ulp * 1.01 + double(world) * std::ldexp(1.0, -23) * 2.0 / 1e-2;
}

std::vector<double> reference_matmul(const std::vector<double>& a, const std::vector<double>& b, std::size_t m,
                                     std::size_t n, std::size_t k) {
  // Eigen's blocked GEMM (a plain triple loop here was ~30 of the 35 s of `run --op ag_mm --shape
  // 8b --m 4096`), rows split over the host's cores. Always on threads of its own: the simulator
  // checks from a fiber whose 64 KiB stack Eigen's packing buffers (up to 128 KiB) would overrun.
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::vector<double> c(m * n);
  const Eigen::Map<const Mat> mb(b.data(), Eigen::Index(k), Eigen::Index(n));
  const std::size_t parts =
      std::clamp<std::size_t>(std::min<std::size_t>(std::thread::hardware_concurrency(), m / 64), 1, 64);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < parts; ++t)
    threads.emplace_back([&, t] {
      const std::size_t r0 = m * t / parts, r1 = m * (t + 1) / parts;
      const Eigen::Map<const Mat> ma(a.data() + r0 * k, Eigen::Index(r1 - r0), Eigen::Index(k));
      Eigen::Map<Mat> mc(c.data() + r0 * n, Eigen::Index(r1 - r0), Eigen::Index(n));
      mc.noalias() = ma * mb;
    });
  for (std::thread& t : threads) t.join();
  return c;
}

double max_row_rel_err(const std::vector<double>& got, const std::vector<double>& want, std::size_t rows,
                       std::size_t cols, double floor) {
  if (got.size() != want.size() || got.size() != rows * cols) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    double scale = floor, diff = 0;
    for (std::size_t j = 0; j < cols; ++j) {
      const double g = got[i * cols + j], w = want[i * cols + j];
      if (std::isnan(g) || std::isnan(w)) return std::numeric_limits<double>::infinity();
      scale = std::max(scale, std::fabs(w));
      diff = std::max(diff, std::fabs(g - w));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

double matmul_err_bound(DType t, int world, bool reduced) {
  // Half an ulp of the row's largest element per rounding; a partial may be larger than the
  // sum it goes into (random signs: by about sqrt(world)), so each of the `world` rounded
  // partials counts with that factor. fp32 accumulation over K terms adds far less.
  const double half_ulp = t == DType::kBF16   ? std::ldexp(1.0, -8)
                          : t == DType::kFP16 ? std::ldexp(1.0, -11)
                                              : std::ldexp(1.0, -24);
  const double partials = reduced ? double(world) * std::sqrt(double(world)) * 2.0 : 0.0;
  return half_ulp * (1.01 + partials) + std::ldexp(1.0, -20);
}

}  // namespace symm
