// One measurement = one row, from either backend (docs/design.md "Results").
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "core/common.h"

namespace symm {

struct ResultRow {
  std::string backend;  // sim | cuda
  std::string machine;  // machine file stem (sim) or machine kind (cuda), e.g. h200x4
  int world = 0;
  std::string op;    // all_reduce ...
  std::string algo;  // registry id, or nccl / nccl_symm for the baselines
  std::string dtype;
  std::size_t bytes = 0;  // nccl-tests size
  int blocks = 0;
  bool graph = false;  // CUDA-graph replay (sim: graph launch latency)
  double time_us_median = 0, time_us_p10 = 0, time_us_p90 = 0;
  double algbw_GBps = 0, busbw_GBps = 0;
  double max_rel_err = -1;  // -1: not checked (timing-only)
  std::string git_sha;
  // Matmul fused with communication (core/fused.h): the product's global M, N, K; 0 for the
  // collectives. Last in the schema, so readers of the collective columns are unaffected.
  std::size_t m = 0, n = 0, k = 0;
};

// The header line and one line per row, in the schema's column order.
std::string csv_header();
std::string csv_line(const ResultRow& r);
void write_csv(std::ostream& os, const std::vector<ResultRow>& rows, bool header = true);
// Fills algbw/busbw from bytes, time_us_median, op and world (nccl-tests conventions). A fused
// op's row (ag_mm, mm_rs) gets its collective's: bytes is the all-gather's (A gathered) or the
// reduce-scatter's (C reduced), over the whole fused call's time.
void fill_bandwidth(ResultRow& r);
// The commit this binary was built from (set by CMake), "unknown" outside a checkout.
const char* git_sha();

}  // namespace symm
