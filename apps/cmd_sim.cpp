// symmcoll run / sweep / list: the simulator's side of the command line.
#include "apps/cmd_sim.h"

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "apps/cli.h"
#include "backends/sim/sim.h"
#include "core/reference.h"
#include "core/result.h"
#include "core/sizes.h"

namespace po = boost::program_options;

namespace symm::apps {
namespace {

// Options run and sweep share. Only `sim` is a backend here: the CUDA backend has its own
// sub-command (bench) because it needs one process per GPU and a launcher.
struct Common {
  std::string backend = "sim";
  std::string machine = "h200x4";
  int world = 0;  // 0: the machine's GPU count
  std::string op = "all_reduce";
  std::string dtype = "bf16";
  std::string reduce = "sum";
  int blocks = 0;
  bool timing_only = false;
  bool eager = false;
  uint64_t seed = 1;
};

void add_common(po::options_description& d, Common& c) {
  // One option per line reads better than the formatter's packing.
  // clang-format off
  d.add_options()
      ("help,h", "show this help")
      ("backend", po::value(&c.backend)->default_value(c.backend),
       "sim (GPU runs: symmcoll bench --backend cuda)")
      ("machine,m", po::value(&c.machine)->default_value(c.machine),
       "machine file: a name from experiments/machines/ (h200x4, h200x8, ...) or a path to an .ini")
      ("world,w", po::value(&c.world)->default_value(c.world),
       "ranks (0: the machine's GPU count); timing-only runs may exceed the GPU count")
      ("op", po::value(&c.op)->default_value(c.op), "all_reduce | reduce_scatter | all_gather | barrier")
      ("dtype", po::value(&c.dtype)->default_value(c.dtype), "bf16 | fp16 | fp32")
      ("reduce", po::value(&c.reduce)->default_value(c.reduce), "reduction: sum | max | min")
      ("blocks", po::value(&c.blocks)->default_value(c.blocks),
       "blocks per rank (0: the algorithm's default for the size)")
      ("timing-only", po::bool_switch(&c.timing_only),
       "no data arrays: predicts time only, no correctness check (fast, any size)")
      ("eager", po::bool_switch(&c.eager),
       "charge eager kernel-launch latency (default: CUDA-graph replay, as nccl-tests -G)")
      ("seed", po::value(&c.seed)->default_value(c.seed), "seed of the random inputs");
  // clang-format on
}

// Parses argv against `d`; returns false after printing help when --help was given.
bool parse(int argc, char** argv, const po::options_description& d, const char* usage,
           po::variables_map* out = nullptr) {
  po::variables_map local;
  po::variables_map& vm = out ? *out : local;
  po::store(po::command_line_parser(argc, argv).options(d).run(), vm);
  if (vm.count("help")) {
    std::cout << usage << "\n" << d << "\n";
    return false;
  }
  po::notify(vm);
  return true;
}

struct Resolved {
  sim::Machine machine;
  int world = 0;
  Op op = Op::kAllReduce;
  DType dtype = DType::kBF16;
  ReduceOp reduce = ReduceOp::kSum;
};

Resolved resolve(const Common& c, const char* cmd) {
  if (c.backend == "cuda")
    fail(ErrorCode::kInvalidArgument, std::string("'") + cmd +
                                          "' runs on the simulator; for GPUs use 'symmcoll launch -n N -- "
                                          "symmcoll bench --backend cuda ...'");
  if (c.backend != "sim")
    fail(ErrorCode::kInvalidArgument, "unknown backend '" + c.backend + "' for " + cmd + " (valid: sim)");
  Resolved r;
  // Names first: a typo in --op should not be reported as a missing machine file.
  r.op = parse_op(c.op);
  r.dtype = parse_dtype(c.dtype);
  r.reduce = parse_reduce_op(c.reduce);
  if (c.blocks < 0) fail(ErrorCode::kInvalidArgument, "blocks=" + std::to_string(c.blocks) + " is negative");
  r.machine = sim::Machine::by_name(c.machine);
  r.world = c.world ? c.world : r.machine.gpus;
  if (r.world < 2 || r.world > kPadWorld)
    fail(ErrorCode::kInvalidArgument,
         "world=" + std::to_string(r.world) + " is outside 2.." + std::to_string(kPadWorld));
  return r;
}

sim::RunSpec make_spec(const Resolved& r, const Common& c, const AlgoInfo& a, std::size_t bytes) {
  sim::RunSpec s;
  s.machine = r.machine;
  s.world = r.world;
  s.algo = &a;
  s.dtype = r.dtype;
  s.op = r.reduce;
  s.bytes = bytes;
  s.blocks = c.blocks;
  s.graph = !c.eager;
  s.timing_only = c.timing_only;
  s.seed = c.seed;
  return s;
}

ResultRow make_row(const sim::RunSpec& s, const sim::RunResult& res) {
  ResultRow row;
  row.backend = "sim";
  row.machine = s.machine.name;
  row.world = s.world;
  row.op = op_name(s.algo->op);
  row.algo = s.algo->id;
  row.dtype = dtype_name(s.dtype);
  row.bytes = s.bytes;
  row.blocks = res.blocks;
  row.graph = s.graph;
  // The simulator is deterministic: one call is the whole distribution.
  row.time_us_median = row.time_us_p10 = row.time_us_p90 = res.time_us;
  row.max_rel_err = s.timing_only ? -1 : res.max_rel_err;
  row.git_sha = git_sha();
  fill_bandwidth(row);
  return row;
}

bool passed(const sim::RunResult& res, bool timing_only) {
  return timing_only || res.max_rel_err <= res.err_bound;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// ---- run ----------------------------------------------------------------------------------

const char* kRunUsage =
    "usage: symmcoll run --algo NAME [--op OP] [--bytes SIZE] [options]\n"
    "\n"
    "Runs one collective on the simulated node: every rank's input is random, the result is\n"
    "compared with a float64 CPU reference, and the predicted time of the call is printed\n"
    "with nccl-tests' algbw / busbw. Exits 1 when the error exceeds the dtype's bound.\n"
    "\n"
    "example: symmcoll run --machine h200x4 --op all_reduce --algo one_shot --bytes 1M --trace t.json\n"
    "         (open t.json in https://ui.perfetto.dev)";

}  // namespace

int cmd_run(int argc, char** argv) {
  Common c;
  std::string algo, bytes_s = "1M", trace;
  int calls = 1;
  po::options_description d("run options", 110, 50);
  add_common(d, c);
  // One option per line reads better than the formatter's packing.
  // clang-format off
  d.add_options()
      ("algo,a", po::value(&algo)->required(),
       "algorithm: alias (one_shot), id suffix (ld_reduce) or full id (all_reduce.ld_reduce); see 'symmcoll list'")
      ("bytes,b", po::value(&bytes_s)->default_value(bytes_s),
       "size in nccl-tests convention (all_gather: the output; reduce_scatter: the input): 4096, 4K, 1M, 1G")
      ("calls", po::value(&calls)->default_value(calls),
       "back-to-back calls on the same buffers; the time is the last call's (exercises epochs)")
      ("trace", po::value(&trace), "write a Chrome trace-event JSON here (open in https://ui.perfetto.dev)");
  // clang-format on
  po::variables_map vm;
  if (!parse(argc, argv, d, kRunUsage, &vm)) return kExitOk;

  // "all_reduce.one_shot" carries its op; a different --op beside it is a contradiction.
  if (algo.find('.') != std::string::npos) {
    const AlgoInfo& a = find_algo(algo);
    if (!vm["op"].defaulted() && c.op != op_name(a.op))
      fail(ErrorCode::kInvalidArgument, "--op " + c.op + " contradicts --algo " + algo);
    c.op = op_name(a.op);
  }
  const Resolved r = resolve(c, "run");
  const AlgoInfo& a = algo.find('.') != std::string::npos ? find_algo(algo) : find_algo(r.op, algo);
  // A barrier moves no payload: bandwidth columns would divide a size nobody sent.
  const bool barrier = a.op == Op::kBarrier;
  const std::size_t bytes = barrier ? 0 : parse_size(bytes_s);
  if (calls < 1) fail(ErrorCode::kInvalidArgument, "calls=" + std::to_string(calls) + " must be at least 1");
  check_args(a, r.dtype, bytes, r.world, c.blocks ? c.blocks : a.default_blocks(bytes, r.world));
  if (!trace.empty()) check_writable(trace);

  sim::RunSpec spec = make_spec(r, c, a, bytes);
  spec.calls = calls;
  spec.trace_path = trace;
  const sim::RunResult res = sim::run(spec);
  const ResultRow row = make_row(spec, res);

  std::printf("symmcoll run: sim %s, world %d, %s (%s), %s %s, %s bytes, %d blocks, %s launch\n",
              r.machine.name.c_str(), r.world, a.id.c_str(), a.alias.c_str(), dtype_name(r.dtype),
              reduce_op_name(r.reduce), format_size(bytes).c_str(), res.blocks, c.eager ? "eager" : "graph");
  std::printf("  predicted latency  %10.3f us\n", res.time_us);
  if (!barrier) {
    std::printf("  algbw              %10.2f GB/s\n", row.algbw_GBps);
    std::printf("  busbw              %10.2f GB/s\n", row.busbw_GBps);
  }
  const bool ok = passed(res, c.timing_only);
  if (c.timing_only)
    std::printf("  max rel error      not checked (timing-only)\n");
  else
    std::printf("  max rel error      %10.3g  (bound %.3g) %s\n", res.max_rel_err, res.err_bound,
                ok ? "PASS" : "FAIL");
  std::printf("  simulated          %llu events in %.3f s\n", (unsigned long long)res.events, res.wall_s);
  if (!trace.empty()) std::printf("  trace              %s\n", trace.c_str());
  if (!ok) {
    std::fprintf(stderr, "symmcoll: error: max relative error %.3g exceeds the %s bound %.3g\n",
                 res.max_rel_err, dtype_name(r.dtype), res.err_bound);
    return kExitFail;
  }
  return kExitOk;
}

// ---- sweep --------------------------------------------------------------------------------

namespace {

const char* kSweepUsage =
    "usage: symmcoll sweep [--op OP] [--algo all|A,B] [--sizes SPEC] [--csv FILE] [options]\n"
    "\n"
    "Runs every (algorithm, size) on the simulated node and prints an nccl-tests-style table;\n"
    "--csv writes the result schema of core/result.h (the one GPU runs use too). Sizes up to\n"
    "--check-up-to run with data and are checked against the CPU reference; larger ones run\n"
    "timing-only (max_rel_err = -1 in the CSV). Combinations an algorithm does not support\n"
    "(a size above its maximum, a world outside its range) are skipped with a note.\n"
    "Exits 1 when any checked row exceeds its error bound.\n"
    "\n"
    "example: symmcoll sweep --machine h200x8 --op all_reduce --algo one_shot,two_shot --sizes 4K:256M:x4";

}  // namespace

int cmd_sweep(int argc, char** argv) {
  Common c;
  std::string algo_spec = "all", sizes_spec = "4K:256M", csv, check_up_to_s = "16M";
  bool quiet = false;
  po::options_description d("sweep options", 110, 50);
  add_common(d, c);
  // One option per line reads better than the formatter's packing.
  // clang-format off
  d.add_options()
      ("algo,a", po::value(&algo_spec)->default_value(algo_spec),
       "'all' (every algorithm of --op) or a comma list of names; see 'symmcoll list'")
      ("sizes,s", po::value(&sizes_spec)->default_value(sizes_spec),
       "A:B (x2 steps), A:B:xF (xF steps) or a comma list; ignored for --op barrier")
      ("check-up-to", po::value(&check_up_to_s)->default_value(check_up_to_s),
       "largest size run with data and checked; larger sizes run timing-only")
      ("csv", po::value(&csv), "write the rows here (core/result.h schema; --reduce sum only: it has no reduction column)")
      ("quiet,q", po::bool_switch(&quiet), "no progress on stderr");
  // clang-format on
  if (!parse(argc, argv, d, kSweepUsage)) return kExitOk;

  const Resolved r = resolve(c, "sweep");
  const std::vector<const AlgoInfo*> algos = parse_algo_list(r.op, algo_spec);
  // A barrier moves no payload: one row per algorithm, bytes = 0.
  const std::vector<std::size_t> sizes =
      r.op == Op::kBarrier ? std::vector<std::size_t>{0} : parse_size_list(sizes_spec);
  const std::size_t check_up_to = parse_size(check_up_to_s);
  if (r.reduce != ReduceOp::kSum)
    refuse_with_csv(csv, "--reduce", reduce_op_name(r.reduce), "reduction", "sum");
  if (!csv.empty()) check_writable(csv);

  std::vector<ResultRow> rows;
  std::vector<std::string> status;  // PASS / FAIL / "-" per row, for the table
  int failures = 0, skipped = 0;
  std::string first_skip;
  const bool tty = isatty(fileno(stderr));
  const std::size_t total = algos.size() * sizes.size();
  std::size_t done = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };

  for (const AlgoInfo* a : algos) {
    const double ta = elapsed();
    int ran = 0;
    for (const std::size_t bytes : sizes) {
      ++done;
      try {
        check_args(*a, r.dtype, bytes, r.world, c.blocks ? c.blocks : a->default_blocks(bytes, r.world));
      } catch (const Error& e) {
        // Per-combination limits are expected in a sweep; the global inputs were checked above.
        if (!quiet)
          std::fprintf(stderr, "%ssweep: skip %s %s: %s\n", tty ? "\r\033[K" : "", a->id.c_str(),
                       format_size(bytes).c_str(), e.what());
        if (first_skip.empty()) first_skip = e.what();
        ++skipped;
        continue;
      }
      sim::RunSpec spec = make_spec(r, c, *a, bytes);
      spec.timing_only = c.timing_only || bytes > check_up_to;
      if (!quiet && tty)
        std::fprintf(stderr, "\r\033[K[%zu/%zu] %s %s%s ...", done, total, a->id.c_str(),
                     format_size(bytes).c_str(), spec.timing_only ? " (timing-only)" : "");
      const sim::RunResult res = sim::run(spec);
      rows.push_back(make_row(spec, res));
      const bool ok = passed(res, spec.timing_only);
      failures += !ok;
      status.push_back(spec.timing_only ? "-" : ok ? "PASS" : "FAIL");
      ++ran;
    }
    if (!quiet)
      std::fprintf(stderr, "%ssweep: %-32s %2d sizes in %6.2f s (total %.1f s, %zu/%zu)\n",
                   tty ? "\r\033[K" : "", a->id.c_str(), ran, elapsed() - ta, elapsed(), done, total);
  }
  if (rows.empty())
    fail(ErrorCode::kUnsupported,
         "nothing to run: every combination was rejected (first: " + first_skip + ")");

  if (!csv.empty()) {
    std::ofstream f(csv);
    write_csv(f, rows);
    if (!f) fail(ErrorCode::kIo, "writing '" + csv + "' failed");
  }

  std::printf("# symmcoll sweep: sim %s, world %d, %s, %s %s, %s launch, git %s\n", r.machine.name.c_str(),
              r.world, op_name(r.op), dtype_name(r.dtype), reduce_op_name(r.reduce),
              c.eager ? "eager" : "graph", git_sha());
  std::printf("# %12s  %-34s %6s %12s %12s %12s %10s %6s\n", "size(B)", "algorithm", "blocks", "time(us)",
              "algbw(GB/s)", "busbw(GB/s)", "max_err", "check");
  // Size-major order puts the competing algorithms of one size next to each other.
  for (const std::size_t bytes : sizes)
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const ResultRow& row = rows[i];
      if (row.bytes != bytes) continue;
      const std::string err = row.max_rel_err < 0 ? "-" : fmt("%.2e", row.max_rel_err);
      std::printf("  %12zu  %-34s %6d %12.3f %12.2f %12.2f %10s %6s\n", row.bytes,
                  algo_label(find_algo(row.algo)).c_str(), row.blocks, row.time_us_median, row.algbw_GBps,
                  row.busbw_GBps, err.c_str(), status[i].c_str());
    }
  std::printf("# %zu rows, %d skipped, %d failed; data-checked up to %s%s\n", rows.size(), skipped, failures,
              format_size(check_up_to).c_str(), csv.empty() ? "" : ("; csv: " + csv).c_str());
  if (failures) {
    std::fprintf(stderr, "symmcoll: error: %d row(s) exceed their error bound (marked FAIL)\n", failures);
    return kExitFail;
  }
  return kExitOk;
}

// ---- list ---------------------------------------------------------------------------------

namespace {

const char* kListUsage =
    "usage: symmcoll list [--markdown]\n"
    "\n"
    "Shows every algorithm in the registry with the constraints check_args() enforces.\n"
    "Names accepted by --algo: the alias, the id's suffix, or the full id.";

std::string worlds(const AlgoInfo& a) {
  return std::to_string(a.min_world) + ".." + std::to_string(a.max_world);
}
// The largest call check_args accepts. It may depend on the world (programs on fixed per-block
// regions): then the per-rank limit, or the limit at each power-of-two world.
std::string max_bytes(const AlgoInfo& a) {
  const int worlds[] = {2, 4, 8};
  std::size_t total[3], rank[3];
  for (int i = 0; i < 3; ++i) {
    total[i] = a.max_bytes_for(worlds[i]);
    rank[i] = a.per_rank_bytes(total[i], worlds[i]);
  }
  if (total[0] == 0) return "-";
  if (total[0] == total[1] && total[1] == total[2]) return format_size(total[0]);
  if (rank[0] == rank[1] && rank[1] == rank[2]) return format_size(rank[0]) + " per rank";
  std::string s;
  for (int i = 0; i < 3; ++i) s += (i ? ", " : "") + format_size(total[i]) + " at " + std::to_string(worlds[i]);
  return s;
}

}  // namespace

int cmd_list(int argc, char** argv) {
  bool markdown = false;
  po::options_description d("list options", 110, 50);
  d.add_options()("help,h", "show this help")("markdown", po::bool_switch(&markdown),
                                              "print a markdown table (README, paper)");
  if (!parse(argc, argv, d, kListUsage)) return kExitOk;
  if (markdown) {
    std::printf("| id | alias | op | worlds | max bytes | multicast | summary |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const AlgoInfo& a : algorithms())
      std::printf("| `%s` | `%s` | %s | %s | %s | %s | %s |\n", a.id.c_str(), a.alias.c_str(), op_name(a.op),
                  worlds(a).c_str(), max_bytes(a).c_str(), a.needs_multicast ? "yes" : "no",
                  a.summary.c_str());
    return kExitOk;
  }
  // "1M per rank" and "64K at 2, 128K at 4, ..." are wider than the header: size the column.
  int width = int(std::strlen("max_bytes"));
  for (const AlgoInfo& a : algorithms()) width = std::max(width, int(max_bytes(a).size()));
  std::printf("%-34s %-14s %-15s %-7s %-*s %-5s %s\n", "id", "alias", "op", "worlds", width, "max_bytes",
              "mcast", "summary");
  for (const AlgoInfo& a : algorithms())
    std::printf("%-34s %-14s %-15s %-7s %-*s %-5s %s\n", a.id.c_str(), a.alias.c_str(), op_name(a.op),
                worlds(a).c_str(), width, max_bytes(a).c_str(), a.needs_multicast ? "yes" : "no",
                a.summary.c_str());
  return kExitOk;
}

}  // namespace symm::apps
