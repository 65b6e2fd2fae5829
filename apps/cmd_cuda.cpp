// The CUDA sub-commands (apps/cmd_cuda.h): option parsing only; the work is in backends/cuda.
#include "apps/cmd_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli.h"
#include "apps/harness/cuda/bench.h"
#include "apps/harness/cuda/trace_out.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/team.h"
#include "core/plan.h"
#include "core/sizes.h"

namespace po = boost::program_options;

namespace symm::apps {
namespace {

int parse_int(const std::string& s, const char* what) {
  try {
    std::size_t used = 0;
    const int v = std::stoi(s, &used);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  fail(ErrorCode::kInvalidArgument, std::string(what) + ": '" + s + "' is not an integer");
}

// A host without a usable GPU gets one line here, before any rank starts, instead of one
// CUDA error per rank: "no CUDA device: no CUDA-capable device is detected (...)".
void require_devices(int n, const std::string& who) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    fail(ErrorCode::kUnsupported, std::string("no CUDA device: ") +
                                      (e != cudaSuccess ? cudaGetErrorString(e) : "the CUDA runtime sees none") + " (" +
                                      who + " needs " + std::to_string(n) + " GPU" + (n > 1 ? "s" : "") +
                                      "; without GPUs use the simulator: symmcoll sweep / run)");
  if (count < n)
    fail(ErrorCode::kUnsupported, who + " needs " + std::to_string(n) + " GPUs, one per rank; this host shows " +
                                      std::to_string(count) +
                                      " (CUDA_VISIBLE_DEVICES limits what it shows); or run the N ranks in one "
                                      "process, without launch: --world " +
                                      std::to_string(n));
}

// Errors of a rank name it; an in-process team's errors already do (run_team), and a launched
// rank's get the launcher's rank here: with N processes writing to one terminal, the rank is half
// the message.
Error with_rank(const Error& e, bool team) {
  if (team) return e;
  const cuda::RankEnv env = cuda::rank_env(cuda::process_env());
  return Error(e.code(), "rank " + std::to_string(env.rank) + ": " + e.what());
}

// ---- bounds and testing (the reliability part of bench's help; environment, not options) --
constexpr const char* kBenchCudaBoundsHelp =
    "bounds (no call hangs):\n"
    "  every GPU wait gives up after SYMM_WAIT_TIMEOUT_S seconds (default 2; converted to cycles\n"
    "  at the device clock; SYMM_WAIT_TIMEOUT_CYCLES or --wait-timeout-cycles set cycles directly).\n"
    "  The first expired wait poisons the rank (its later waits return at once); the host, which\n"
    "  polls while it waits, prints rank, block, slot or packet buffer, expected and seen values\n"
    "  and the call, aborts the NCCL communicator and exits 1; `symmcoll launch` then stops the\n"
    "  other ranks (SIGTERM, SIGKILL a second later). A stream that has not finished after\n"
    "  SYMM_STREAM_TIMEOUT_S seconds with nothing reported (default max(30, 4 x the wait bound))\n"
    "  is reported the same way. A host plan's flag waits give up after --plan-timeout seconds\n"
    "  (default 10): the rank names the wait (rank, stream, slot, expected and seen values), releases\n"
    "  its own stuck waits so that its streams drain, then aborts as above.\n"
    "  SYMM_DEBUG_BENCH_STEPS=1 prints each step of a timed case (rank, seconds) on stderr: where a\n"
    "  rank stopped, if a run ever ends without a report.\n"
    "  Ranks sharing a GPU (--world N on fewer GPUs) enqueue in lockstep: each waits for its team after\n"
    "  each eager call of a timing sample and, in a host plan, at its start and after each flag write\n"
    "  and kernel launch, at most 2 x the wait bound, then names the rank behind (streams of several\n"
    "  ranks may share a hardware queue, where a rank running ahead stopped the team).\n"
    "  SYMM_DEBUG_TEAM_LOCKSTEP=0 turns it off, =items meets after every verb of a plan but its GEMMs.\n\n";
constexpr const char* kBenchCudaTestingHelp =
    "testing (make ranks disagree; the GPU suite's no-hang cases; R = a rank):\n"
    "  SYMM_TEST_RANK_ALGO=R:ALGO   rank R runs ALGO (same op) instead of each requested algorithm\n"
    "  SYMM_TEST_RANK_SIZE=R:SIZE   rank R runs every call at SIZE bytes\n"
    "  SYMM_TEST_RANK_SKIP=R        rank R never launches the collectives (NCCL calls still run); with\n"
    "                               --op ag_mm / mm_rs, the fused algorithms (the only one there)\n"
    "  SYMM_TEST_RANK_KILL=R        rank R kills itself (SIGKILL) with its first timed samples in flight\n"
    "  --probe-timeout              run only the bounded-wait error-path probes\n";

}  // namespace

void prepare_team(int world, const std::string& command) {
  if (auto why = cuda::team_world_refusal(world)) fail(ErrorCode::kInvalidArgument, *why);  // --world 0 too
  cuda::command_ranks(world, cuda::rank_env(cuda::process_env()).world, command);           // refuses in one line
  setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);
  // Every rank's streams need a hardware queue of their own: with the default 8 connections a
  // GPU's streams share queues, and a stream stopped at a flag wait (cuStreamWaitValue32) stops
  // the streams behind it in its queue, among them the one that would write that flag (found on
  // an H200: plans of 2..4 ranks on one GPU timed out with the flag already set).
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", /*overwrite=*/0);
  cuda::team_lockstep_mode(cuda::process_env());  // a bad SYMM_DEBUG_TEAM_LOCKSTEP is refused here, once
}

int cmd_bench_cuda(int argc, char** argv) {
  if (names_fused_op(argc, argv)) return cmd_bench_fused_cuda(argc, argv);
  cuda::BenchOptions o;
  std::string ops = "all_reduce", algos = "all", dtypes = "bf16", sizes = "4K:256M", mode = "both", blocks = "0",
              op = "sum", check_up_to = "64M", heap = "0", format = "table", chunk = "0", pdl = "on";
  po::options_description d(
      "usage: symmcoll launch -n N -- symmcoll bench --backend cuda [options]   (one process per GPU)\n"
      "       symmcoll bench --backend cuda --world N [options]                 (N ranks in this process)\n\n"
      "Each algorithm next to NCCL (plain buffers: nccl; symmetric windows: nccl_symm), checked\n"
      "against a float64 reference and NCCL's answer, timed in CUDA-graph replay and eager.\n"
      "Times are per call: the max over ranks of each rank's median / p10 / p90.\n\n"
      "--world N (2..8, without launch) runs N ranks as threads of this process, round-robin over\n"
      "the visible GPUs (one GPU is enough): plain device memory instead of NCCL windows, the same\n"
      "programs and plans. NCCL refuses two ranks on one GPU, so there are no nccl rows and every\n"
      "row is checked against the float64 reference only; multicast programs are refused. All ranks'\n"
      "blocks must fit on their GPU at once: the default block count is capped to what fits, and a\n"
      "--blocks that does not fit is skipped with a note naming ranks, blocks and what fits. Rows\n"
      "name the machine by device and GPU count (h200x1), the world column counts ranks: one GPU's\n"
      "memory, not NVLink.\n\noptions");
  d.add_options()("help,h", "this text")("backend", po::value<std::string>(), "cuda")(
      "op", po::value(&ops)->default_value(ops),
      "all_reduce, reduce_scatter, all_gather, barrier (comma list); ag_mm, mm_rs: matmul fused\n"
      "with communication, its own options (--op ag_mm --help)")(
      "algo", po::value(&algos)->default_value(algos),
      "names or aliases (one_shot,two_shot,...), all = every non-multicast algorithm of the op, or auto = the "
      "machine's --algo auto choice per size and launch mode (experiments/auto/<machine>.csv)")(
      "dtype", po::value(&dtypes)->default_value(dtypes), "bf16, fp16, fp32 (comma list)")(
      "sizes", po::value(&sizes)->default_value(sizes), "LO:HI (x2 steps), LO:HI:x4, or a list 16K,64K,1M")(
      "reduce", po::value(&op)->default_value(op),
      "sum, max, min (not with --csv: the schema has no reduction column)")(
      "mode", po::value(&mode)->default_value(mode), "graph, eager or both")(
      "iters", po::value(&o.iters)->default_value(o.iters), "timed samples")(
      "warmup", po::value(&o.warmup)->default_value(o.warmup), "untimed samples first")(
      "calls", po::value(&o.calls)->default_value(o.calls),
      "collectives per sample (per graph); 0: 100 up to 1M, 20 up to 16M, 5 above")(
      "blocks", po::value(&blocks)->default_value(blocks), "block counts, comma list; 0 = the registry default")(
      "threads", po::value(&o.threads)->default_value(o.threads),
      "threads per block; 0 = by size (<= 512); not with --csv: the schema has no threads column")(
      "no-nccl", "skip the NCCL baselines (nccl, nccl_symm, and nccl_ce: NCCL's copy-engine all-gather)")(
      "timing-only", "time only, no correctness check")(
      "streams", po::value(&o.streams)->default_value(o.streams),
      "host plans (ce, ce_overlap): streams per rank, the caller's included (1..8)")(
      "chunk-bytes", po::value(&chunk)->default_value(chunk),
      "host plans: bytes per copy and progress flag; 0 = the plan's default")(
      "pdl", po::value(&pdl)->default_value(pdl),
      "on: device-program kernels launch with programmatic dependent launch (each kernel's launch\n"
      "overlaps the end of the kernel before it on the stream; its blocks start once that one has\n"
      "completed); off: plain launches. The header line says which")(
      "sm-percent", po::value(&o.sm_percent)->default_value(o.sm_percent),
      "host plans that split the bytes between an SM kernel and copy engines (all_gather ce_sm): the SMs'\n"
      "percent, 1..100; 0 = the plan's default by size")(
      "plan-timeout", po::value(&o.plan_timeout_s)->default_value(o.plan_timeout_s),
      "host plans: seconds a checked call may take before the watchdog names the stream wait that never "
      "ended")("no-timing", "check only (with --replays: the GPU test suite)")(
      "check-up-to", po::value(&check_up_to)->default_value(check_up_to), "check sizes up to this; larger: err -1")(
      "replays", po::value(&o.replays)->default_value(0), "also replay a one-call graph this often, then check")(
      "trace-calls", po::value(&o.trace_calls)->default_value(1),
      "with --trace: calls traced back to back per launch mode")(
      "trace", po::value(&o.trace_dir),
      "folder (made if missing): after timing each case, --trace-calls calls of it per launch mode traced on the "
      "GPU, <op>.<algo>.<dtype>.<size>.{graph,eager}.json, a Chrome trace (Perfetto) with the simulator's tracks "
      "and names. A host plan: a span per verb on its stream (CUDA events before and after; in a graph, "
      "event-record nodes, the second replay). A device program: a track per block, a span per verb from the "
      "block's entry into it to its entry into the next (stamped inside the kernel: SM cycles, placed by the "
      "global timer). Every rank's zero is its own first call's start")(
      "heap", po::value(&heap)->default_value(heap), "symmetric heap per rank; 0 = what the sizes need")(
      "wait-timeout-cycles", po::value(&o.timeout_cycles)->default_value(0),
      "bound of every spin-wait in clock cycles; 0 = SYMM_WAIT_TIMEOUT_CYCLES, else SYMM_WAIT_TIMEOUT_S "
      "seconds (default 2) at the device clock (see 'bounds' below)")("csv", po::value(&o.csv),
                                                                      "write rows here (rank 0)")(
      "format", po::value(&format)->default_value(format),
      "stdout: table, or nccl-tests (its columns and '# Avg bus bandwidth' footer, one table per algorithm)")(
      "machine", po::value(&o.machine),
      "machine column; default from the device name and world, e.g. h200x4 (--world: GPUs, e.g. h200x1)")(
      "world", po::value(&o.world),
      "N ranks as threads of this process (2..8, without launch; one GPU is enough; no NCCL rows)")(
      "seed", po::value(&o.seed)->default_value(1), "input seed");
  po::options_description hidden;
  hidden.add_options()("probe-timeout", "test the bounded-wait error path only");
  po::options_description all;
  all.add(d).add(hidden);
  po::variables_map vm;
  parse_args(argc, argv, all, vm);
  if (vm.count("help")) {
    std::cout << d << "\n" << kBenchCudaBoundsHelp << kBenchCudaTestingHelp;
    return 0;
  }
  po::notify(vm);
  o.ops.clear();
  for (const auto& s : split_list(ops)) o.ops.push_back(for_option("--op", [&] { return parse_op(s); }));
  o.algos = split_list(algos);
  o.dtypes.clear();
  for (const auto& s : split_list(dtypes)) o.dtypes.push_back(for_option("--dtype", [&] { return parse_dtype(s); }));
  o.sizes = for_option("--sizes", [&] { return parse_size_list(sizes); });
  o.rop = for_option("--reduce", [&] { return parse_reduce_op(op); });
  const std::vector<bool> modes = parse_mode(mode, /*allow_both=*/true);
  o.graph = modes.front();
  o.eager = !modes.back();
  o.blocks.clear();
  for (const auto& s : split_list(blocks)) o.blocks.push_back(parse_int(s, "--blocks"));
  if (std::find(o.algos.begin(), o.algos.end(), "auto") != o.algos.end() &&
      std::any_of(o.blocks.begin(), o.blocks.end(), [](int b) { return b != 0; }))
    fail(ErrorCode::kInvalidArgument,
         "--blocks " + blocks + " with --algo auto: auto runs the block count its table chose");
  o.nccl = !vm.count("no-nccl");
  o.check = !vm.count("timing-only");
  o.timing = !vm.count("no-timing");
  o.check_max = for_option("--check-up-to", [&] { return parse_size(check_up_to); });
  o.heap = heap == "0" ? 0 : for_option("--heap", [&] { return parse_size(heap); });
  o.chunk_bytes = chunk == "0" ? 0 : for_option("--chunk-bytes", [&] { return parse_size(chunk); });
  check_streams(o.streams);
  if (o.chunk_bytes % kVecBytes)
    fail(ErrorCode::kInvalidArgument, "--chunk-bytes " + chunk + " is not a multiple of 16");
  if (o.sm_percent < 0 || o.sm_percent > 100)
    fail(ErrorCode::kInvalidArgument, "--sm-percent " + std::to_string(o.sm_percent) + " is outside 0..100");
  if (!(o.plan_timeout_s > 0)) fail(ErrorCode::kInvalidArgument, "--plan-timeout must be > 0");
  if (pdl != "on" && pdl != "off") fail(ErrorCode::kInvalidArgument, "--pdl " + pdl + ": expected on or off");
  o.pdl = pdl == "on";
  o.probe_timeout = vm.count("probe-timeout") > 0;
  o.nccl_tests_format = parse_format(format);
  // Rows of these would read as the defaults' rows: refused before any rank touches a GPU.
  if (o.rop != ReduceOp::kSum) refuse_with_csv(o.csv, "--reduce", reduce_op_name(o.rop), "reduction", "sum");
  if (o.threads != 0) refuse_with_csv(o.csv, "--threads", std::to_string(o.threads), "threads per block", "0");
  if (vm.count("world")) prepare_team(o.world, "bench --backend cuda");
  if (o.trace_calls < 1) fail(ErrorCode::kInvalidArgument, "--trace-calls must be at least 1");
  if (!o.trace_dir.empty()) cuda::prepare_trace_dir(o.trace_dir);
  cuda::check_bench_knobs(o);
  require_devices(1, "bench --backend cuda");
  try {
    return cuda::run_bench(o);
  } catch (const Error& e) {
    throw with_rank(e, o.world != 0);
  }
}

int cmd_launch(int argc, char** argv) {
  int n = 0;
  std::vector<std::string> cmd;
  bool after = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (after) {
      cmd.push_back(a);
    } else if (a == "--") {
      after = true;
    } else if (a == "-h" || a == "--help") {
      std::printf(
          "usage: symmcoll launch -n N -- <command ...>\n\n"
          "Starts N ranks of <command> on this host (one process per GPU) with RANK, WORLD_SIZE,\n"
          "LOCAL_RANK and SYMM_RUN_DIR (a fresh private directory where rank 0 publishes the NCCL\n"
          "unique id) set, waits for all, and stops the others if one fails (its exit code is returned).\n"
          "<command> may be 'symmcoll ...' or a bare sub-command ('bench ...'): both mean this program.\n"
          "Fewer GPUs than ranks: run the command itself with --world N instead (N ranks in one process).\n");
      return 0;
    } else if ((a == "-n" || a == "--nproc") && i + 1 < argc) {
      n = parse_int(argv[++i], "launch -n");
    } else if (a.rfind("-n", 0) == 0 && a.size() > 2) {
      n = parse_int(a.substr(2), "launch -n");
    } else {
      fail(ErrorCode::kInvalidArgument, "launch: unexpected '" + a + "' (usage: launch -n N -- <command ...>)");
    }
  }
  if (n < 1) fail(ErrorCode::kInvalidArgument, "launch needs -n N with N >= 1");
  for (const std::string& a : cmd)
    if (a == "--world" || a.rfind("--world=", 0) == 0)
      fail(ErrorCode::kInvalidArgument,
           "launch -n " + std::to_string(n) +
               " starts one process per rank; the command's --world runs the ranks in one process: use one or the "
               "other");
  require_devices(n, "launch -n " + std::to_string(n));
  return cuda::launch_ranks(n, cmd);
}

}  // namespace symm::apps
