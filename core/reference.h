// CPU reference for every collective, in float64, and the error measure all checks use.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/common.h"

namespace symm {

// inputs[r] holds rank r's `in` as float64 (already rounded to the element type).
// Returns each rank's expected `out` in float64.
std::vector<std::vector<double>> reference(Op op, ReduceOp rop, const std::vector<std::vector<double>>& inputs);

// One step of the reference's reduction over ranks, in rank order: acc (ranks 0..r-1) with rank
// r's v. NaN propagates through max and min as through a sum.
inline double reference_combine(ReduceOp rop, double acc, double v) {
  return (rop == ReduceOp::kSum || std::isnan(acc) || std::isnan(v)) ? acc + v
         : rop == ReduceOp::kMax                                     ? std::max(acc, v)
                                                                     : std::min(acc, v);
}

// max_i |got_i - want_i| / max(|want_i|, floor): the relative error reported in every row.
// `floor` keeps near-zero sums from dominating; NaN anywhere gives +inf.
double max_rel_err(const std::vector<double>& got, const std::vector<double>& want, double floor = 1e-2);

// The bound a result must meet for dtype t after a reduction over `world` inputs: fp32
// accumulation then one rounding to t, plus the inputs' own values in (-1, 1).
double rel_err_bound(DType t, int world);

// The matrix product C = A x B in float64, row-major and dense: A is m x k, B is k x n; returns
// C (m x n). The reference of the fused operations (core/fused.h). Eigen's GEMM on threads of its
// own (rows split over the cores), so it may be called from a fiber with a small stack.
std::vector<double> reference_matmul(const std::vector<double>& a, const std::vector<double>& b, std::size_t m,
                                     std::size_t n, std::size_t k);

// A matrix result's error: for every row i, max_j |got_ij - want_ij| / max(max_j |want_ij|,
// floor); returns the worst row. Row-wise because a product's elements cancel to near zero
// while the row's scale is what its rounding follows. NaN anywhere gives +inf.
double max_row_rel_err(const std::vector<double>& got, const std::vector<double>& want, std::size_t rows,
                       std::size_t cols, double floor = 1e-6);

// The bound for a fused operation's result in dtype t on `world` ranks, against the float64
// reference: one rounding of the result to t, plus (mm_rs) one rounding of every partial
// product that travels (world partials), each relative to the row's scale.
double matmul_err_bound(DType t, int world, bool reduced);

}  // namespace symm
