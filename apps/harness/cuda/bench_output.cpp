// The collective bench's output (bench_impl.h): the header, one line per row (or, with
// --format nccl-tests, the rows collected and printed as nccl-tests' tables at the end), the
// results CSV, and notes; all on rank 0.
#include <cstdio>
#include <string>

#include "apps/harness/cuda/bench_common.h"
#include "apps/harness/cuda/bench_impl.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/team_run.h"
#include "core/nccl_tests_format.h"
#include "core/result.h"

namespace symm::cuda::coll_bench {

void Bench::print_header() {
  if (team()) print_team_header(rt_);
  if (rt_.rank() != 0) return;
  std::printf("# symmcoll bench, backend cuda, machine %s, world %d, device %s, git %s, pdl %s\n", machine_.c_str(),
              rt_.world(), rt_.device_name().c_str(), git_sha(), programmatic_launch() ? "on" : "off");
  std::printf(
      "# times: per call, max over ranks of each rank's median / p10 / p90; err: max relative error vs "
      "float64 reference (-1: not checked)\n");
  print_team_lockstep(rt_);
  if (!o_.nccl_tests_format)
    std::printf("%-15s %-28s %-5s %10s %6s %5s %5s %10s %10s %10s %9s %9s %9s\n", "op", "algo", "type", "bytes",
                "blocks", "thr", "graph", "time_us", "p10_us", "p90_us", "algbw", "busbw", "err");
  std::fflush(stdout);
}

void Bench::print_nccl_tests() {
  if (rt_.rank() == 0 && o_.nccl_tests_format) write_nccl_tests(stdout, rows_, failed_, o_.rop);
}

void Bench::note(const std::string& s) {
  if (rt_.rank() == 0) std::printf("# %s\n", s.c_str());
}

void Bench::emit(const ResultRow& r, int threads, bool failed) {
  if (rt_.rank() != 0) return;
  if (o_.nccl_tests_format) {
    rows_.push_back(r);
    failed_.push_back(failed);
  } else {
    std::printf("%-15s %-28s %-5s %10zu %6d %5d %5d %10.2f %10.2f %10.2f %9.2f %9.2f %9.2g\n", r.op.c_str(),
                r.algo.c_str(), r.dtype.c_str(), r.bytes, r.blocks, threads, int(r.graph), r.time_us_median,
                r.time_us_p10, r.time_us_p90, r.algbw_GBps, r.busbw_GBps, r.max_rel_err);
  }
  std::fflush(stdout);
  csv_.row(csv_line(r));
}

}  // namespace symm::cuda::coll_bench
