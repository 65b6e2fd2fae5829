// N ranks in one process (DESIGN.md, "Teams of ranks (CUDA)"): the host-side parts that need no
// GPU, kept apart so CI tests them (tests/cuda/test_team.cpp): where each rank runs, whether all
// ranks' blocks fit on a GPU at once, and how the rank threads meet.
//
// The in-process team is the second provider of a rank's team (the first: NCCL windows, one
// process per GPU). Ranks are placed round-robin over the visible GPUs; on one GPU every rank's
// kernels share the SMs, so a spin-wait ends only if every rank's blocks are resident at once:
// residency_refusal() says so before a launch instead of letting the wait run out its bound.
//
// One host thread per rank (run_team), so a rank blocks and waits as a process would. The
// threads meet through Team: a barrier, an element-wise max and a pointer exchange, each bounded
// (timeout) and abortable: the first rank that fails aborts the team, and every rank waiting in a
// meeting (or arriving at one later) throws at once instead of waiting for a rank that is gone.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/flag_edges.h"

namespace symm::cuda {

// ---- placement ------------------------------------------------------------------------
// --world of an in-process team: nullopt when 2..kNodeWorld, else the one-line refusal.
std::optional<std::string> team_world_refusal(int world);
// The GPU of `rank` (round-robin over `gpus` visible GPUs).
int team_gpu(int rank, int gpus);
// GPUs a team of `world` ranks uses, and how many of its ranks share GPU `gpu`.
int team_gpus_used(int world, int gpus);
int team_ranks_on_gpu(int world, int gpus, int gpu);
// The most ranks any GPU holds: team_ranks_on_gpu's maximum over the GPUs used.
int team_max_ranks_per_gpu(int world, int gpus);
// The machine column of a team's rows: the device and the GPU count ("h200x1": any number of
// ranks on one H200), never an NVLink machine's name: a team over several GPUs is marked
// "_inproc" ("h200x2_inproc"), since h200x2 names one process per GPU with NCCL beside it.
std::string team_machine_name(const std::string& device_name, int gpus_used);

// The ranks a command runs: `world_option` > 0 (--world N) is an in-process team of N ranks,
// refused under a launcher (WORLD_SIZE > 1: one or the other); 0 (not given) is the launcher's
// ranks (RANK / WORLD_SIZE), at least 2. Throws kInvalidArgument in one line naming the way out.
struct CommandRanks {
  int world = 0;
  bool team = false;
};
CommandRanks command_ranks(int world_option, int env_world, const std::string& command);

// ---- residency ------------------------------------------------------------------------
// Blocks of one rank's kernel that fit beside the other `ranks - 1` ranks' equal kernels on one
// GPU: floor(per_sm x sms / ranks), where per_sm is what the occupancy API gives for the kernel
// at its thread count (cudaOccupancyMaxActiveBlocksPerMultiprocessor) and sms the GPU's SMs.
int team_max_blocks(int ranks, int per_sm, int sms);
// nullopt when `ranks` x `blocks` fit at once, else the refusal in one line naming ranks, blocks,
// threads and what fits ("what": the program, e.g. "all_reduce.ld_reduce bf16").
std::optional<std::string> residency_refusal(const std::string& what, int ranks, int blocks, int threads, int per_sm,
                                             int sms);

// ---- meeting --------------------------------------------------------------------------
// Default bound of one meeting: a rank that does not arrive within it (a host-side hang) ends the
// run with kTimeout naming the meeting. Longer than any bounded device wait it could follow.
inline constexpr double kTeamMeetTimeoutS = 600.0;

class Team {
 public:
  explicit Team(int world, double timeout_s = kTeamMeetTimeoutS);
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  int world() const { return world_; }
  // All ranks meet. Throws kTimeout (naming `what` and the ranks that never came) after the
  // bound, and kInternal "the team was aborted: <why>" once any rank has aborted it.
  void barrier(int rank, const std::string& what = "a barrier");
  // Element-wise maximum over ranks of v[0..n), in place (every rank passes the same n).
  void reduce_max(int rank, double* v, int n);
  // Every rank's pointer, in rank order (a meeting).
  std::vector<void*> all_gather(int rank, void* p);
  // Enqueues in lockstep (apps/harness/cuda/bench_common.h team_lockstep): this rank has enqueued
  // its next call (or a plan's next flag write or launch); returns once every rank has got as far. It spins (a call
  // costs about a microsecond this way, where a barrier's sleep and wake-up cost several), throws on abort, and after
  // `bound_s` (<= 0: the team's timeout) throws kTimeout naming the ranks behind and `what` (the call in progress, if
  // not empty).
  void lockstep(int rank, double bound_s = 0, const std::string& what = "");
  // Wakes every waiting rank, which then throws; later meetings throw at once. The first reason wins.
  void abort(const std::string& why) noexcept;
  bool aborted() const;
  // The cross-rank flags of the team graph being captured (team_graph.h), shared by the ranks.
  FlagEdges& flag_edges() { return flag_edges_; }

 private:
  // One meeting, every callback under the lock: on_arrive (this rank's contribution), then
  // after_all_arrived (by the last rank to arrive), then on_leave (each rank, reading results).
  // Throws on abort or timeout (which aborts the team).
  // A rank arriving at another kind of meeting than the ranks already there aborts the team.
  enum class Kind { kBarrier, kMax, kExchange };
  void meet(int rank, Kind kind, const std::string& what, const std::function<void()>& on_arrive,
            const std::function<void()>& after_all_arrived, const std::function<void()>& on_leave);

  const int world_;
  const double timeout_s_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  unsigned long long generation_ = 0;
  int arrived_ = 0;
  std::vector<bool> here_;     // ranks arrived at the current meeting
  std::vector<bool> gave_up_;  // ranks that came to it, waited out the bound and left (never "missing")
  bool aborted_ = false;
  std::string why_;
  Kind kind_ = Kind::kBarrier;  // of the meeting in progress, and its first arrival's `what`
  std::string what_;
  std::vector<double> acc_;     // reduce_max's accumulator
  std::vector<double> result_;  // and its result, read after the meeting
  std::vector<void*> ptrs_, ptrs_result_;
  FlagEdges flag_edges_;
  std::unique_ptr<std::atomic<unsigned long long>[]> stepped_;  // lockstep: calls each rank enqueued
};

// Runs fn(rank) on one thread per rank and joins them all. The first rank that throws aborts the
// team (the others leave their meetings and, with their device waits bounded, their streams);
// that first error is rethrown once every thread has ended. Returns the largest return value.
// If a thread has not ended `stop_bound_s` after the abort (a CUDA call that never returns),
// `on_stuck(message)` is called (the command line prints it and exits; default: keep waiting).
int run_team(Team& team, const std::function<int(int rank)>& fn, double stop_bound_s = 120.0,
             const std::function<void(const std::string&)>& on_stuck = nullptr);

}  // namespace symm::cuda
