// sim_speed: how fast the simulator itself runs (a benchmark, not a test).
//
//   sim_speed [--out experiments/results/sim/speed.csv] [--repeats 5] [--symmcoll PATH]
//
// Two measures per case: wall_ms_median, symm::sim::run in this process (its buffers warm after
// the first repeat), and wall_ms_e2e, what a user waits for: the median wall time of the same
// case typed as a command (`symmcoll run ...`, a fresh process each time: start-up, machine
// file, fresh memory, output), with that process's peak resident size (max_rss_mb_e2e). The
// commands run first, while this process is small: a child's peak counts the pages it shares
// with its parent until it execs.
// Targets (issue 9): 8 ranks 1 MiB bf16 one_shot, one_shot_ll and two_shot with data < 50 ms
// end to end on one core; 64 ranks 256 MiB two-shot timing-only < 1 s; > 5 M events/s.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "backends/sim/sim.h"
#include "core/output_file.h"
#include "core/result.h"

namespace {

struct Case {
  const char* name;
  const char* machine;
  int world;
  const char* algo;
  std::size_t bytes;
  bool timing_only;
};

struct E2e {
  double wall_ms = 0;  // median
  double max_rss_mb = 0;
};

// Runs `symmcoll run ...` for case c `repeats` times (stdout to /dev/null), each bounded by
// kTimeoutS; the median wall time and the largest peak resident size. Throws on a failed run.
E2e end_to_end(const std::string& symmcoll, const Case& c, int repeats) {
  constexpr double kTimeoutS = 120;
  const std::string world = std::to_string(c.world), bytes = std::to_string(c.bytes);
  std::vector<std::string> args = {symmcoll,  "run", "--backend", "sim",  "--machine", c.machine,
                                   "--world", world, "--algo",    c.algo, "--bytes",   bytes};
  if (c.timing_only) args.push_back("--timing-only");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<double> wall;
  E2e e;
  for (int i = 0; i < repeats; ++i) {
    std::fflush(nullptr);  // nothing buffered here is written twice by the child
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0) throw symm::Error(symm::ErrorCode::kIo, "fork failed");
    if (pid == 0) {
      const int null = open("/dev/null", O_WRONLY);
      if (null < 0 || dup2(null, STDOUT_FILENO) < 0) _exit(127);
      execv(argv[0], argv.data());
      _exit(127);
    }
    int status = 0;
    rusage ru{};
    for (;;) {
      const pid_t w = wait4(pid, &status, WNOHANG, &ru);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) throw symm::Error(symm::ErrorCode::kIo, "wait4 failed");
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > kTimeoutS) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        throw symm::Error(symm::ErrorCode::kIo, std::string(c.name) + ": '" + symmcoll + " run' took over " +
                                                    std::to_string(int(kTimeoutS)) + " s");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw symm::Error(symm::ErrorCode::kIo, std::string(c.name) + ": '" + symmcoll + " run ...' failed (status " +
                                                  std::to_string(status) + ")");
    e.max_rss_mb = std::max(e.max_rss_mb, double(ru.ru_maxrss) / 1024);  // KiB -> MiB
  }
  std::sort(wall.begin(), wall.end());
  e.wall_ms = wall[wall.size() / 2];
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out, symmcoll = SYMMCOLL_BIN;
  int repeats = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out = argv[++i];
    else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
      repeats = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--symmcoll") && i + 1 < argc)
      symmcoll = argv[++i];
    else {
      std::fprintf(stderr, "usage: sim_speed [--out path.csv] [--repeats N] [--symmcoll PATH]\n");
      return 2;
    }
  }
  try {
    if (!out.empty()) symm::OutputFile::check(out);  // before minutes of runs
  } catch (const symm::Error& e) {
    std::fprintf(stderr, "sim_speed: %s\n", e.what());
    return 2;
  }
  const Case cases[] = {
      {"one_shot_8x1M_data", "h200x8", 8, "all_reduce.ld_reduce", std::size_t(1) << 20, false},
      {"two_shot_8x1M_data", "h200x8", 8, "all_reduce.rs_ld_ag_st", std::size_t(1) << 20, false},
      {"two_shot_64x256M_timing", "h200x8", 64, "all_reduce.rs_ld_ag_st", std::size_t(256) << 20, true},
      {"one_shot_64x1M_timing", "h200x8", 64, "all_reduce.ld_reduce", std::size_t(1) << 20, true},
      {"one_shot_ll_8x1M_data", "h200x8", 8, "all_reduce.st_ll_reduce", std::size_t(1) << 20, false},
      {"multimem_8x256M_timing", "h200x8", 8, "all_reduce.mc_ld_reduce_mc_st", std::size_t(256) << 20, true},
  };
  std::string csv =
      "case,world,algo,bytes,timing_only,wall_ms_median,wall_ms_e2e,max_rss_mb_e2e,events,events_per_s,sim_time_us,"
      "git_sha\n";
  std::printf("%-26s %5s %-30s %10s %6s %10s %10s %8s %10s %12s %12s\n", "case", "world", "algo", "bytes", "timing",
              "wall_ms", "e2e_ms", "rss_MB", "events", "events/s", "sim_us");
  try {
    std::vector<E2e> e2e;
    for (const Case& c : cases) e2e.push_back(end_to_end(symmcoll, c, repeats));
    for (std::size_t k = 0; k < std::size(cases); ++k) {
      const Case& c = cases[k];
      symm::sim::RunSpec s;
      s.machine = symm::sim::Machine::by_name(c.machine);
      s.world = c.world;
      s.algo = &symm::find_algo(c.algo);
      s.dtype = symm::DType::kBF16;
      s.bytes = c.bytes;
      s.timing_only = c.timing_only;
      std::vector<double> wall;
      symm::sim::RunResult r;
      for (int i = 0; i < repeats; ++i) {
        r = symm::sim::run(s);
        wall.push_back(r.wall_s * 1e3);
        if (!c.timing_only && !(r.max_rel_err <= r.err_bound)) {
          std::fprintf(stderr, "%s: wrong result (max_rel_err %g)\n", c.name, r.max_rel_err);
          return 1;
        }
      }
      std::sort(wall.begin(), wall.end());
      const double med = wall[wall.size() / 2];
      const double eps = double(r.events) / (med * 1e-3);
      const E2e& e = e2e[k];
      char line[512];
      std::snprintf(line, sizeof line, "%s,%d,%s,%zu,%d,%.3f,%.3f,%.1f,%llu,%.0f,%.3f,%s\n", c.name, c.world, c.algo,
                    c.bytes, int(c.timing_only), med, e.wall_ms, e.max_rss_mb, (unsigned long long)r.events, eps,
                    r.time_us, symm::git_sha());
      csv += line;
      std::printf("%-26s %5d %-30s %10zu %6d %10.2f %10.2f %8.1f %10llu %12.0f %12.2f\n", c.name, c.world, c.algo,
                  c.bytes, int(c.timing_only), med, e.wall_ms, e.max_rss_mb, (unsigned long long)r.events, eps,
                  r.time_us);
    }
  } catch (const symm::Error& e) {
    std::fprintf(stderr, "sim_speed: %s\n", e.what());
    return 1;
  }
  if (!out.empty()) {
    try {
      symm::write_file(out, csv);
    } catch (const symm::Error& e) {
      std::fprintf(stderr, "sim_speed: %s\n", e.what());
      return 1;
    }
  }
  return 0;
}
