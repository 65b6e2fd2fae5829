// symmcoll run / sweep / list: the simulator's side of the command line.
#include "apps/cmd_sim.h"

#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli.h"
#include "backends/sim/sim.h"
#include "core/auto_select.h"
#include "core/fused.h"
#include "core/nccl_tests_format.h"
#include "core/output_file.h"
#include "core/plan.h"
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
  std::string mode = "graph";
  std::string pdl = "on";    // device programs: programmatic dependent launch (as bench --backend cuda --pdl)
  bool serial_tail = false;  // the CUDA verbs' last step as before ec6ad13 (RunSpec::serial_tail)
  std::string seed = "1";    // parse_count: Boost would take "-5" as 2^64 - 5
  int streams = 3;           // host plans
  std::string chunk = "0";   // host plans: bytes per copy / progress flag
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
      ("op", po::value(&c.op)->default_value(c.op),
       "all_reduce | reduce_scatter | all_gather | barrier, or a fused matmul ag_mm | mm_rs (its own options: "
       "--op ag_mm --help)")
      ("dtype", po::value(&c.dtype)->default_value(c.dtype), "bf16 | fp16 | fp32 (not for barrier)")
      ("reduce", po::value(&c.reduce)->default_value(c.reduce),
       "reduction: sum | max | min (all_reduce and reduce_scatter only)")
      ("blocks", po::value(&c.blocks)->default_value(c.blocks),
       "blocks per rank (0: the algorithm's default for the size)")
      ("timing-only", po::bool_switch(&c.timing_only),
       "no data arrays: predicts time only, no correctness check (fast, any size)")
      ("mode", po::value(&c.mode)->default_value(c.mode),
       "launch latency charged: graph (CUDA-graph replay, as nccl-tests -G) | eager")
      ("pdl", po::value(&c.pdl)->default_value(c.pdl),
       "on: device programs' back-to-back calls launch with programmatic dependent launch, as the CUDA "
       "bench's default (Machine pdl_saving_us each); off: as bench --backend cuda --pdl off")
      ("serial-tail", po::bool_switch(&c.serial_tail),
       "time a block's copies and reduces as the CUDA backend ran them before ec6ad13: a thread's last "
       "vectors (fewer than its 4 a step) one at a time, a remote load round trip each (for GPU rows measured "
       "then: experiments/fidelity.py)")
      ("seed", po::value(&c.seed)->default_value(c.seed), "seed of the random inputs")
      ("streams", po::value(&c.streams)->default_value(c.streams),
       "host plans (ce, ce_overlap): streams per rank, the caller's included (1..8)")
      ("chunk-bytes", po::value(&c.chunk)->default_value(c.chunk),
       "host plans: bytes per copy and progress flag (0: the plan's default)");
  // clang-format on
}

// Parses argv against `d`; returns false after printing help when --help was given.
bool parse(int argc, char** argv, const po::options_description& d, const char* usage,
           po::variables_map* out = nullptr) {
  po::variables_map local;
  po::variables_map& vm = out ? *out : local;
  parse_args(argc, argv, d, vm);
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
  bool graph = true;
  bool pdl = true;
  bool serial_tail = false;
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
  r.op = for_option("--op", [&] { return parse_op(c.op); });
  r.dtype = for_option("--dtype", [&] { return parse_dtype(c.dtype); });
  r.reduce = for_option("--reduce", [&] { return parse_reduce_op(c.reduce); });
  r.graph = parse_mode(c.mode, /*allow_both=*/false)[0];
  if (c.pdl != "on" && c.pdl != "off") fail(ErrorCode::kInvalidArgument, "--pdl " + c.pdl + ": expected on or off");
  r.pdl = c.pdl == "on";
  r.serial_tail = c.serial_tail;
  parse_count(c.seed, "--seed");
  if (c.blocks < 0) fail(ErrorCode::kInvalidArgument, "--blocks " + std::to_string(c.blocks) + " is negative");
  check_streams(c.streams);
  if (c.chunk != "0" && for_option("--chunk-bytes", [&] { return parse_size(c.chunk); }) % kVecBytes)
    fail(ErrorCode::kInvalidArgument, "--chunk-bytes " + c.chunk + " is not a multiple of 16");
  r.machine = for_option("--machine", [&] { return sim::Machine::by_name(c.machine); });
  if (!c.world && r.machine.team) fail(ErrorCode::kInvalidArgument, sim::team_world_hint(r.machine));
  r.world = c.world ? c.world : r.machine.gpus;
  if (r.world < 2 || r.world > kPadWorld)
    fail(ErrorCode::kInvalidArgument,
         "--world " + std::to_string(r.world) + " is outside 2.." + std::to_string(kPadWorld));
  return r;
}

// The result schema has no column for the reduction or the host plans' streams and chunks: with
// --csv they stay at their defaults (refuse_with_csv, apps/cli.h), in run and sweep alike.
void refuse_unrecorded_with_csv(const std::string& csv, const Common& c, const Resolved& r) {
  if (r.reduce != ReduceOp::kSum) refuse_with_csv(csv, "--reduce", reduce_op_name(r.reduce), "reduction", "sum");
  if (c.streams != 3) refuse_with_csv(csv, "--streams", std::to_string(c.streams), "plan streams", "3");
  if (c.chunk != "0") refuse_with_csv(csv, "--chunk-bytes", c.chunk, "chunk bytes", "0");
}

// ---- options that mean nothing for what runs: refused (one line), never ignored --------------

bool given(const po::variables_map& vm, const char* option) { return vm.count(option) && !vm[option].defaulted(); }

// A barrier moves no data (no dtype, reduction or size: `sizes` names run's or sweep's size
// options), and an all-gather reduces nothing.
void refuse_unused(const po::variables_map& vm, Op op, std::initializer_list<const char*> sizes) {
  if (op == Op::kBarrier) {
    std::vector<const char*> options = {"dtype", "reduce"};
    options.insert(options.end(), sizes);
    for (const char* o : options)
      if (given(vm, o))
        fail(ErrorCode::kInvalidArgument,
             std::string("--") + o + " means nothing for a barrier (it moves no data); drop it");
  }
  if (op == Op::kAllGather && given(vm, "reduce"))
    fail(ErrorCode::kInvalidArgument, "--reduce means nothing for all_gather (it reduces nothing); drop it");
}

// --streams and --chunk-bytes shape host plans (copy engines and stream flags, core/plan.h): a
// device program has neither. Refused unless one of `algos` (what runs; `what` names them when
// there are several) is a host plan.
void refuse_plan_knobs(const po::variables_map& vm, const Common& c, Op op, const std::vector<const AlgoInfo*>& algos,
                       const std::string& what = "") {
  for (const AlgoInfo* a : algos)
    if (a->plan) return;
  std::string plans;
  for (const AlgoInfo& a : algorithms())
    if (a.op == op && a.plan) plans += (plans.empty() ? "" : ", ") + (a.alias.empty() ? a.id : a.alias);
  const std::pair<const char*, std::string> knobs[] = {{"streams", std::to_string(c.streams)},
                                                       {"chunk-bytes", c.chunk}};
  for (const auto& [o, value] : knobs) {
    if (!given(vm, o)) continue;
    const std::string runs =
        algos.size() == 1 && what.empty()
            ? algos[0]->id + (algos[0]->alias.empty() ? "" : " (" + algos[0]->alias + ")") + ", a device program"
            : what + ", device programs";
    const std::string sets = std::string(o) == "streams" ? "streams" : "chunks";
    fail(ErrorCode::kInvalidArgument,
         "--" + std::string(o) + " " + value + " means nothing for " + runs + ": " +
             (plans.empty() ? std::string("no ") + op_name(op) + " algorithm is a host plan"
                            : "it sets the host plans' " + sets + " (" + op_name(op) + ": " + plans + ")") +
             "; drop it");
  }
}

// One call of algorithm a at `bytes` as the resolved options describe it (machine, world, type,
// reduction, launch mode); the rest at RunSpec's defaults.
sim::RunSpec base_spec(const Resolved& r, const AlgoInfo& a, std::size_t bytes) {
  sim::RunSpec s;
  s.machine = r.machine;
  s.world = r.world;
  s.algo = &a;
  s.dtype = r.dtype;
  s.op = r.reduce;
  s.bytes = bytes;
  s.graph = r.graph;
  s.pdl = r.pdl;
  s.serial_tail = r.serial_tail;
  return s;
}

sim::RunSpec make_spec(const Resolved& r, const Common& c, const AlgoInfo& a, std::size_t bytes) {
  sim::RunSpec s = base_spec(r, a, bytes);
  s.blocks = c.blocks;
  s.timing_only = c.timing_only;
  s.seed = parse_count(c.seed, "--seed");
  s.streams = c.streams;
  s.chunk_bytes = c.chunk == "0" ? 0 : for_option("--chunk-bytes", [&] { return parse_size(c.chunk); });
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

// "bf16 sum"; "bf16" for an all-gather, which reduces nothing.
std::string data_kind(Op op, const Resolved& r) {
  return std::string(dtype_name(r.dtype)) + (op == Op::kAllGather ? "" : std::string(" ") + reduce_op_name(r.reduce));
}

bool passed(const sim::RunResult& res, bool timing_only) { return timing_only || res.max_rel_err <= res.err_bound; }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// --algo auto: the machine's table entry for one size (core/auto_select.h), printed with why.
// --blocks beside it is refused: auto runs the block count its table chose.
void refuse_auto_blocks(const Common& c) {
  if (c.blocks)
    fail(ErrorCode::kInvalidArgument,
         "--blocks " + std::to_string(c.blocks) + " with --algo auto: auto runs the block count its table chose");
}

// ---- --algo auto without a table: the simulator's own choice, cached ----------------------
// A machine with no generated table (a machine file given by path, or one never swept) gets no
// fixed rule: every algorithm of the op that needs no multicast and accepts the call at its default
// block count runs timing-only on the machine file, and the fastest (ties: the smaller id) is
// the choice, as experiments/auto_table.py picks among simulated rows. The answers are cached per
// machine-file content ($XDG_CACHE_HOME or ~/.cache, symmcoll/auto/<name>-<hash>.csv), one row per
// (op, world, dtype, mode, bytes); SYMMCOLL_AUTO_CACHE=0 turns the cache off.

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

std::string auto_cache_path(const sim::Machine& m) {
  const char* off = std::getenv("SYMMCOLL_AUTO_CACHE");
  if (off && std::string(off) == "0") return "";
  std::ifstream in(m.path);
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  std::string dir;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = x;
  else if (const char* home = std::getenv("HOME"); home && *home)
    dir = std::string(home) + "/.cache";
  else
    return "";
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(text.str())));
  return dir + "/symmcoll/auto/" + m.name + "-" + hash + ".csv";
}

std::string auto_cache_key(const Resolved& r, std::size_t bytes) {
  // --pdl off (as bench --pdl off) is a launch mode of its own: "0n" / "1n"; --serial-tail adds "t".
  return std::string(op_name(r.op)) + "," + std::to_string(r.world) + "," + dtype_name(r.dtype) + "," +
         (r.graph ? "1" : "0") + (r.pdl ? "" : "n") + (r.serial_tail ? "t" : "") + "," + std::to_string(bytes);
}

AutoChoice simulate_auto(const Resolved& r, std::size_t bytes) {
  const std::string cache = auto_cache_path(r.machine);
  const std::string key = auto_cache_key(r, bytes);
  if (!cache.empty()) {  // lines: op,world,dtype,graph,bytes,algo,time_us
    std::ifstream in(cache);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(key + ",", 0) != 0) continue;
      const std::string rest = line.substr(key.size() + 1);
      const std::size_t comma = rest.find(',');
      try {
        AutoChoice c;
        c.algo = &find_algo(rest.substr(0, comma));
        c.source = "simulated";
        c.why = "no table for machine " + r.machine.name + ": the simulator's fastest (" + rest.substr(comma + 1) +
                " us), cached in " + cache;
        return c;
      } catch (const Error&) {
        break;  // an id the registry no longer has: simulate again
      }
    }
  }
  const AlgoInfo* best = nullptr;
  double best_us = 0;
  for (const AlgoInfo& a : algorithms()) {
    if (a.op != r.op || a.needs_multicast) continue;
    const int blocks = a.default_blocks(bytes, r.world);
    try {
      check_args(a, r.dtype, bytes, r.world, blocks, r.reduce);
      if (blocks > r.machine.sms) continue;
      sim::RunSpec s = base_spec(r, a, bytes);
      s.timing_only = true;
      const double us = sim::run(s).time_us;
      if (!best || us < best_us || (us == best_us && a.id < best->id)) best = &a, best_us = us;
    } catch (const Error&) {
      continue;  // refused at this size or world: not a candidate
    }
  }
  if (!best) return auto_rule(r.op, bytes, r.world, r.dtype);  // throws the bandwidth program's reason
  if (!cache.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(cache).parent_path(), ec);
    std::ofstream out(cache, std::ios::app);  // a failed write only loses the cache
    char us[32];
    std::snprintf(us, sizeof us, "%.4f", best_us);
    if (out) out << key << "," << best->id << "," << us << "\n";
  }
  AutoChoice c;
  c.algo = best;
  c.source = "simulated";
  char us[32];
  std::snprintf(us, sizeof us, "%.2f", best_us);
  c.why = "no table for machine " + r.machine.name + ": the simulator's fastest of the op's algorithms (" + us +
          " us), simulated now" + (cache.empty() ? std::string() : ", cached in " + cache);
  return c;
}

// `prefix`: "# " in sweep, whose stdout is a table (or nccl-tests' format) with '#' comments.
AutoChoice choose_auto(const Resolved& r, std::size_t bytes, const char* prefix = "") {
  AutoChoice a = auto_choose(AutoQuery{r.machine.name, r.op, bytes, r.world, r.dtype, r.graph});
  if (a.source == "rule") a = simulate_auto(r, bytes);
  std::printf("%sauto: %s %s: %s at %s; %s\n", prefix, op_name(r.op), format_size(bytes).c_str(), a.algo->id.c_str(),
              a.blocks ? ("blocks=" + std::to_string(a.blocks)).c_str() : "its default block count", a.why.c_str());
  return a;
}

// ---- the cost of a data-mode run, known before it starts (refuse_data_cost, apps/cli.h) -------
// `run --bytes 1G` once held 15.8 GB and ran for minutes.

inline constexpr std::size_t kCalibrateAbove = 16u << 20;  // smaller runs are cheap: not estimated

// Host memory a data-mode simulation holds: every rank's symmetric heap (in, out, scratch), every
// rank's input as float, and the float64 reference of one rank's output. Within 10% of the peak
// resident size measured for one_shot at 16M and 64M on 4 ranks (335 MB and 1.32 GB).
double data_mode_bytes(const AlgoInfo& a, DType t, std::size_t bytes, int world) {
  const double w = world, elem = double(dtype_size(t));
  const double in = double(a.in_bytes(bytes, world)), out = double(a.out_bytes(bytes, world));
  return w * (in + out + double(a.scratch_bytes(bytes, world))) + w * in / elem * 4 + out / elem * 8;
}

// Throws kInvalidArgument naming `what` ("--bytes 1G") and `remedy` when a data-mode run of
// `a` at `bytes` needs too much memory or time. Time is scaled from a ~1M data-mode run of the
// same algorithm on this host (the simulator's cost grows with the bytes it moves), times `calls`.
void check_data_cost(const Resolved& r, const Common& c, const AlgoInfo& a, std::size_t bytes, const std::string& what,
                     const std::string& remedy, int calls = 1) {
  const std::string subject = a.id + " on " + std::to_string(r.world) + " ranks";
  refuse_data_cost(what, subject, data_mode_bytes(a, r.dtype, bytes, r.world), -1, remedy);
  if (bytes <= kCalibrateAbove) return;
  const std::size_t unit = 64 * std::size_t(r.world);
  const std::size_t calib = (std::size_t(1) << 20) / unit * unit;
  sim::RunSpec spec = make_spec(r, c, a, calib);
  try {
    check_args(a, r.dtype, calib, r.world, c.blocks ? c.blocks : a.default_blocks(calib, r.world), r.reduce);
  } catch (const Error&) {
    return;  // no comparable small run (block count, size granularity): no time estimate
  }
  const double seconds = sim::run(spec).wall_s * double(bytes) / double(calib) * calls;
  refuse_data_cost(what, a.id, 0, seconds, remedy, " (scaled from a " + format_size(calib) + " run)");
}

// ---- run ----------------------------------------------------------------------------------

// The run command's usage; the fused algorithms' names come from the registry (core/fused.h).
std::string run_usage() {
  return "usage: symmcoll run --algo NAME [--op OP] [--bytes SIZE] [options]\n"
         "\n"
         "Runs one collective on the simulated node: every rank's input is random, the result is\n"
         "compared with a float64 CPU reference, and the predicted time of the call is printed\n"
         "with nccl-tests' algbw / busbw. Exits 1 when the error exceeds the dtype's bound.\n"
         "The fused matmuls run the same way: --op ag_mm | mm_rs with --shape 8b|70b (or --n, --k) and --m,\n"
         "algorithms (" +
         fused_alias_list() +
         ") or the baselines cublaslt, seq_coll_gemm\n"
         "(see 'symmcoll run --op ag_mm --help' and 'symmcoll list').\n"
         "\n"
         "example: symmcoll run --machine h200x4 --op all_reduce --algo one_shot --bytes 1M --trace t.json\n"
         "         (open t.json in https://ui.perfetto.dev)\n"
         "         symmcoll run --machine h200x4 --op ag_mm --algo ce --shape 8b --m 4096";
}

}  // namespace

int cmd_run(int argc, char** argv) {
  if (names_fused_op(argc, argv)) return cmd_fused_sim(argc, argv, /*sweep=*/false);
  Common c;
  std::string algo, bytes_s = "1M", trace, csv;
  int calls = 1;
  po::options_description d("run options", 110, 50);
  add_common(d, c);
  // One option per line reads better than the formatter's packing.
  // clang-format off
  d.add_options()
      ("algo,a", po::value(&algo)->required(),
       "algorithm: alias (one_shot), id suffix (ld_reduce), full id (all_reduce.ld_reduce), or auto (the machine's "
       "table, experiments/auto/<machine>.csv); see 'symmcoll list'")
      ("bytes,b", po::value(&bytes_s)->default_value(bytes_s),
       "size in nccl-tests convention (all_gather: the output; reduce_scatter: the input): 4096, 4K, 1M, 1G")
      ("calls", po::value(&calls)->default_value(calls),
       "back-to-back calls on the same buffers; the time is the last call's (exercises epochs)")
      ("trace", po::value(&trace), "write a Chrome trace-event JSON here (open in https://ui.perfetto.dev)")
      ("csv", po::value(&csv), "write the row here (core/result.h schema, as sweep; not with --reduce max|min, "
                               "--streams or --chunk-bytes off their defaults: no column records them)");
  // clang-format on
  po::variables_map vm;
  static const std::string usage = run_usage();
  if (!parse(argc, argv, d, usage.c_str(), &vm)) return kExitOk;

  // "all_reduce.one_shot" carries its op; a different --op beside it is a contradiction.
  if (algo.find('.') != std::string::npos) {
    const AlgoInfo& a = for_option("--algo", [&]() -> const AlgoInfo& { return find_algo(algo); });
    if (!vm["op"].defaulted() && c.op != op_name(a.op))
      fail(ErrorCode::kInvalidArgument, "--op " + c.op + " contradicts --algo " + algo);
    c.op = op_name(a.op);
  }
  const Resolved r = resolve(c, "run");
  if (algo == "auto") {
    if (r.op == Op::kBarrier) fail(ErrorCode::kInvalidArgument, "--algo auto has no barrier choice; name one");
    const std::size_t b = for_option("--bytes", [&] { return parse_size(bytes_s); });
    refuse_auto_blocks(c);
    const AutoChoice choice = for_option("--algo", [&] { return choose_auto(r, b); });
    algo = choice.algo->id;
    c.blocks = choice.blocks;
  }
  const AlgoInfo& a = for_option("--algo", [&]() -> const AlgoInfo& {
    return algo.find('.') != std::string::npos ? find_algo(algo) : find_algo(r.op, algo);
  });
  // A barrier moves no payload: no size, no dtype, no reduction, no bandwidth, no error bound.
  const bool barrier = a.op == Op::kBarrier;
  refuse_unused(vm, a.op, {"bytes"});
  refuse_plan_knobs(vm, c, a.op, {&a});
  const std::size_t bytes = barrier ? 0 : for_option("--bytes", [&] { return parse_size(bytes_s); });
  if (calls < 1) fail(ErrorCode::kInvalidArgument, "--calls " + std::to_string(calls) + " must be at least 1");
  check_args(a, r.dtype, bytes, r.world, c.blocks ? c.blocks : a.default_blocks(bytes, r.world));
  refuse_unrecorded_with_csv(csv, c, r);
  if (!trace.empty()) check_writable(trace);
  if (!csv.empty()) check_writable(csv);
  if (!c.timing_only && !barrier)
    check_data_cost(r, c, a, bytes, "--bytes " + bytes_s,
                    "add --timing-only to predict the time without data, or lower --bytes", calls);

  sim::RunSpec spec = make_spec(r, c, a, bytes);
  spec.calls = calls;
  spec.trace_path = trace;
  const sim::RunResult res = sim::run(spec);
  const ResultRow row = make_row(spec, res);

  const char* launch = r.graph ? "graph" : "eager";
  if (barrier)
    std::printf("symmcoll run: sim %s, world %d, %s (%s), %d blocks, %s launch\n", r.machine.name.c_str(), r.world,
                a.id.c_str(), a.alias.c_str(), res.blocks, launch);
  else
    std::printf("symmcoll run: sim %s, world %d, %s (%s), %s, %s bytes, %d blocks, %s launch\n", r.machine.name.c_str(),
                r.world, a.id.c_str(), a.alias.c_str(), data_kind(a.op, r).c_str(), format_size(bytes).c_str(),
                res.blocks, launch);
  std::printf("  predicted latency  %10.3f us\n", res.time_us);
  if (!barrier) {
    std::printf("  algbw              %10.2f GB/s\n", row.algbw_GBps);
    std::printf("  busbw              %10.2f GB/s\n", row.busbw_GBps);
  }
  // A barrier has no output to check: its proof is that it ended (no deadlock, no race).
  const bool ok = barrier || passed(res, c.timing_only);
  if (c.timing_only && !barrier)
    std::printf("  max rel error      not checked (timing-only)\n");
  else if (!barrier)
    std::printf("  max rel error      %10.3g  (bound %.3g) %s\n", res.max_rel_err, res.err_bound, ok ? "PASS" : "FAIL");
  std::printf("  simulated          %llu events in %.3f s\n", (unsigned long long)res.events, res.wall_s);
  if (!trace.empty()) std::printf("  trace              %s\n", trace.c_str());
  if (!csv.empty()) {
    OutputFile f(csv);
    write_csv(f.stream(), {row});
    f.commit();
    std::printf("  csv                %s\n", csv.c_str());
  }
  if (!ok) {
    std::fprintf(stderr, "symmcoll: error: max relative error %.3g exceeds the %s bound %.3g\n", res.max_rel_err,
                 dtype_name(r.dtype), res.err_bound);
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
    "Exits 1 when any checked row exceeds its error bound. The fused matmuls sweep shapes and M\n"
    "values instead: --op ag_mm,mm_rs --shape 8b,70b --m 4096,8192 (see 'symmcoll sweep --op ag_mm --help').\n"
    "\n"
    "example: symmcoll sweep --machine h200x8 --op all_reduce --algo one_shot,two_shot --sizes 4K:256M:x4\n"
    "         symmcoll sweep --machine h200x2 --op ag_mm,mm_rs --shape 8b,70b --m 4096,16384 --timing-only";

}  // namespace

int cmd_sweep(int argc, char** argv) {
  if (names_fused_op(argc, argv)) return cmd_fused_sim(argc, argv, /*sweep=*/true);
  Common c;
  std::string algo_spec = "all", sizes_spec = "4K:256M", csv, check_up_to_s = "16M", format = "table";
  bool quiet = false;
  po::options_description d("sweep options", 110, 50);
  add_common(d, c);
  // One option per line reads better than the formatter's packing.
  // clang-format off
  d.add_options()
      ("algo,a", po::value(&algo_spec)->default_value(algo_spec),
       "'all' (every algorithm of --op), a comma list of names (see 'symmcoll list'), or 'auto' (per size, the "
       "machine's table, experiments/auto/<machine>.csv)")
      ("sizes,s", po::value(&sizes_spec)->default_value(sizes_spec),
       "A:B (x2 steps), A:B:xF (xF steps) or a comma list (not for --op barrier: it moves no data)")
      ("check-up-to", po::value(&check_up_to_s)->default_value(check_up_to_s),
       "largest size run with data and checked; larger sizes run timing-only")
      ("csv", po::value(&csv), "write the rows here (core/result.h schema; not with --reduce max|min, --streams or --chunk-bytes off their "
                               "defaults: no column records them)")
      ("format", po::value(&format)->default_value(format),
       "stdout: table, or nccl-tests (its columns and '# Avg bus bandwidth' footer, one table per algorithm)")
      ("quiet,q", po::bool_switch(&quiet), "no progress on stderr");
  // clang-format on
  po::variables_map vm;
  if (!parse(argc, argv, d, kSweepUsage, &vm)) return kExitOk;

  const Resolved r = resolve(c, "sweep");
  refuse_unused(vm, r.op, {"sizes", "check-up-to"});
  const bool nccl_tests = parse_format(format);
  const bool auto_algo = algo_spec == "auto";
  if (auto_algo && r.op == Op::kBarrier)
    fail(ErrorCode::kInvalidArgument, "--algo auto has no barrier choice; name one");
  // A barrier moves no payload: one row per algorithm, bytes = 0.
  const std::vector<std::size_t> sizes = r.op == Op::kBarrier
                                             ? std::vector<std::size_t>{0}
                                             : for_option("--sizes", [&] { return parse_size_list(sizes_spec); });
  // What runs: every (algorithm, size) of the list, or auto's one choice per size.
  struct Job {
    const AlgoInfo* algo;
    std::size_t bytes;
    int blocks;
  };
  std::vector<Job> jobs;
  std::vector<const AlgoInfo*> algos;
  if (auto_algo) {
    refuse_auto_blocks(c);
    for (const std::size_t bytes : sizes) {
      const AutoChoice a = for_option("--algo", [&] { return choose_auto(r, bytes, "# "); });
      jobs.push_back({a.algo, bytes, a.blocks});
      if (std::find(algos.begin(), algos.end(), a.algo) == algos.end()) algos.push_back(a.algo);
    }
  } else {
    algos = for_option("--algo", [&] { return parse_algo_list(r.op, algo_spec); });
    for (const AlgoInfo* a : algos)
      for (const std::size_t bytes : sizes) jobs.push_back({a, bytes, c.blocks});
  }
  refuse_plan_knobs(vm, c, r.op, algos,
                    auto_algo            ? "the algorithms --algo auto chose"
                    : algo_spec == "all" ? std::string("every ") + op_name(r.op) + " algorithm"
                    : algos.size() == 1  ? ""
                                         : "--algo " + algo_spec);
  const std::size_t check_up_to = for_option("--check-up-to", [&] { return parse_size(check_up_to_s); });
  // The largest size run with data decides whether the sweep fits this host (check_data_cost).
  std::size_t largest_checked = 0;
  for (const std::size_t b : sizes)
    if (b <= check_up_to) largest_checked = std::max(largest_checked, b);
  if (!c.timing_only && largest_checked > 0)
    for (const AlgoInfo* a : algos) {
      try {
        check_args(*a, r.dtype, largest_checked, r.world,
                   c.blocks ? c.blocks : a->default_blocks(largest_checked, r.world));
      } catch (const Error&) {
        continue;  // skipped in the sweep anyway
      }
      check_data_cost(r, c, *a, largest_checked,
                      "--check-up-to " + check_up_to_s + " (the sweep's " + format_size(largest_checked) + " rows)",
                      "lower --check-up-to (larger sizes run timing-only), or add --timing-only");
    }
  refuse_unrecorded_with_csv(csv, c, r);
  if (!csv.empty()) check_writable(csv);

  std::vector<ResultRow> rows;
  std::vector<std::string> status;  // PASS / FAIL / "-" per row, for the table
  int failures = 0, skipped = 0;
  std::string first_skip;
  const bool tty = isatty(fileno(stderr));
  const std::size_t total = jobs.size();
  std::size_t done = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };

  for (std::size_t j = 0; j < jobs.size();) {
    const AlgoInfo* a = jobs[j].algo;
    const double ta = elapsed();
    int ran = 0;
    for (; j < jobs.size() && jobs[j].algo == a; ++j) {  // one progress line per run of one algorithm
      const std::size_t bytes = jobs[j].bytes;
      const int blocks = jobs[j].blocks;
      ++done;
      auto skip = [&](const Error& e) {
        if (!quiet)
          std::fprintf(stderr, "%ssweep: skip %s %s: %s\n", tty ? "\r\033[K" : "", a->id.c_str(),
                       format_size(bytes).c_str(), e.what());
        if (first_skip.empty()) first_skip = e.what();
        ++skipped;
      };
      try {
        check_args(*a, r.dtype, bytes, r.world, blocks ? blocks : a->default_blocks(bytes, r.world));
      } catch (const Error& e) {
        // Per-combination limits are expected in a sweep; the global inputs were checked above.
        skip(e);
        continue;
      }
      sim::RunSpec spec = make_spec(r, c, *a, bytes);
      spec.blocks = blocks;
      spec.timing_only = c.timing_only || bytes > check_up_to;
      if (!quiet && tty)
        std::fprintf(stderr, "\r\033[K[%zu/%zu] %s %s%s ...", done, total, a->id.c_str(), format_size(bytes).c_str(),
                     spec.timing_only ? " (timing-only)" : "");
      sim::RunResult res;
      try {
        res = sim::run(spec);
      } catch (const Error& e) {
        // What this machine cannot run (multicast on a one-GPU team, a heap past the simulator's
        // reach) is a combination to skip, as the limits above are.
        if (e.code() != ErrorCode::kUnsupported) throw;
        skip(e);
        continue;
      }
      rows.push_back(make_row(spec, res));
      const bool ok = passed(res, spec.timing_only);
      failures += !ok;
      status.push_back(spec.timing_only ? "-" : ok ? "PASS" : "FAIL");
      ++ran;
    }
    if (!quiet)
      std::fprintf(stderr, "%ssweep: %-32s %2d sizes in %6.2f s (total %.1f s, %zu/%zu)\n", tty ? "\r\033[K" : "",
                   a->id.c_str(), ran, elapsed() - ta, elapsed(), done, total);
  }
  if (rows.empty())
    fail(ErrorCode::kUnsupported, "nothing to run: every combination was rejected (first: " + first_skip + ")");

  if (!csv.empty()) {
    OutputFile f(csv);
    write_csv(f.stream(), rows);
    f.commit();
  }

  if (nccl_tests) {
    std::vector<bool> failed;
    for (const std::string& s : status) failed.push_back(s == "FAIL");
    write_nccl_tests(stdout, rows, failed, r.reduce);
    if (failures) {
      std::fprintf(stderr, "symmcoll: error: %d row(s) exceed their error bound\n", failures);
      return kExitFail;
    }
    return kExitOk;
  }
  // A barrier has no data kind: "barrier, graph launch".
  const std::string kind = r.op == Op::kBarrier ? "" : data_kind(r.op, r) + ", ";
  std::printf("# symmcoll sweep: sim %s, world %d, %s, %s%s launch, git %s\n", r.machine.name.c_str(), r.world,
              op_name(r.op), kind.c_str(), r.graph ? "graph" : "eager", git_sha());
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
  // What was data-checked: the largest size that ran with data (a barrier has no data).
  std::size_t checked_up_to = 0;
  bool any_checked = false;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (status[i] != "-") any_checked = true, checked_up_to = std::max(checked_up_to, rows[i].bytes);
  const std::string checked = r.op == Op::kBarrier ? ""
                              : c.timing_only      ? "; timing-only: no row data-checked"
                              : any_checked
                                  ? "; data-checked up to " + format_size(checked_up_to)
                                  : "; no row data-checked (every size is above --check-up-to " + check_up_to_s + ")";
  std::printf("# %zu rows, %d skipped, %d failed%s%s\n", rows.size(), skipped, failures, checked.c_str(),
              csv.empty() ? "" : ("; csv: " + csv).c_str());
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
    "Shows every collective algorithm in the registry with the constraints check_args() enforces,\n"
    "then the fused matmuls (--op ag_mm | mm_rs) and their baselines. Names accepted by --algo: the\n"
    "alias, the id's suffix, or the full id. --markdown prints the collectives' table alone.";

std::string worlds(const AlgoInfo& a) { return std::to_string(a.min_world) + ".." + std::to_string(a.max_world); }
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
                  worlds(a).c_str(), max_bytes(a).c_str(), a.needs_multicast ? "yes" : "no", a.summary.c_str());
    return kExitOk;
  }
  // "1M per rank" and "64K at 2, 128K at 4, ..." are wider than the header: size the column.
  int width = int(std::strlen("max_bytes"));
  for (const AlgoInfo& a : algorithms()) width = std::max(width, int(max_bytes(a).size()));
  std::printf("%-34s %-14s %-15s %-7s %-*s %-5s %s\n", "id", "alias", "op", "worlds", width, "max_bytes", "mcast",
              "summary");
  for (const AlgoInfo& a : algorithms())
    std::printf("%-34s %-14s %-15s %-7s %-*s %-5s %s\n", a.id.c_str(), a.alias.c_str(), op_name(a.op),
                worlds(a).c_str(), width, max_bytes(a).c_str(), a.needs_multicast ? "yes" : "no", a.summary.c_str());
  // The fused matmuls take shapes, not sizes: run|sweep --op ag_mm|mm_rs --shape 8b|70b --m M.
  std::printf(
      "\nfused matmuls (symmcoll run|sweep --op ag_mm|mm_rs --shape 8b|70b --m M; worlds 2..%d, bf16 | fp16):\n",
      kPadWorld);
  std::printf("%-34s %-14s %-15s %s\n", "id", "alias", "op", "summary");
  for (const FusedAlgo& a : fused_algorithms())
    std::printf("%-34s %-14s %-15s %s\n", a.id, a.alias, fused_op_name(a.op), a.summary);
  std::printf("baselines (run --algo NAME; a sweep runs them beside the fused algorithms):\n");
  for (const FusedAlgo& a : fused_baselines())
    std::printf("%-34s %-14s %-15s %s\n", a.id, "-", fused_op_name(a.op), a.summary);
  return kExitOk;
}

}  // namespace symm::apps
