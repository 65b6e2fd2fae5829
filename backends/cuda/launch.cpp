#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/host_logic.h"

namespace symm::cuda {
namespace {

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) fail(ErrorCode::kIo, "cannot read /proc/self/exe");
  return std::string(buf, std::size_t(n));
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int launch_ranks(int n, const std::vector<std::string>& cmd_in) {
  if (n < 1 || n > kNodeWorld)
    fail(ErrorCode::kInvalidArgument,
         "launch -n " + std::to_string(n) + " is outside 1.." + std::to_string(kNodeWorld) + " (one NVSwitch node)");
  const std::vector<std::string> cmd = resolve_rank_command(cmd_in, self_exe());
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/symmcoll-run-XXXXXX";
  if (!mkdtemp(templ.data())) fail(ErrorCode::kIo, "mkdtemp " + templ + " failed");
  const std::string run_dir = templ;

  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    const pid_t pid = fork();
    if (pid < 0) fail(ErrorCode::kIo, "fork failed for rank " + std::to_string(r));
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("SYMM_RUN_DIR", run_dir.c_str(), 1);
      std::vector<char*> argv;
      for (const std::string& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      std::fprintf(stderr, "symmcoll launch: rank %d: cannot execute %s\n", r, argv[0]);
      _exit(127);  // the forked child must not unwind the parent's state
    }
    pids.push_back(pid);
  }

  // Poll rather than block so that a failed rank's siblings can be escalated to SIGKILL;
  // only unreaped pids are ever signalled, so no recycled pid is hit. A rank stuck in a GPU
  // wait or an NCCL call may not die of SIGTERM at once: kKillAfter later it gets SIGKILL, so
  // the whole run ends within about a second of the first failure.
  constexpr auto kKillAfter = std::chrono::milliseconds(1000);
  int rc = 0, alive = n;
  std::chrono::steady_clock::time_point failed_at{};
  bool killed = false;
  while (alive > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0) break;
    if (pid == 0) {
      if (rc != 0 && !killed && std::chrono::steady_clock::now() - failed_at > kKillAfter) {
        for (pid_t p : pids)
          if (p > 0) kill(p, SIGKILL);
        killed = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    int rank = -1;
    for (int r = 0; r < n; ++r)
      if (pids[std::size_t(r)] == pid) pids[std::size_t(r)] = 0, rank = r;
    --alive;
    const int code = exit_code(status);
    if (code != 0 && rc == 0) {
      rc = code;
      failed_at = std::chrono::steady_clock::now();
      if (WIFSIGNALED(status))
        std::fprintf(stderr, "symmcoll launch: rank %d was killed by signal %d; stopping the others\n", rank,
                     WTERMSIG(status));
      else
        std::fprintf(stderr, "symmcoll launch: rank %d exited with code %d; stopping the others\n", rank, code);
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGTERM);
    }
  }
  std::remove((run_dir + "/nccl_id").c_str());
  rmdir(run_dir.c_str());
  return rc;
}

}  // namespace symm::cuda
