#include "backends/cuda/team.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>

#include "backends/cuda/device_handle.h"
#include "backends/cuda/host_logic.h"
#include "core/common.h"

namespace symm::cuda {
namespace {

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

// "0,2": a list of ranks.
void append_rank(std::string& list, int r) {
  if (!list.empty()) list += ',';
  list += std::to_string(r);
}

}  // namespace

std::optional<std::string> team_world_refusal(int world) {
  if (world >= 2 && world <= kNodeWorld) return std::nullopt;
  return "--world " + std::to_string(world) + " is outside 2.." + std::to_string(kNodeWorld) +
         " (ranks of one in-process team; the peer tables hold " + std::to_string(kNodeWorld) + ")";
}

CommandRanks command_ranks(int world_option, int env_world, const std::string& command) {
  if (world_option != 0) {
    if (env_world > 1)
      fail(ErrorCode::kInvalidArgument, "--world " + std::to_string(world_option) +
                                            " runs the ranks as threads of one process, but this process is a "
                                            "rank of a launch (WORLD_SIZE=" +
                                            std::to_string(env_world) + "): use one or the other");
    if (auto why = team_world_refusal(world_option)) fail(ErrorCode::kInvalidArgument, *why);
    return CommandRanks{world_option, true};
  }
  if (env_world < 2)
    fail(ErrorCode::kInvalidArgument, command + " needs at least 2 ranks (WORLD_SIZE=" + std::to_string(env_world) +
                                          "): one process per GPU with 'symmcoll launch -n N -- symmcoll " + command +
                                          " ...', or N ranks in this process (one GPU is enough) with --world N");
  return CommandRanks{env_world, false};
}

int team_gpu(int rank, int gpus) { return gpus > 0 ? rank % gpus : 0; }

int team_gpus_used(int world, int gpus) { return std::max(1, std::min(world, gpus)); }

int team_ranks_on_gpu(int world, int gpus, int gpu) {
  int n = 0;
  for (int r = 0; r < world; ++r) n += team_gpu(r, gpus) == gpu;
  return n;
}

int team_max_ranks_per_gpu(int world, int gpus) {
  const int used = team_gpus_used(world, gpus);
  return world > 0 ? (world + used - 1) / used : 1;
}

std::string team_machine_name(const std::string& device_name, int gpus_used) {
  const std::string m = machine_name(device_name, gpus_used);
  return gpus_used == 1 ? m : m + "_inproc";
}

int team_max_blocks(int ranks, int per_sm, int sms) {
  if (ranks < 1 || per_sm < 0 || sms < 0) return 0;
  return per_sm * sms / ranks;
}

std::optional<std::string> residency_refusal(const std::string& what, int ranks, int blocks, int threads, int per_sm,
                                             int sms) {
  if (ranks <= 1 || long(ranks) * long(blocks) <= long(per_sm) * long(sms)) return std::nullopt;
  return what + ": " + std::to_string(ranks) + " ranks x " + std::to_string(blocks) + " blocks of " +
         std::to_string(threads) + " threads do not fit on one GPU at once (" + std::to_string(per_sm) + " per SM x " +
         std::to_string(sms) + " SMs = " + std::to_string(per_sm * sms) + " blocks; at most " +
         std::to_string(team_max_blocks(ranks, per_sm, sms)) +
         " per rank): every rank's blocks must be resident for their waits to end (fewer --blocks or ranks)";
}

// ---- Team -------------------------------------------------------------------------------

Team::Team(int world, double timeout_s)
    : world_(world),
      timeout_s_(timeout_s),
      here_(std::size_t(std::max(world, 0)), false),
      gave_up_(here_.size(), false),
      ptrs_(here_.size()),
      stepped_(new std::atomic<unsigned long long>[std::size_t(std::max(world, 1))]) {
  if (world < 1) fail(ErrorCode::kInvalidArgument, "a team needs at least one rank");
  for (int r = 0; r < world; ++r) stepped_[std::size_t(r)].store(0);
}

void Team::lockstep(int rank, double bound_s, const std::string& what) {
  const double bound = bound_s > 0 ? bound_s : timeout_s_;
  const unsigned long long n = stepped_[std::size_t(rank)].fetch_add(1, std::memory_order_acq_rel) + 1;
  const auto start = std::chrono::steady_clock::now();
  auto all_there = [&] {
    for (int r = 0; r < world_; ++r)
      if (stepped_[std::size_t(r)].load(std::memory_order_acquire) < n) return false;
    return true;
  };
  for (unsigned spins = 1; !all_there(); ++spins) {
    if (spins % 256) continue;
    if (aborted()) {
      std::lock_guard<std::mutex> lk(m_);
      fail(ErrorCode::kInternal, "the team was aborted: " + why_);
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > bound) {
      std::string behind;
      for (int r = 0; r < world_; ++r)
        if (stepped_[std::size_t(r)].load(std::memory_order_acquire) < n) append_rank(behind, r);
      if (behind.empty()) return;  // the last rank came meanwhile
      fail(ErrorCode::kTimeout, "rank " + std::to_string(rank) + " waited " + seconds(bound) +
                                    " at the team's lockstep (step " + std::to_string(n) + ") for rank(s) " + behind +
                                    ", which never got there" + (what.empty() ? "" : " (in " + what + ")"));
    }
    std::this_thread::yield();
  }
}

void Team::meet(int rank, Kind kind, const std::string& what, const std::function<void()>& on_arrive,
                const std::function<void()>& after_all_arrived, const std::function<void()>& on_leave) {
  std::unique_lock<std::mutex> lk(m_);
  if (aborted_) fail(ErrorCode::kInternal, "the team was aborted: " + why_);
  if (rank < 0 || rank >= world_ || here_[std::size_t(rank)])
    fail(ErrorCode::kInternal, "rank " + std::to_string(rank) + " arrived twice at " + what);
  // Ranks run the same sequence of meetings; one that is elsewhere is a bug, never a result.
  if (arrived_ > 0 && kind != kind_) {
    // Thrown, not aborted here: run_team records this error first, then aborts the team with it.
    fail(ErrorCode::kInternal, "rank " + std::to_string(rank) + " is at " + what + " while rank(s) that arrived " +
                                   "first are at " + what_ + ": the ranks' sequences of meetings differ");
  }
  if (arrived_ == 0) kind_ = kind, what_ = what;
  const unsigned long long gen = generation_;
  on_arrive();  // first, so that a failed contribution leaves the meeting as it was
  here_[std::size_t(rank)] = true;
  if (++arrived_ == world_) {
    after_all_arrived();
    arrived_ = 0;
    std::fill(here_.begin(), here_.end(), false);
    std::fill(gave_up_.begin(), gave_up_.end(), false);
    ++generation_;
    cv_.notify_all();
    on_leave();
    return;
  }
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s_));
  while (generation_ == gen && !aborted_) {
    if (cv_.wait_until(lk, deadline) != std::cv_status::timeout) continue;
    if (generation_ != gen || aborted_) break;
    // A rank that came and has already given up (its own bound ran out a moment earlier) came:
    // only the ranks that never arrived are named.
    std::string missing;
    for (int r = 0; r < world_; ++r)
      if (!here_[std::size_t(r)] && !gave_up_[std::size_t(r)]) append_rank(missing, r);
    const std::string msg = "rank " + std::to_string(rank) + " waited " + seconds(timeout_s_) + " at " + what +
                            " for rank(s) " + missing + ", which never came";
    // This rank leaves the meeting (the others stay until run_team aborts the team with this error).
    here_[std::size_t(rank)] = false;
    gave_up_[std::size_t(rank)] = true;
    --arrived_;
    fail(ErrorCode::kTimeout, msg);
  }
  if (generation_ == gen) fail(ErrorCode::kInternal, "the team was aborted: " + why_);
  // The results of this meeting change only when the next one completes, which needs this rank.
  on_leave();
}

void Team::barrier(int rank, const std::string& what) {
  meet(
      rank, Kind::kBarrier, what, [] {}, [] {}, [] {});
}

void Team::reduce_max(int rank, double* v, int n) {
  meet(
      rank, Kind::kMax, "the max over ranks",
      [&] {
        if (arrived_ == 0) {
          acc_.assign(v, v + n);
          return;
        }
        if (int(acc_.size()) != n)
          fail(ErrorCode::kInternal, "reduce_max: rank " + std::to_string(rank) + " gives " + std::to_string(n) +
                                         " values, another rank " + std::to_string(acc_.size()));
        for (int i = 0; i < n; ++i) acc_[std::size_t(i)] = std::max(acc_[std::size_t(i)], v[i]);
      },
      [this] { result_ = acc_; }, [&] { std::copy_n(result_.begin(), std::size_t(n), v); });
}

std::vector<void*> Team::all_gather(int rank, void* p) {
  std::vector<void*> out;
  meet(
      rank, Kind::kExchange, "the exchange of addresses", [&] { ptrs_[std::size_t(rank)] = p; },
      [this] { ptrs_result_ = ptrs_; }, [&] { out = ptrs_result_; });
  return out;
}

void Team::abort(const std::string& why) noexcept {
  try {
    std::lock_guard<std::mutex> lk(m_);
    if (!aborted_) {
      aborted_ = true;
      why_ = why;
    }
  } catch (...) {
  }
  cv_.notify_all();
}

bool Team::aborted() const {
  std::lock_guard<std::mutex> lk(m_);
  return aborted_;
}

// ---- run_team -------------------------------------------------------------------------------

int run_team(Team& team, const std::function<int(int rank)>& fn, double stop_bound_s,
             const std::function<void(const std::string&)>& on_stuck) {
  const int n = team.world();
  std::mutex m;
  std::condition_variable cv;
  std::vector<int> rc(std::size_t(n), 0);
  std::vector<bool> done(std::size_t(n), false);
  std::exception_ptr first;
  int first_rank = -1;
  std::vector<std::thread> threads;
  threads.reserve(std::size_t(n));
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      int code = 0;
      try {
        code = fn(r);
      } catch (...) {
        std::string why = "rank " + std::to_string(r) + " failed";
        try {
          throw;
        } catch (const std::exception& e) {
          why += ": " + std::string(e.what());
        } catch (...) {
        }
        {
          std::lock_guard<std::mutex> lk(m);
          if (!first) first = std::current_exception(), first_rank = r;
        }
        team.abort(why);
        code = 1;
      }
      std::lock_guard<std::mutex> lk(m);
      rc[std::size_t(r)] = code;
      done[std::size_t(r)] = true;
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lk(m);
    auto all_done = [&] { return std::all_of(done.begin(), done.end(), [](bool d) { return d; }); };
    // Until a rank fails, ranks may run for as long as their work takes.
    cv.wait(lk, [&] { return all_done() || first != nullptr; });
    if (!all_done() && !cv.wait_for(lk, std::chrono::duration<double>(stop_bound_s), all_done) && on_stuck) {
      std::string stuck;
      for (int r = 0; r < n; ++r)
        if (!done[std::size_t(r)]) append_rank(stuck, r);
      on_stuck("rank(s) " + stuck + " did not stop within " + seconds(stop_bound_s) + " after rank " +
               std::to_string(first_rank) + " failed");
    }
  }
  for (std::thread& t : threads) t.join();
  if (first) {
    try {
      std::rethrow_exception(first);
    } catch (const Error& e) {
      throw Error(e.code(), "rank " + std::to_string(first_rank) + ": " + e.what());
    } catch (const std::exception& e) {
      throw Error(ErrorCode::kInternal, "rank " + std::to_string(first_rank) + ": " + e.what());
    }
  }
  return *std::max_element(rc.begin(), rc.end());
}

}  // namespace symm::cuda
