// `symmcoll run|sweep --backend sim --op ag_mm,mm_rs --shape 8b,70b --m ...`: the fused matmuls
// (core/fused.h) and their baselines (fused_baselines) on the simulator (sim::run_fused).
// cmd_run / cmd_sweep hand over when --op names a fused op.
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli.h"
#include "apps/cmd_sim.h"
#include "backends/sim/sim.h"
#include "core/fused.h"
#include "core/output_file.h"
#include "core/plan.h"
#include "core/result.h"
#include "core/sizes.h"

namespace po = boost::program_options;

namespace symm::apps {

namespace {

struct Case {
  FusedOp op;
  MatShape shape;  // m set
  const FusedAlgo* algo;
};

std::string ratio(double t, double base) {
  if (base <= 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", t / base);
  return b;
}

// "ce, ce_bulk, st": the aliases of `op`'s fused algorithms.
std::string aliases(FusedOp op) {
  std::string s;
  for (const FusedAlgo& a : fused_algorithms())
    if (a.op == op) s += (s.empty() ? "" : ", ") + std::string(a.alias);
  return s;
}

// --algo for one op: "all", names of fused algorithms, and the baselines by name (cublaslt,
// seq_coll_gemm), which the valid names list too. Baselines come back in `baselines`.
std::vector<const FusedAlgo*> parse_algos(FusedOp op, const std::string& spec,
                                          std::vector<const FusedAlgo*>& baselines) {
  const char* name = fused_op_name(op);
  std::vector<const FusedAlgo*> out;
  for (const std::string& n : split_list(spec)) {
    if (n == "auto")
      fail(ErrorCode::kInvalidArgument,
           std::string("--algo auto: no table chooses among ") + name +
               " algorithms (auto's tables, experiments/auto/, are measured collectives, and fused ops have not run "
               "on GPUs yet); name one (" +
               aliases(op) + ") or a baseline (cublaslt, seq_coll_gemm)");
    if (const FusedAlgo* b = find_fused_baseline(op, n)) {
      if (std::find(baselines.begin(), baselines.end(), b) == baselines.end()) baselines.push_back(b);
      continue;
    }
    try {
      for (const FusedAlgo* a : parse_fused_algos(op, n))
        if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
    } catch (const Error& e) {
      std::string msg = e.what();  // "... (valid: a (x), b (y))": the baselines are valid too
      if (msg.ends_with(")")) msg.insert(msg.size() - 1, "; baselines: cublaslt, seq_coll_gemm");
      throw Error(e.code(), "--algo: " + msg);
    }
  }
  return out;
}

}  // namespace

int cmd_fused_sim(int argc, char** argv, bool sweep) {
  std::string backend = "sim", machine = "h200x4", op_s, algo_s = sweep ? "all" : "", shape_s, ms = "4096", n_s, k_s,
              dtype_s = "bf16", mode = "graph", trace, csv;
  int world = 0, streams = 3, calls = 1;
  std::size_t chunk_rows = 0;
  int blocks = 0;
  std::string seed_s = "1";
  bool timing_only = false, no_baselines = false, quiet = false;
  po::options_description d(sweep ? "sweep options (fused ops)" : "run options (fused ops)", 110, 50);
  // clang-format off
  d.add_options()
      ("help,h", "show this help")
      ("backend", po::value(&backend)->default_value(backend), "sim")
      ("machine", po::value(&machine)->default_value(machine), "machine file name or .ini path")
      ("world,w", po::value(&world)->default_value(world), "ranks (0: the machine's GPU count)")
      ("op", po::value(&op_s), sweep ? "ag_mm, mm_rs (comma list)" : "ag_mm | mm_rs")
      ("algo", po::value(&algo_s), (sweep ? "all or a comma list (" + fused_alias_list() + "; the baselines cublaslt, seq_coll_gemm)"
                                          : "one algorithm (" + fused_alias_list() +
                                                ") or a baseline (cublaslt, seq_coll_gemm)").c_str())
      ("shape", po::value(&shape_s), sweep ? "8b (N 1792, K 4096), 70b (N 3584, K 8192) (comma list)"
                                           : "8b (N 1792, K 4096) | 70b (N 3584, K 8192)")
      ("m", po::value(&ms)->default_value(ms), sweep ? "M values (comma list)" : "M")
      ("n", po::value(&n_s), "N of a custom shape (with --k, instead of --shape)")
      ("k", po::value(&k_s), "K of a custom shape (with --n)")
      ("dtype", po::value(&dtype_s)->default_value(dtype_s), "bf16 | fp16")
      ("mode", po::value(&mode)->default_value(mode), "graph | eager launch latency")
      ("timing-only", po::bool_switch(&timing_only), "no data: predicted time only")
      ("seed", po::value(&seed_s)->default_value(seed_s), "seed of A and B")
      ("streams", po::value(&streams)->default_value(streams), "streams per rank, main included (2..8)")
      ("chunk-rows", po::value(&chunk_rows)->default_value(chunk_rows),
       "rows per progress flag / GEMM (0: the plan's default; the mm_rs tile programs: rows per band)")
      ("blocks", po::value(&blocks)->default_value(blocks),
       "blocks of the plans' kernels (the reduce after the copies, ...; the mm_rs tile programs: the blocks "
       "that reduce while the others compute); 0 = each plan's default")
      ("no-baselines", po::bool_switch(&no_baselines),
       "sweep: skip the baseline rows (cublaslt: the matmul alone; seq_coll_gemm: our SM collective, then "
       "the matmul, standing for NCCL + cuBLAS)")
      ("trace", po::value(&trace), "run: write a Chrome trace-event JSON here")
      ("csv", po::value(&csv), "write the rows here (core/result.h schema, M N K filled; bytes, algbw and busbw "
                               "are the collective's: A gathered, C reduced); not with --streams, --chunk-rows or --blocks")
      ("quiet,q", po::bool_switch(&quiet), "sweep: no progress on stderr");
  if (!sweep)
    d.add_options()
      ("calls", po::value(&calls)->default_value(calls),
       "back-to-back calls on the same buffers, each checked; the time is the last call's (exercises the "
       "entry handshake)");
  // clang-format on
  po::variables_map vm;
  parse_args(argc, argv, d, vm);
  if (vm.count("help")) {
    std::cout << "usage: symmcoll " << (sweep ? "sweep" : "run")
              << (sweep ? " --backend sim --op ag_mm,mm_rs --shape 8b,70b (or --n N --k K) --m M,M.. [options]\n"
                        : " --backend sim --op ag_mm|mm_rs --shape 8b|70b (or --n N --k K) --m M [options]\n")
              << "\nBaselines (rows beside the fused algorithms in a sweep, or --algo in run):\n"
              << "  cublaslt       the matmul alone, no communication (ag_mm M x N x K, mm_rs M x N x K/world)\n"
              << "  seq_coll_gemm  our SM all-gather / reduce-scatter (--algo auto's rule) and the matmul one after\n"
              << "                 the other: the simulator's stand-in for NCCL + cuBLAS (nccl_cublaslt on GPUs)\n\n"
              << d << "\n";
    return kExitOk;
  }
  po::notify(vm);
  if (backend != "sim") fail(ErrorCode::kInvalidArgument, "--backend '" + backend + "': fused ops run on sim here");
  std::vector<FusedOp> ops;
  for (const std::string& o : split_list(op_s)) {
    if (!is_fused_op(o))
      fail(ErrorCode::kInvalidArgument, "--op '" + op_s +
                                            "' mixes fused ops (ag_mm, mm_rs) with collectives; run them in "
                                            "separate " +
                                            (sweep ? "sweeps" : "runs"));
    ops.push_back(parse_fused_op(o));
  }
  if (ops.empty()) fail(ErrorCode::kInvalidArgument, "--op '" + op_s + "' names no op");
  if (!sweep && ops.size() != 1) fail(ErrorCode::kInvalidArgument, "--op '" + op_s + "': run takes one op");
  if (!sweep && algo_s.empty()) fail(ErrorCode::kInvalidArgument, "--algo: name one algorithm of " + op_s);
  if (!sweep && no_baselines) fail(ErrorCode::kInvalidArgument, "--no-baselines: run names its one --algo");
  if (!sweep && quiet) fail(ErrorCode::kInvalidArgument, "--quiet: run prints no progress to quiet");
  // Per op: the algorithms, each checked against that op (as the CUDA bench does), and the
  // baselines: those named, or in a sweep every one (unless --no-baselines).
  std::vector<std::vector<const FusedAlgo*>> algos, baselines;
  for (FusedOp op : ops) {
    baselines.emplace_back();
    algos.push_back(parse_algos(op, algo_s, baselines.back()));
    if (!sweep && algos.back().size() + baselines.back().size() != 1)
      fail(ErrorCode::kInvalidArgument, "--algo '" + algo_s + "' names more than one");
    if (sweep && !no_baselines) {
      baselines.back().clear();
      for (const FusedAlgo& b : fused_baselines())
        if (b.op == op) baselines.back().push_back(&b);
    }
  }
  // --streams and --chunk-rows shape the fused plans; the baselines run on the main stream alone,
  // in whole GEMMs: given where only baselines run, they would mean nothing.
  bool any_plan = false;
  for (const auto& a : algos) any_plan = any_plan || !a.empty();
  if (!any_plan)
    for (const auto& [option, off] : {std::pair<const char*, bool>{"--streams", streams != 3},
                                      std::pair<const char*, bool>{"--chunk-rows", chunk_rows != 0},
                                      std::pair<const char*, bool>{"--blocks", blocks != 0}})
      if (off)
        fail(ErrorCode::kInvalidArgument,
             std::string(option) +
                 " means nothing for the baselines (cublaslt, seq_coll_gemm: the main stream "
                 "alone, whole GEMMs); it shapes the fused plans; drop it");
  const DType t = for_option("--dtype", [&] { return parse_dtype(dtype_s); });
  if (t != DType::kBF16 && t != DType::kFP16)
    fail(ErrorCode::kInvalidArgument, "--dtype " + dtype_s + ": fused ops take bf16 or fp16");
  const bool graph = parse_mode(mode, /*allow_both=*/false)[0];
  const uint64_t seed = parse_count(seed_s, "--seed");
  std::vector<MatShape> bases;
  if (!shape_s.empty()) {
    if (!n_s.empty() || !k_s.empty())
      fail(ErrorCode::kInvalidArgument, "--shape cannot go with --n/--k: name a shape or give N and K");
    for (const std::string& sh : split_list(shape_s))
      bases.push_back(for_option("--shape", [&] { return named_shape(sh); }));
    if (bases.empty()) fail(ErrorCode::kInvalidArgument, "--shape '" + shape_s + "' names no shape");
    if (!sweep && bases.size() != 1)
      fail(ErrorCode::kInvalidArgument, "--shape '" + shape_s + "': run takes one shape");
  } else {
    if (n_s.empty() || k_s.empty()) fail(ErrorCode::kInvalidArgument, "--op " + op_s + " needs --shape or --n and --k");
    MatShape b;
    b.n = parse_count(n_s, "--n");
    b.k = parse_count(k_s, "--k");
    bases.push_back(b);
  }
  std::vector<std::size_t> m_values;
  for (const std::string& v : split_list(ms)) m_values.push_back(parse_count(v, "--m"));
  if (m_values.empty()) fail(ErrorCode::kInvalidArgument, "--m '" + ms + "' names no M");
  if (!sweep && m_values.size() != 1) fail(ErrorCode::kInvalidArgument, "--m '" + ms + "': run takes one M");
  if (calls < 1) fail(ErrorCode::kInvalidArgument, "--calls " + std::to_string(calls) + " must be at least 1");
  if (streams != 3) refuse_with_csv(csv, "--streams", std::to_string(streams), "plan streams", "3");
  if (chunk_rows != 0) refuse_with_csv(csv, "--chunk-rows", std::to_string(chunk_rows), "chunk rows", "0");
  if (blocks < 0) fail(ErrorCode::kInvalidArgument, "--blocks must be 0 (the plans' defaults) or positive");
  if (blocks != 0) refuse_with_csv(csv, "--blocks", std::to_string(blocks), "plan kernel blocks", "0");
  if (!csv.empty()) check_writable(csv);
  if (!trace.empty() && sweep) fail(ErrorCode::kInvalidArgument, "--trace: a sweep writes no trace (run does)");
  if (!trace.empty()) check_writable(trace);
  const sim::Machine mach = for_option("--machine", [&] { return sim::Machine::by_name(machine); });
  if (!world && mach.team) fail(ErrorCode::kInvalidArgument, sim::team_world_hint(mach));
  const int w = world ? world : mach.gpus;
  if (w < 2 || w > kPadWorld)
    fail(ErrorCode::kInvalidArgument, "--world " + std::to_string(w) + " is outside 2.." + std::to_string(kPadWorld));
  check_streams(streams, kMinFusedStreams);

  // Every case, checked before anything runs; per (op, shape, M) the baselines first (a sweep's
  // ratios divide by them), then the fused algorithms.
  std::vector<Case> cases;
  for (std::size_t o = 0; o < ops.size(); ++o)
    for (const MatShape& b : bases)
      for (std::size_t m : m_values) {
        MatShape s = b;
        s.m = m;
        validate_fused(ops[o], s, w, t);
        for (const FusedAlgo* a : baselines[o]) cases.push_back(Case{ops[o], s, a});
        for (const FusedAlgo* a : algos[o]) cases.push_back(Case{ops[o], s, a});
      }

  auto spec_of = [&](const Case& cs) {
    sim::FusedRunSpec spec;
    spec.machine = mach;
    spec.world = w;
    spec.algo = cs.algo;
    spec.shape = cs.shape;
    spec.dtype = t;
    spec.graph = graph;
    spec.timing_only = timing_only;
    spec.seed = seed;
    spec.streams = streams;
    spec.chunk_rows = chunk_rows;
    spec.blocks = blocks;
    spec.calls = calls;
    if (!sweep) spec.trace_path = trace;
    return spec;
  };
  // With data, every case this host cannot afford is refused before anything runs (as
  // collectives are: apps/cli.h refuse_data_cost); a long one is announced.
  double data_seconds = 0;
  if (!timing_only)
    for (const Case& cs : cases) {
      const sim::DataCost cost = sim::fused_data_cost(spec_of(cs));
      refuse_data_cost("--m " + std::to_string(cs.shape.m),
                       std::string(cs.algo->id) + " (" + fused_op_name(cs.op) + " M=" + std::to_string(cs.shape.m) +
                           " N=" + std::to_string(cs.shape.n) + " K=" + std::to_string(cs.shape.k) + ") on " +
                           std::to_string(w) + " ranks",
                       cost.bytes, cost.seconds, "add --timing-only to predict the time without data, or lower --m");
      data_seconds += cost.seconds;
    }
  if (data_seconds > 10 && !quiet)
    std::fprintf(stderr, "symmcoll: data mode: about %.0f s on this host (--timing-only predicts the time alone)\n",
                 data_seconds);

  std::vector<ResultRow> rows;
  bool ok = true;
  if (sweep)
    std::printf(
        "# symmcoll sweep (fused): sim %s, world %d, %s, %s launch, git %s; x_alone = time / cublaslt's, "
        "x_seq = time / seq_coll_gemm's (same op, shape, M)\n",
        mach.name.c_str(), w, dtype_name(t), graph ? "graph" : "eager", git_sha());
  if (sweep)
    std::printf("%-6s %-5s %-27s %6s %6s %6s %12s %8s %8s %10s\n", "op", "shape", "algo", "M", "N", "K", "time_us",
                "x_alone", "x_seq", "max_err");
  double alone = 0, seq = 0;
  const bool tty = isatty(fileno(stderr));
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::size_t done = 0;
  for (const Case& cs : cases) {
    const std::string what = std::string(fused_op_name(cs.op)) + " " + (cs.shape.name.empty() ? "-" : cs.shape.name) +
                             " M=" + std::to_string(cs.shape.m) + " " + cs.algo->id;
    ++done;
    if (sweep && !quiet && tty) std::fprintf(stderr, "\r\033[K[%zu/%zu] %s ...", done, cases.size(), what.c_str());
    const double tc = elapsed();
    const sim::RunResult res = sim::run_fused(spec_of(cs));
    if (sweep && !quiet)
      std::fprintf(stderr, "%ssweep: [%zu/%zu] %s in %.2f s (total %.1f s)\n", tty ? "\r\033[K" : "", done,
                   cases.size(), what.c_str(), elapsed() - tc, elapsed());
    const bool good = timing_only || res.max_rel_err <= res.err_bound;
    ok = ok && good;
    ResultRow row;
    row.backend = "sim";
    row.machine = mach.name;
    row.world = w;
    row.op = fused_op_name(cs.op);
    row.algo = cs.algo->id;
    row.dtype = dtype_name(t);
    row.graph = graph;
    row.time_us_median = row.time_us_p10 = row.time_us_p90 = res.time_us;
    row.max_rel_err = timing_only ? -1 : res.max_rel_err;
    row.git_sha = git_sha();
    row.m = cs.shape.m, row.n = cs.shape.n, row.k = cs.shape.k;
    const FusedBuffers fb = fused_buffers(cs.op, cs.shape, w, t);
    row.bytes = cs.op == FusedOp::kAgMm ? fb.gathered : fb.partial;  // the collective's nccl-tests size
    fill_bandwidth(row);                                             // ... and its bandwidths
    rows.push_back(row);
    if (sweep) {
      // The baselines of an (op, shape, M) come first in its group: a new group forgets the last ones.
      const Case* prev = &cs == cases.data() ? nullptr : &cs - 1;
      if (!prev || prev->op != cs.op || prev->shape.m != cs.shape.m || prev->shape.n != cs.shape.n ||
          prev->shape.k != cs.shape.k)
        alone = seq = 0;
      const std::string id = cs.algo->id;
      if (id == "cublaslt") alone = res.time_us;
      if (id == "seq_coll_gemm") seq = res.time_us;
      const std::string shape = cs.shape.name.empty() ? "-" : cs.shape.name;
      std::printf("%-6s %-5s %-27s %6zu %6zu %6zu %12.2f %8s %8s %10s\n", fused_op_name(cs.op), shape.c_str(),
                  cs.algo->id, cs.shape.m, cs.shape.n, cs.shape.k, res.time_us, ratio(res.time_us, alone).c_str(),
                  ratio(res.time_us, seq).c_str(),
                  timing_only ? "-" : (std::to_string(res.max_rel_err) + (good ? "" : " FAIL")).c_str());
      std::fflush(stdout);  // a row as soon as it is known, also into a pipe
    } else {
      std::printf("%s %s world=%d M=%zu N=%zu K=%zu %s on %s (%s): predicted %.2f us\n", fused_op_name(cs.op),
                  cs.algo->id, w, cs.shape.m, cs.shape.n, cs.shape.k, dtype_name(t), mach.name.c_str(),
                  graph ? "graph" : "eager", res.time_us);
      if (calls > 1) std::printf("%d calls back to back: the time is the last call's, every call checked\n", calls);
      std::printf("algbw %.2f GB/s, busbw %.2f GB/s (the %s's bytes, %s, over the fused call's time)\n", row.algbw_GBps,
                  row.busbw_GBps, cs.op == FusedOp::kAgMm ? "all-gather" : "reduce-scatter",
                  format_size(row.bytes).c_str());
      if (timing_only) {
        std::printf("timing only: no correctness check\n");
      } else {
        std::printf("max relative error %.3g (bound %.3g): %s\n", res.max_rel_err, res.err_bound, good ? "ok" : "FAIL");
        if (res.checked_rows == res.rows)
          std::printf("all %zu rows of C (%d ranks) checked against float64\n", res.rows, w);
        else
          std::printf(
              "%zu of %zu rows of C (%d ranks) checked against float64 (a sample: evenly spaced rows and each shard's "
              "first and last, as the product is large); every row scanned for unwritten values\n",
              res.checked_rows, res.rows, w);
      }
      if (!trace.empty()) std::printf("trace %s\n", trace.c_str());
    }
  }
  if (!csv.empty()) {
    OutputFile f(csv);
    write_csv(f.stream(), rows);
    f.commit();
  }
  return ok ? kExitOk : kExitFail;
}

}  // namespace symm::apps
