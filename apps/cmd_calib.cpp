// symmcoll calibrate / fit: microbenchmark rows (measured on GPUs, or predicted by the simulator
// from a machine file) and the fit that turns them into a machine file (apps/harness/sim/calib.h).
#include "apps/cmd_calib.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/cli.h"
#include "apps/harness/sim/calib.h"
#include "core/output_file.h"
#include "core/result.h"

#if SYMM_HAVE_CUDA
#include "apps/cmd_cuda.h"
#include "apps/harness/cuda/calibrate.h"
#include "apps/harness/cuda/trace_parts.h"
#endif

namespace po = boost::program_options;

namespace symm::apps {
namespace {

const char* kCalibrateUsage =
    "usage: symmcoll calibrate --backend cuda|sim --csv FILE [options]\n"
    "\n"
    "Runs the calibration microbenchmarks (launch, flag ping-pong, remote load chain, acquire and\n"
    "local reduce chains, copies by block count and pattern, copy engine, GEMM) and writes one row\n"
    "per setting (apps/harness/sim/calib.h lists them and the key each sets), the command\n"
    "line in the CSV's first comment. GPUs: symmcoll launch -n N -- symmcoll calibrate --backend\n"
    "cuda --csv experiments/results/<machine>/calibrate_<machine>.csv, or N ranks in one process on\n"
    "one GPU (the rows that need a peer get one; its HBM, not NVLink): symmcoll calibrate --backend\n"
    "cuda --world N --csv ... The simulator predicts the same rows from --machine (what `symmcoll\n"
    "fit` must invert).";

std::string command_line(int argc, char** argv) {
  std::string s = " command: symmcoll";
  for (int i = 0; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

// --calibration A.csv B.csv, or A.csv,B.csv, or the option twice: one list of files.
std::vector<std::string> split_calibrations(const std::vector<std::string>& v) {
  std::vector<std::string> files;
  for (const std::string& s : v)
    for (const std::string& f : split_list(s)) files.push_back(f);
  if (files.empty()) fail(ErrorCode::kInvalidArgument, "--calibration names no file");
  return files;
}

}  // namespace

int cmd_calibrate(int argc, char** argv) {
  std::string backend, machine = "h200x4", csv, trace_dir, rows;
  int world = 0, trace_calls = 10;
  po::options_description d("calibrate options", 110, 50);
  // clang-format off
  d.add_options()
      ("help,h", "show this help")
      ("backend", po::value(&backend)->required(), "cuda (measure this host's GPUs) | sim (predict from --machine)")
      ("machine,m", po::value(&machine)->default_value(machine), "sim: the machine file to predict from")
      ("world,w", po::value(&world)->default_value(world),
       "sim: ranks (0: the machine's GPU count); cuda: N ranks as threads of this process (2..8, no launch)")
      ("csv", po::value(&csv)->required(), "write the rows here")
      ("trace", po::value(&trace_dir),
       "cuda: folder (made if missing): after the rows, the ping-pongs and chains at 16 rounds traced verb by verb "
       "inside their kernels (calibrate.<row>.bf16.n16.{graph,eager}.json, the simulator's block tracks; "
       "experiments/verb_compare.py prints their steps)")
      ("trace-calls", po::value(&trace_calls)->default_value(trace_calls), "cuda, with --trace: calls traced per row")
      ("rows", po::value(&rows),
       "only these rows: a comma list of row names (apps/harness/sim/calib.h), or prefixes ending in * "
       "(copy_local,launch; pingpong_*); the device_* rows are always written. Default: every row");
  // clang-format on
  po::variables_map vm;
  parse_args(argc, argv, d, vm);
  if (vm.count("help")) {
    std::cout << kCalibrateUsage << "\n" << d << "\n";
    return kExitOk;
  }
  po::notify(vm);
  const std::vector<std::string> only = rows.empty() ? std::vector<std::string>{} : split_list(rows);
  if (backend == "cuda") {
#if SYMM_HAVE_CUDA
    if (world != 0) prepare_team(world, "calibrate --backend cuda");
    if (trace_calls < 1) fail(ErrorCode::kInvalidArgument, "--trace-calls must be at least 1");
    if (!trace_dir.empty()) cuda::prepare_trace_dir(trace_dir);
    return cuda::calibrate_main(csv, command_line(argc, argv), world, trace_dir, trace_calls, only);
#else
    fail(ErrorCode::kInvalidArgument,
         "--backend cuda: this build has no CUDA backend (nvcc not found at configure time)");
#endif
  }
  if (backend != "sim") fail(ErrorCode::kInvalidArgument, "--backend '" + backend + "' is not cuda or sim");
  if (!trace_dir.empty())
    fail(ErrorCode::kInvalidArgument,
         "--trace: the simulator's rows are predictions (symmcoll run --trace traces a call)");
  const sim::Machine m = for_option("--machine", [&] { return sim::Machine::by_name(machine); });
  // A team machine's ranks share its GPUs (2..8 ranks, as calibrate --backend cuda --world N runs them).
  const int most = m.team ? 8 : m.gpus;
  const int w = world ? world : (m.team ? 2 : m.gpus);
  if (w < 2 || w > most)
    fail(ErrorCode::kInvalidArgument, "--world " + std::to_string(w) + " is outside 2.." + std::to_string(most) +
                                          (m.team ? " (ranks of a team machine)" : ""));
  check_writable(csv);
  sim::CalibTable t;
  t.comments.push_back(command_line(argc, argv));
  t.comments.push_back(" predicted by the simulator from " + std::filesystem::path(m.path).filename().string());
  sim::CalibPlan plan;
  plan.only = only;
  t.rows = sim::simulate_calibration(m, w, plan);
  if (!only.empty() &&
      t.rows.size() == std::size_t(std::count_if(t.rows.begin(), t.rows.end(), [](const sim::CalibRow& r) {
        return r.bench.starts_with("device_");
      })))
    fail(ErrorCode::kInvalidArgument, "--rows '" + rows + "' matched no row (apps/harness/sim/calib.h lists the rows)");
  OutputFile f(csv);
  sim::write_calibration(f.stream(), t);
  f.commit();
  std::printf("symmcoll calibrate: %zu rows predicted for %s at world %d -> %s\n", t.rows.size(), m.name.c_str(), w,
              csv.c_str());
  return kExitOk;
}

int cmd_fit(int argc, char** argv) {
  std::vector<std::string> calibration;
  std::string out, base, name, keys;
  po::options_description d("fit options", 110, 50);
  // clang-format off
  d.add_options()
      ("help,h", "show this help")
      ("calibration,c", po::value(&calibration)->required()->multitoken(),
       "the rows of `symmcoll calibrate` (CSV); several files (e.g. a single-GPU run for the per-GPU\n"
       "keys and a multi-GPU run for the links): their rows together, numbered in that order.\n"
       "FILE.csv:BENCH+BENCH reads only those benches' rows of FILE (e.g. another host's tile_gemm)")
      ("out,o", po::value(&out)->required(), "the machine file to write (.ini)")
      ("base", po::value(&base),
       "machine file whose values the keys no row calibrates keep (default: --out if it exists)")
      ("name", po::value(&name), "machine name in the header (default: --out's stem)")
      ("keys", po::value(&keys),
       "comma list of the keys the rows may set, names or prefixes ending in * (default: all); the\n"
       "others keep --base's values (rows from another host: chip keys travel, launch does not)");
  // clang-format on
  po::variables_map vm;
  parse_args(argc, argv, d, vm);
  if (vm.count("help")) {
    std::cout << "usage: symmcoll fit --calibration FILE.csv [FILE2.csv] --out MACHINE.ini [--base OLD.ini]\n\n"
                 "Fits every machine-file key the rows determine (least squares / NNLS, Eigen) and writes\n"
                 "the file with each key's provenance (rows, residual) as a comment.\n\n"
              << d << "\n";
    return kExitOk;
  }
  po::notify(vm);
  const std::vector<std::string> only = split_list(keys);
  const std::vector<std::string> names = sim::Machine::key_names();
  for (const std::string& k : only) {
    const std::string stem = k.ends_with("*") ? k.substr(0, k.size() - 1) : k;
    const bool any = std::any_of(names.begin(), names.end(),
                                 [&](const std::string& n) { return k.ends_with("*") ? n.starts_with(stem) : n == k; });
    if (!any) fail(ErrorCode::kInvalidArgument, "--keys: '" + k + "' names no machine-file key");
  }
  // The rows first: a missing or garbage --calibration is named as such, not as a missing base.
  sim::CalibTable t;
  std::string source;
  for (const std::string& entry : split_calibrations(calibration)) {
    // FILE.csv:bench+bench: only those benches' rows (a ':' after the file's name, not in a folder's).
    const std::size_t colon = entry.rfind(':');
    const bool picked = colon != std::string::npos && entry.find('/', colon) == std::string::npos;
    const std::string c = picked ? entry.substr(0, colon) : entry;
    std::vector<std::string> benches;  // '+' between names: ',' already separates the files
    if (picked) {
      std::stringstream names(entry.substr(colon + 1));
      for (std::string b; std::getline(names, b, '+');)
        if (!b.empty()) benches.push_back(b);
    }
    if (picked && benches.empty())
      fail(ErrorCode::kInvalidArgument, "--calibration '" + entry + "': no bench named after ':'");
    sim::CalibTable one = for_option("--calibration", [&] { return sim::read_calibration(c); });
    if (picked) {
      std::erase_if(one.rows, [&](const sim::CalibRow& r) {
        return std::find(benches.begin(), benches.end(), r.bench) == benches.end();
      });
      if (one.rows.empty())
        fail(ErrorCode::kInvalidArgument, "--calibration '" + entry + "': " + c + " has no row of those benches");
      for (std::string& comment : one.comments) {
        comment += " (only ";  // appended piece by piece: GCC 12 warns (-Wrestrict) on a + chain here
        comment += entry.substr(colon + 1);
        comment += ")";
      }
    }
    t.comments.insert(t.comments.end(), one.comments.begin(), one.comments.end());
    t.rows.insert(t.rows.end(), one.rows.begin(), one.rows.end());
    if (!source.empty()) source += " + ";
    source += std::filesystem::path(c).filename().string();
    if (picked) source += entry.substr(colon);
  }
  const bool base_given = !base.empty();
  if (!base_given) base = out;
  const sim::Machine b = for_option("--base", [&] {
    if (!std::filesystem::exists(base))
      fail(ErrorCode::kInvalidArgument,
           base_given ? "'" + base + "' does not exist (keys the rows do not calibrate need a base)"
                      : "none given, and --out '" + base +
                            "' does not exist yet to serve as one: name the machine file whose values the keys no "
                            "row calibrates keep");
    return sim::Machine::load(base);
  });
  if (name.empty()) name = std::filesystem::path(out).stem().string();
  const sim::FitResult r = sim::fit_machine(t, b, name, source, only);
  sim::Machine::parse(r.ini, out);  // the reader accepts what is written
  // Written whole or not at all; a link stays a link (core/output_file.h).
  write_file(out, r.ini);
  std::printf("symmcoll fit: %s from %zu rows of %s\n", out.c_str(), t.rows.size(), source.c_str());
  return kExitOk;
}

}  // namespace symm::apps
