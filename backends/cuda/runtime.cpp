#include "backends/cuda/runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/nvtx.h"
#include "backends/cuda/team.h"
#include "backends/cuda/tile_fused.h"
#include "backends/cuda/watchdog.h"
#include "core/signal_pad.h"

namespace symm::cuda {
namespace {

ncclUniqueId share_unique_id(const RankEnv& env) {
  ncclUniqueId id;
  if (env.world == 1) {
    SYMM_CUDA_CHECK(ncclGetUniqueId(&id));
    return id;
  }
  if (env.run_dir.empty())
    fail(ErrorCode::kInvalidArgument,
         "WORLD_SIZE=" + std::to_string(env.world) +
             " but SYMM_RUN_DIR is unset: start ranks with `symmcoll launch -n N -- ...`, or set SYMM_RUN_DIR to a "
             "fresh directory on this host shared by all ranks");
  double timeout_s = 120;
  if (const char* t = std::getenv("SYMM_BOOTSTRAP_TIMEOUT_S")) timeout_s = std::atof(t);
  if (env.rank == 0) {
    SYMM_CUDA_CHECK(ncclGetUniqueId(&id));
    publish_blob(env.run_dir, "nccl_id", std::string(reinterpret_cast<const char*>(&id), sizeof id));
  } else {
    const std::string s = await_blob(env.run_dir, "nccl_id", sizeof id, timeout_s);
    std::memcpy(&id, s.data(), sizeof id);
  }
  return id;
}

}  // namespace

Runtime::Runtime(const RankEnv& env, std::size_t heap_bytes, unsigned long long timeout_cycles, bool multicast) {
  int ndev = 0;
  SYMM_CUDA_CHECK(cudaGetDeviceCount(&ndev));
  if (env.local_rank >= ndev)
    fail(ErrorCode::kUnsupported, "rank " + std::to_string(env.rank) + " wants GPU " + std::to_string(env.local_rank) +
                                      " but this host shows " + std::to_string(ndev) +
                                      " GPU(s): fewer GPUs than ranks (world=" + std::to_string(env.world) +
                                      "; N ranks in one process: --world N without launch)");
  device_ = env.local_rank;
  SYMM_CUDA_CHECK(cudaSetDevice(device_));
  // Every kernel we launch loaded now, while nothing runs: a kernel loaded lazily at its first launch
  // may synchronize the context, and a first launch behind a plan's stream wait that a peer never
  // satisfies would then wait inside the driver, where no watchdog runs (kernels.h, tile_fused.h).
  preload_programs();
  preload_plan_programs();
  preload_tile_programs();
  // One process per GPU on one node: GPU j is local rank j, and every pair must have P2P.
  for (int j = 0; j < std::min(ndev, env.world); ++j) {
    if (j == env.local_rank) continue;
    int ok = 0;
    SYMM_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, env.local_rank, j));
    if (!ok)
      fail(ErrorCode::kUnsupported, "no peer access from GPU " + std::to_string(env.local_rank) + " to GPU " +
                                        std::to_string(j) + ": symmetric memory needs NVLink/P2P between all GPUs");
  }
  SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));

  const ncclUniqueId id = share_unique_id(env);
  SYMM_CUDA_CHECK(ncclCommInitRank(&comm_, env.world, id, env.rank));
  heap_bytes_ = heap_bytes;
  own_mem_ = RankMemory::nccl_windows(comm_, heap_bytes, stream_);
  mem_ = own_mem_.get();
  h_ = mem_->handle();
  finish_setup(timeout_cycles);

  // Every rank decides alike (same variables, same NCCL), as NCCL's device-communicator
  // creation is collective.
  if (multicast)
    heap_mc_ = static_cast<char*>(multicast_base(
        process_env(), [&]() { return nccl_lsa_multimem_base(comm_, mem_->heap_window(), stream_, &devcomm_); }));

  SYMM_CUDA_CHECK(cudaMalloc(&one_, sizeof(float)));
  SYMM_CUDA_CHECK(cudaMalloc(&stat_buf_, 8 * sizeof(double)));
  barrier();  // no rank signals into a pad a peer has not zeroed yet
}

Runtime::Runtime(Team& team, const RankMemory& mem, unsigned long long timeout_cycles)
    : team_(&team), device_(mem.device()), mem_(&mem), heap_bytes_(mem.heap_bytes()) {
  // This thread's current device: every CUDA call of the rank below and after is on its GPU.
  SYMM_CUDA_CHECK(cudaSetDevice(device_));
  SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  h_ = mem.handle();
  finish_setup(timeout_cycles);
  // RankMemory::in_process zeroed every heap and pad before any rank thread started.
  team_->barrier(h_.rank, "the set-up of every rank");
}

void Runtime::finish_setup(unsigned long long timeout_cycles) {
  cudaDeviceProp prop{};
  SYMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
  device_name_ = prop.name;
  if (team_) {
    int ndev = 0;
    SYMM_CUDA_CHECK(cudaGetDeviceCount(&ndev));
    machine_ = team_machine_name(device_name_, team_gpus_used(h_.world, ndev));
  } else {
    machine_ = machine_name(device_name_, h_.world);
  }
  int clock_khz = 0;
  SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device_));
  clock_khz_ = std::max(clock_khz, 1);
  h_.timeout_cycles = timeout_cycles ? timeout_cycles : wait_timeout_cycles(process_env(), clock_khz);
  stream_timeout_s_ = stream_timeout_seconds(process_env(), wait_timeout_s());
}

Runtime::~Runtime() {
  // After abort() nothing here may wait for the device or a peer: the process is about to
  // exit non-zero, and the driver reclaims everything.
  if (aborted_) {
    if (own_mem_) own_mem_->leak();
    return;
  }
  // Best effort: a destructor must not throw, and a failed teardown changes no result.
  if (stream_) cudaStreamSynchronize(stream_);
  if (comm_ && devcomm_) nccl_devcomm_destroy(comm_, devcomm_);
  own_mem_.reset();  // deregisters its windows: before the communicator goes
  if (one_) cudaFree(one_);
  if (stat_buf_) cudaFree(stat_buf_);
  if (comm_) ncclCommDestroy(comm_);
  if (stream_) cudaStreamDestroy(stream_);
}

std::optional<std::string> Runtime::device_report() const {
  const std::optional<WaitError> e = mem_->report();
  if (!e) return std::nullopt;
  return describe_wait_timeout(*e);
}

void Runtime::sync() {
  NvtxRange range("symmcoll sync");
  cudaError_t status = cudaSuccess;
  const Watchdog dog(
      [&]() {
        const cudaError_t e = cudaStreamQuery(stream_);
        if (e == cudaErrorNotReady) return false;
        status = e;
        return true;
      },
      [&]() { return device_report(); }, stream_timeout_s_);
  const Watchdog::Result r = dog.wait();
  const std::string in = context_.empty() ? "" : " (in " + context_ + ")";
  switch (r.outcome) {
    case Watchdog::Outcome::kDeviceReport: fail(ErrorCode::kTimeout, r.message + in);
    case Watchdog::Outcome::kHostTimeout:
      fail(ErrorCode::kTimeout, "rank " + std::to_string(h_.rank) + ": " + r.message + in);
    case Watchdog::Outcome::kDone: break;
  }
  SYMM_CUDA_CHECK(status);
}

void Runtime::recover() {
  // The poisoned kernels drain in microseconds; bounded all the same.
  const Watchdog dog([&]() { return cudaStreamQuery(stream_) != cudaErrorNotReady; },
                     []() { return std::optional<std::string>(); }, stream_timeout_s_);
  const Watchdog::Result r = dog.wait();
  if (r.outcome != Watchdog::Outcome::kDone)
    fail(ErrorCode::kTimeout, "rank " + std::to_string(h_.rank) + ": " + r.message + " (draining after a timeout)");
  SYMM_CUDA_CHECK(cudaMemsetAsync(h_.poison, 0, sizeof(uint32_t), stream_));
  SYMM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // a memset of 4 bytes: cannot hang
  const_cast<RankMemory*>(mem_)->clear_report();
}

void Runtime::abort() noexcept {
  if (aborted_) return;
  aborted_ = true;
  // A team's other ranks are stopped by run_team (team.h), which aborts the Team with this
  // rank's error; its memory is its owner's to leak.
  if (comm_) ncclCommAbort(comm_);
  comm_ = nullptr;
}

void Runtime::barrier() {
  if (team_) {
    sync();
    team_->barrier(h_.rank, "a barrier" + (context_.empty() ? std::string() : " (" + context_ + ")"));
    return;
  }
  SYMM_CUDA_CHECK(ncclAllReduce(one_, one_, 1, ncclFloat, ncclSum, comm_, stream_));
  sync();
}

void Runtime::reduce_max(double* v, int n) {
  if (team_) {
    sync();  // as the NCCL path: every rank's stream drained at the meeting
    team_->reduce_max(h_.rank, v, n);
    return;
  }
  if (n > 8) fail(ErrorCode::kInternal, "reduce_max of " + std::to_string(n) + " values (at most 8)");
  set_context("the max over ranks of errors or times (an NCCL all-reduce)");
  SYMM_CUDA_CHECK(cudaMemcpyAsync(stat_buf_, v, sizeof(double) * std::size_t(n), cudaMemcpyHostToDevice, stream_));
  SYMM_CUDA_CHECK(ncclAllReduce(stat_buf_, stat_buf_, std::size_t(n), ncclFloat64, ncclMax, comm_, stream_));
  // Bounded first: a copy into pageable memory would block the host until the all-reduce is done.
  sync();
  SYMM_CUDA_CHECK(cudaMemcpyAsync(v, stat_buf_, sizeof(double) * std::size_t(n), cudaMemcpyDeviceToHost, stream_));
  sync();
}

}  // namespace symm::cuda
