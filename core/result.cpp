#include "core/result.h"

#include <cstdio>
#include <ostream>

#include "core/fused.h"
#include "core/registry.h"
#include "symm_git_sha.h"  // generated at build time by cmake/git_sha.cmake

namespace symm {

std::string csv_header() {
  return "backend,machine,world,op,algo,dtype,bytes,blocks,graph,time_us_median,time_us_p10,"
         "time_us_p90,algbw_GBps,busbw_GBps,max_rel_err,git_sha,M,N,K";
}

std::string csv_line(const ResultRow& r) {
  char nums[256];
  std::snprintf(nums, sizeof nums, "%.3f,%.3f,%.3f,%.3f,%.3f,%.3g", r.time_us_median, r.time_us_p10, r.time_us_p90,
                r.algbw_GBps, r.busbw_GBps, r.max_rel_err);
  return r.backend + "," + r.machine + "," + std::to_string(r.world) + "," + r.op + "," + r.algo + "," + r.dtype + "," +
         std::to_string(r.bytes) + "," + std::to_string(r.blocks) + "," + (r.graph ? "1" : "0") + "," + nums + "," +
         r.git_sha + "," + std::to_string(r.m) + "," + std::to_string(r.n) + "," + std::to_string(r.k);
}

void write_csv(std::ostream& os, const std::vector<ResultRow>& rows, bool header) {
  if (header) os << csv_header() << "\n";
  for (const ResultRow& r : rows) os << csv_line(r) << "\n";
}

void fill_bandwidth(ResultRow& r) {
  if (r.time_us_median <= 0) return;
  r.algbw_GBps = double(r.bytes) / (r.time_us_median * 1e3);  // bytes/ns == GB/s
  const Op collective = !is_fused_op(r.op)                       ? parse_op(r.op)
                        : parse_fused_op(r.op) == FusedOp::kAgMm ? Op::kAllGather
                                                                 : Op::kReduceScatter;
  r.busbw_GBps = r.algbw_GBps * bus_factor(collective, r.world);
}

const char* git_sha() { return SYMM_GIT_SHA; }

}  // namespace symm
