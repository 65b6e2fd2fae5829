// Host-side decisions of the CUDA backend that need no GPU, kept apart so CI (no GPU) can
// unit-test them (tests/cuda): rank environment, NCCL-id file exchange, the multicast
// interlock, launch plans (blocks, threads, heap layout) and wait-timeout messages.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/device_handle.h"
#include "core/heap_layout.h"
#include "core/registry.h"

namespace symm::cuda {

using GetEnv = std::function<const char*(const char*)>;
GetEnv process_env();  // std::getenv

// ---- ranks ---------------------------------------------------------------------------
// RANK / WORLD_SIZE / LOCAL_RANK as set by `symmcoll launch`, torchrun or mpirun (OpenMPI's
// OMPI_COMM_WORLD_* too). No variables at all means a single process (world 1). Throws
// kInvalidArgument on malformed or inconsistent values.
struct RankEnv {
  int rank = 0;
  int world = 1;
  int local_rank = 0;
  std::string run_dir;  // SYMM_RUN_DIR: where rank 0 publishes the NCCL unique id
};
RankEnv rank_env(const GetEnv& env);

// Rank 0 writes `bytes` to dir/name atomically (write to a temporary, then rename), so a
// reader never sees a partial file. Others poll for it for at most timeout_s seconds, then
// throw kTimeout naming the path.
void publish_blob(const std::string& dir, const std::string& name, const std::string& bytes);
std::string await_blob(const std::string& dir, const std::string& name, std::size_t size, double timeout_s);

// ---- multicast (NVLS) interlock ------------------------------------------------------
// This backend never creates a multicast object itself. Where NCCL sets up NVLS for the
// symmetric windows (a device communicator with multimem on the LSA team), NCCL's device API
// gives the multicast address of a window (ncclGetLsaMultimemPointer), and only then may a
// multimem program run.
// Which safety variable forbids multicast (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
// NVSHMEM_DISABLE_NVLS=1), as "NAME=value", or nullopt when none is set.
std::optional<std::string> multicast_disabled_by(const GetEnv& env);
// The multicast base address of the symmetric heap, or nullptr. The variables come first: while
// one is set, ask_nccl (which makes NCCL set up NVLS and returns its address, nullptr if NCCL
// would not) is not even called.
void* multicast_base(const GetEnv& env, const std::function<void*()>& ask_nccl);
// Why an algorithm that needs multicast may not run here, or nullopt if it may: refused while
// any safety variable is set, or where NCCL gave no multicast address (platform_multicast
// false: the device or NCCL has no NVLS; the lent machines, where NCCL_NVLS_ENABLE=0, always).
std::optional<std::string> multicast_refusal(const AlgoInfo& a, const GetEnv& env, bool platform_multicast);

// ---- plans ---------------------------------------------------------------------------
inline constexpr int kMaxThreads = 512;  // kernels.cu: __launch_bounds__(512) leaves 128 registers a thread
inline constexpr int kDefaultThreads = kDefaultBlockThreads;  // core/registry.h

struct LaunchPlan {
  int blocks = 1;
  int threads = kDefaultThreads;
};
// blocks <= 0: the registry's default for this size; threads <= 0: enough 32-thread warps to
// give each thread at least one 16-byte vector of the block's piece, at most kDefaultThreads.
// Runs symm::check_args, so a bad size, world or block count throws here with its message.
LaunchPlan plan_launch(const AlgoInfo& a, DType t, std::size_t bytes, int world, int blocks, int threads);

// The heap layout (in, out, scratch, fixed regions) is core/heap_layout.h, shared with the
// simulator; this backend's heap holds every program (HeapUse::kEveryProgram).
// Throws kInvalidArgument: "bytes=... needs N bytes of symmetric heap per rank; the heap has M".
void check_heap(const AlgoInfo& a, std::size_t bytes, int world, std::size_t heap_bytes);

// ---- errors --------------------------------------------------------------------------
// "rank R block B timed out waiting on slot S (channel c, from rank r): expected >= E, saw V", or
// for flagged packets (reduce_ll): "rank R block B timed out waiting for packets at heap offset O
// (packet P of that buffer): expected epoch E, saw V" (O: the packet buffer's byte offset in the
// symmetric heap, which names the program's scratch region, the block and the source rank).
std::string describe_wait_timeout(const WaitError& e);
// A host plan's stream wait (wait_flag) that did not pass in time, as plan_exec.cpp's watchdog
// reports it: "rank R stream S timed out waiting on plan slot N (channel c, chunk k, from rank
// r): expected E, saw V (wait I of the W enqueued since the last drain)". The slot is named by
// pad::describe_plan_slot, as the simulator's deadlock report names it; `seen` is the flag's
// value, or "?" where it could not be read; `index` counts from 0.
std::string describe_stuck_plan_wait(int rank, int stream, uint32_t slot, uint32_t expected, const std::string& seen,
                                     std::size_t index, std::size_t waits);

// ---- bounds: no wait runs unbounded ----------------------------------------------------
inline constexpr double kDefaultWaitTimeoutS = 2.0;
inline constexpr double kDefaultStreamTimeoutS = 30.0;
// Seconds a device spin-wait may last: SYMM_WAIT_TIMEOUT_S, else kDefaultWaitTimeoutS.
double wait_timeout_seconds(const GetEnv& env);
// The same bound in SM clock cycles, as the kernels count it: SYMM_WAIT_TIMEOUT_CYCLES if set,
// else wait_timeout_seconds x the device clock (cudaDevAttrClockRate, kHz). At lower clocks than
// the peak a wait lasts longer than the bound in seconds, never shorter.
unsigned long long wait_timeout_cycles(const GetEnv& env, int clock_khz);
// Seconds the host waits for a stream in which no device wait has reported (an NCCL call whose
// peer is gone, a host-plan stream wait): SYMM_STREAM_TIMEOUT_S, else the larger of
// kDefaultStreamTimeoutS and 4 x the wait bound.
double stream_timeout_seconds(const GetEnv& env, double wait_s);

// The lockstep of a team's enqueues (apps/harness/cuda/bench_common.h team_lockstep):
// SYMM_DEBUG_TEAM_LOCKSTEP unset or 1: kMeets, at a plan call's start, flag writes and kernel
// launches; items: kItems, after every verb but a GEMM; 0: kOff. Anything else: kInvalidArgument
// naming the variable and its values.
enum class TeamLockstep { kOff, kMeets, kItems };
TeamLockstep team_lockstep_mode(const GetEnv& env);
// Whether a team goes in lockstep: an in-process team some GPU of which holds more than one rank
// (`team_gpu_ranks`: the most ranks on one GPU, the same on every rank: a team of 3 over 2 GPUs
// steps on every rank, or the rank alone on its GPU would never meet the others), mode not kOff.
bool team_lockstep_on(TeamLockstep mode, bool team, int team_gpu_ranks);

// ---- testing: make ranks disagree (the GPU suite's no-hang cases) ---------------------
// SYMM_TEST_RANK_ALGO=R:ALGO   rank R runs ALGO (name or alias of the same op) instead of each
//                              algorithm the command asks for
// SYMM_TEST_RANK_SIZE=R:SIZE   rank R runs every call at SIZE bytes instead
// SYMM_TEST_RANK_SKIP=R        rank R never launches the collectives (NCCL's calls still run)
// SYMM_TEST_RANK_KILL=R        rank R kills itself (SIGKILL) in the middle of its first timed run
// `rank` is -1 where the variable is unset. Throws kInvalidArgument naming the variable.
struct TestRankOverrides {
  int algo_rank = -1, size_rank = -1, skip_rank = -1, kill_rank = -1;
  std::string algo;
  std::size_t size = 0;
  bool any() const { return algo_rank >= 0 || size_rank >= 0 || skip_rank >= 0 || kill_rank >= 0; }
};
TestRankOverrides test_rank_overrides(const GetEnv& env);

// ---- machine -------------------------------------------------------------------------
// (Size lists: symm::parse_size_list in core/sizes.h, the grammar every command shares.)
// "h200x4" from a device name and world ("NVIDIA H200" -> h200), "gpu" + world otherwise.
std::string machine_name(const std::string& device_name, int world);

// ---- launch --------------------------------------------------------------------------
// The program `symmcoll launch -n N -- cmd...` runs for each rank: a bare symmcoll
// sub-command (bench, ...) or the word `symmcoll` means this executable (self_exe).
std::vector<std::string> resolve_rank_command(const std::vector<std::string>& cmd, const std::string& self_exe);

}  // namespace symm::cuda

namespace symm::cuda {

// Runs `cmd` (after resolve_rank_command) as n ranks on this host with RANK, WORLD_SIZE,
// LOCAL_RANK and SYMM_RUN_DIR (a fresh mkdtemp directory, removed afterwards) set; waits for
// all. If one rank fails, the others are terminated (SIGTERM at once, SIGKILL 1 s later) and
// its exit code is returned (128 + signal for a killed rank); 0 if all succeed.
int launch_ranks(int n, const std::vector<std::string>& cmd);

}  // namespace symm::cuda
