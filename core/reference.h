// CPU reference for every collective, in float64, and the error measure all checks use.
#pragma once

#include <vector>

#include "core/common.h"

namespace symm {

// inputs[r] holds rank r's `in` as float64 (already rounded to the element type).
// Returns each rank's expected `out` in float64.
std::vector<std::vector<double>> reference(Op op, ReduceOp rop, const std::vector<std::vector<double>>& inputs);

// max_i |got_i - want_i| / max(|want_i|, floor): the relative error reported in every row.
// `floor` keeps near-zero sums from dominating; NaN anywhere gives +inf.
double max_rel_err(const std::vector<double>& got, const std::vector<double>& want, double floor = 1e-2);

// The bound a result must meet for dtype t after a reduction over `world` inputs: fp32
// accumulation then one rounding to t, plus the inputs' own values in (-1, 1).
double rel_err_bound(DType t, int world);

}  // namespace symm
