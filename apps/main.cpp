// symmcoll: the command line. Dispatches to a sub-command and turns every failure into one
// line on stderr and an exit code (apps/cli.h) — never a crash, never a silent wrong answer.
#include <malloc.h>
#include <unistd.h>

#include <boost/program_options/errors.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>

#include "apps/cli.h"
#include "apps/cmd_calib.h"
#include "apps/cmd_sim.h"
#include "core/common.h"
#include "core/output_file.h"
#include "core/result.h"

#if SYMM_HAVE_CUDA
#include "apps/cmd_cuda.h"
#endif

namespace symm::apps {
namespace {

char** g_argv = nullptr;  // main's, whole (CUDA commands hand it over to symmcoll-cuda)

const char* kUsage =
    "usage: symmcoll <command> [options]     (symmcoll <command> --help for its options)\n"
    "\n"
    "Single-node GPU collectives over symmetric memory, one source for two backends:\n"
    "a discrete-event simulator of an NVLink/NVSwitch node, and CUDA on real GPUs.\n"
    "\n"
    "commands:\n"
    "  run      run one collective on the simulator: predicted latency, bandwidth, error check\n"
    "  sweep    sizes x algorithms on the simulator -> nccl-tests-style table and CSV\n"
    "  list     the algorithms and their constraints\n"
    "  bench    --backend cuda: measure on GPUs next to NCCL (one process per GPU, see launch),\n"
    "           or --world N: N ranks in one process (one GPU is enough; no NCCL rows);\n"
    "           --backend sim: the same as sweep\n"
    "  launch   launch -n N -- <command ...>: start N ranks on this host (CUDA backend)\n"
    "  calibrate  microbenchmark rows for the machine model (--backend cuda: measured; sim: predicted)\n"
    "  fit      calibration rows -> machine file (every key with its provenance)\n"
    "  gemm-bench  our Hopper tile GEMM beside cuBLASLt on one GPU: checked, timed (CUDA backend)\n"
    "\n"
    "examples:\n"
    "  symmcoll list\n"
    "  symmcoll run --machine h200x4 --op all_reduce --algo one_shot --bytes 1M --trace t.json\n"
    "  symmcoll sweep --machine h200x8 --op reduce_scatter --sizes 4K:256M:x4 --csv rs.csv\n"
    "  symmcoll launch -n 4 -- symmcoll bench --backend cuda --op all_reduce --algo one_shot,two_shot\n"
    "  symmcoll bench --backend cuda --world 4 --op all_reduce --sizes 4K:64M:x4   (one GPU)\n"
    "\n"
    "exit codes: 0 ok, 1 a result failed its check (or the run failed), 2 bad input\n";

// The value of --backend in argv, "" when absent: bench picks its implementation by it
// before any option parsing, since each backend has its own option set.
std::string find_backend(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) break;
    if (std::strcmp(argv[i], "--backend") == 0 && i + 1 < argc) return argv[i + 1];
    if (std::strncmp(argv[i], "--backend=", 10) == 0) return argv[i] + 10;
  }
  return "";
}

bool wants_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  return false;
}

#if !SYMM_HAVE_CUDA && !defined(SYMM_CUDA_PROGRAM)
int no_cuda(const char* cmd) {
  std::fprintf(stderr,
               "symmcoll: error: '%s' needs the CUDA backend, and this build has no CUDA backend "
               "(nvcc not found at configure time)\n",
               cmd);
  return kExitUsage;
}
#endif

// The CUDA commands: run here (symmcoll-cuda), or handed over to symmcoll-cuda beside this
// program (apps/CMakeLists.txt says why), with the same arguments.
int cuda_command(const char* what, int argc, char** argv) {
#if SYMM_HAVE_CUDA
  (void)what;
  (void)argc;
  (void)argv;
  return -1;  // the caller runs it in this process
#elif defined(SYMM_CUDA_PROGRAM)
  (void)argc;
  (void)argv;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path other = self.parent_path() / SYMM_CUDA_PROGRAM;
  if (ec || !std::filesystem::exists(other))
    fail(ErrorCode::kUnsupported, std::string("'") + what + "' needs the CUDA backend, " + SYMM_CUDA_PROGRAM +
                                      ", which is not beside " + (ec ? std::string("this program") : self.string()));
  g_argv[0] = const_cast<char*>(other.c_str());  // the whole command line, run by the other program
  std::fflush(stdout);
  execv(other.c_str(), g_argv);
  fail(ErrorCode::kIo, "cannot run " + other.string() + ": " + std::strerror(errno));
#else
  (void)argc;
  (void)argv;
  return no_cuda(what);
#endif
}

int cmd_bench(int argc, char** argv) {
  const std::string backend = find_backend(argc, argv);
  if (backend == "sim") return cmd_sweep(argc, argv);
  if (backend.empty() && wants_help(argc, argv)) {
    std::printf(
        "usage: symmcoll bench --backend cuda|sim [options]\n"
        "\n"
        "  --backend cuda   measure on this host's GPUs next to NCCL; start one process per GPU with\n"
        "                   'symmcoll launch -n N -- symmcoll bench --backend cuda ...', or run N\n"
        "                   ranks in one process (one GPU is enough): '... --backend cuda --world N'\n"
        "                   (see 'symmcoll bench --backend cuda --help')\n"
        "  --backend sim    the same as 'symmcoll sweep' (see 'symmcoll sweep --help')\n");
    return kExitOk;
  }
  if (backend != "cuda")
    fail(ErrorCode::kInvalidArgument, backend.empty()
                                          ? "bench needs --backend cuda or --backend sim"
                                          : "unknown backend '" + backend + "' for bench (valid: cuda, sim)");
  if (const int r = cuda_command("bench --backend cuda", argc, argv); r >= 0) return r;
#if SYMM_HAVE_CUDA
  return cmd_bench_cuda(argc, argv);
#endif
  return kExitFail;
}

int cmd_launch_dispatch(int argc, char** argv) {
  if (const int r = cuda_command("launch", argc, argv); r >= 0) return r;
#if SYMM_HAVE_CUDA
  return cmd_launch(argc, argv);
#endif
  return kExitFail;
}

int cmd_gemm_bench_dispatch(int argc, char** argv) {
  if (const int r = cuda_command("gemm-bench", argc, argv); r >= 0) return r;
#if SYMM_HAVE_CUDA
  return cmd_gemm_bench_cuda(argc, argv);
#endif
  return kExitFail;
}

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (cmd == "--version") {
    std::printf("symmcoll %s\n", git_sha());
    return kExitOk;
  }
  // Each sub-command sees argv[0] = its own name, as the contract in apps/cmd_cuda.h says.
  int sub_argc = argc - 1;
  char** sub_argv = argv + 1;
  if (cmd == "run") return cmd_run(sub_argc, sub_argv);
  if (cmd == "sweep") return cmd_sweep(sub_argc, sub_argv);
  if (cmd == "list") return cmd_list(sub_argc, sub_argv);
  if (cmd == "bench") return cmd_bench(sub_argc, sub_argv);
  if (cmd == "launch") return cmd_launch_dispatch(sub_argc, sub_argv);
  if (cmd == "calibrate" && find_backend(sub_argc, sub_argv) == "cuda")
    if (const int r = cuda_command("calibrate --backend cuda", sub_argc, sub_argv); r >= 0) return r;
  if (cmd == "calibrate") return cmd_calibrate(sub_argc, sub_argv);
  if (cmd == "fit") return cmd_fit(sub_argc, sub_argv);
  if (cmd == "gemm-bench") return cmd_gemm_bench_dispatch(sub_argc, sub_argv);
  fail(ErrorCode::kInvalidArgument, "unknown command '" + cmd +
                                        "' (valid: run, sweep, list, bench, launch, calibrate, fit, gemm-bench; see "
                                        "'symmcoll --help')");
}

int exit_code(ErrorCode c) {
  switch (c) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kUnsupported:
    case ErrorCode::kIo: return kExitUsage;
    default: return kExitFail;
  }
}

}  // namespace
}  // namespace symm::apps

int main(int argc, char** argv) {
  using namespace symm::apps;
  // One command is one short-lived simulation: memory freed is kept for the next allocation
  // rather than handed back to the kernel and faulted in again (the output check allocates and
  // frees its float64 reference a chunk at a time; fresh pages were half of `run`'s time).
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  g_argv = argv;
  const std::string where = argc >= 2 && argv[1][0] != '-' ? std::string(" ") + argv[1] : "";
  try {
    const int code = dispatch(argc, argv);
    symm::check_stdout();  // the table a command printed is a result too
    return code;
  } catch (const symm::Error& e) {
    std::fprintf(stderr, "symmcoll: error: %s\n", e.what());
    return exit_code(e.code());
  } catch (const boost::program_options::error& e) {
    std::fprintf(stderr, "symmcoll: error: %s (see 'symmcoll%s --help')\n", e.what(), where.c_str());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "symmcoll: error: internal: %s\n", e.what());
    return kExitFail;
  }
}
