#include "core/nccl_tests_format.h"

#include <string>
#include <tuple>

namespace symm {
namespace {

// nccl-tests' names for types and reductions.
const char* nccl_type_name(const std::string& dtype) {
  if (dtype == "bf16") return "bfloat16";
  if (dtype == "fp16") return "half";
  if (dtype == "fp32") return "float";
  return dtype.c_str();
}

}  // namespace

void write_nccl_tests(std::FILE* out, const std::vector<ResultRow>& rows, const std::vector<bool>& failed,
                      ReduceOp rop) {
  // Tables in order of first appearance, each holding its rows in their order.
  std::vector<std::tuple<std::string, std::string, std::string, bool>> keys;
  for (const ResultRow& r : rows) {
    const auto k = std::make_tuple(r.op, r.algo, r.dtype, r.graph);
    bool seen = false;
    for (const auto& x : keys) seen = seen || x == k;
    if (!seen) keys.push_back(k);
  }
  for (const auto& k : keys) {
    const auto& [op, algo, dtype, graph] = k;
    const ResultRow* first = nullptr;
    for (const ResultRow& r : rows)
      if (std::make_tuple(r.op, r.algo, r.dtype, r.graph) == k) {
        first = &r;
        break;
      }
    std::fprintf(out, "# symmcoll %s %s world %d: %s %s %s %s\n", first->backend.c_str(), first->machine.c_str(),
                 first->world, op.c_str(), algo.c_str(), dtype.c_str(), graph ? "graph" : "eager");
    // nccl-tests' own header, out-of-place half.
    std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s           out-of-place\n", "", "", "", "", "");
    std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s\n", "size", "count", "type", "redop", "root",
                 "time", "algbw", "busbw", "#wrong");
    std::fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "", "", "", "(us)",
                 "(GB/s)", "(GB/s)", "");
    const bool reduces = op != "all_gather" && op != "barrier";
    double busbw_sum = 0;
    int n = 0, wrong = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const ResultRow& r = rows[i];
      if (std::make_tuple(r.op, r.algo, r.dtype, r.graph) != k) continue;
      const std::size_t elem = r.dtype == "fp32" ? 4 : 2;
      const bool bad = r.max_rel_err >= 0 && i < failed.size() && failed[i];
      const std::string w = r.max_rel_err < 0 ? "N/A" : bad ? "1" : "0";
      // nccl-tests keeps the time 7 wide: fewer decimals as it grows.
      char time[32];
      const double us = r.time_us_median;
      std::snprintf(time, sizeof time, us >= 10000.0 ? "%7.0f" : us >= 100.0 ? "%7.1f" : "%7.2f", us);
      std::fprintf(out, "%12zu  %12zu  %8s  %6s  %6i  %7s  %6.2f  %6.2f  %5s\n", r.bytes, r.bytes / elem,
                   nccl_type_name(r.dtype), reduces ? reduce_op_name(rop) : "none", -1, time, r.algbw_GBps,
                   r.busbw_GBps, w.c_str());
      busbw_sum += r.busbw_GBps;
      wrong += bad;
      ++n;
    }
    std::fprintf(out, "# Out of bounds values : %d %s\n", wrong, wrong ? "FAILED" : "OK");
    std::fprintf(out, "# Avg bus bandwidth    : %g \n#\n", n ? busbw_sum / n : 0.0);
  }
}

}  // namespace symm
