#include "backends/cuda/runtime.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/nvtx.h"
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

// Peer bases of a symmetric window, as this process addresses them.
std::vector<char*> window_bases(ncclWindow_t win, int world, int rank, void* local, cudaStream_t s) {
  void** dev = nullptr;
  SYMM_CUDA_CHECK(cudaMalloc(&dev, sizeof(void*) * std::size_t(world + 1)));
  gather_window_bases(win, world, dev, s);
  std::vector<void*> host(std::size_t(world) + 1);
  SYMM_CUDA_CHECK(cudaMemcpyAsync(host.data(), dev, sizeof(void*) * host.size(), cudaMemcpyDeviceToHost, s));
  SYMM_CUDA_CHECK(cudaStreamSynchronize(s));
  SYMM_CUDA_CHECK(cudaFree(dev));
  // The tables index peers by world rank; NCCL's LSA team indexes by LSA rank. They agree on
  // one node with every rank in the team, which is what this backend supports: check it.
  // (NCCL maps the team's buffers into one flat range of its own, so these addresses alias
  // `local` rather than equal it; offsets within the window are the same.)
  (void)local;
  if (host[std::size_t(rank)] != host[std::size_t(world)])
    fail(ErrorCode::kUnsupported, "NCCL's LSA team does not map world rank " + std::to_string(rank) +
                                      " to the same LSA rank (all ranks must be on one NVLink node)");
  std::vector<char*> out;
  for (int r = 0; r < world; ++r) out.push_back(static_cast<char*>(host[std::size_t(r)]));
  return out;
}

}  // namespace

Runtime::Runtime(const RankEnv& env, std::size_t heap_bytes, unsigned long long timeout_cycles, bool multicast) {
  int ndev = 0;
  SYMM_CUDA_CHECK(cudaGetDeviceCount(&ndev));
  if (env.local_rank >= ndev)
    fail(ErrorCode::kUnsupported, "rank " + std::to_string(env.rank) + " wants GPU " + std::to_string(env.local_rank) +
                                      " but this host shows " + std::to_string(ndev) +
                                      " GPU(s): fewer GPUs than ranks (world=" + std::to_string(env.world) + ")");
  SYMM_CUDA_CHECK(cudaSetDevice(env.local_rank));
  // One process per GPU on one node: GPU j is local rank j, and every pair must have P2P.
  for (int j = 0; j < std::min(ndev, env.world); ++j) {
    if (j == env.local_rank) continue;
    int ok = 0;
    SYMM_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, env.local_rank, j));
    if (!ok)
      fail(ErrorCode::kUnsupported, "no peer access from GPU " + std::to_string(env.local_rank) + " to GPU " +
                                        std::to_string(j) + ": symmetric memory needs NVLink/P2P between all GPUs");
  }
  cudaDeviceProp prop{};
  SYMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, env.local_rank));
  device_name_ = prop.name;
  SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));

  const ncclUniqueId id = share_unique_id(env);
  SYMM_CUDA_CHECK(ncclCommInitRank(&comm_, env.world, id, env.rank));

  heap_bytes_ = heap_bytes;
  void* heap = nullptr;
  SYMM_CUDA_CHECK(ncclMemAlloc(&heap, heap_bytes));
  SYMM_CUDA_CHECK(ncclCommWindowRegister(comm_, heap, heap_bytes, &heap_win_, NCCL_WIN_COLL_SYMMETRIC));
  // Once, ever: flagged-packet scratch must hold no epoch a block could wait for (epochs start
  // at 1), and nothing else is ever written into it (heap_layout).
  SYMM_CUDA_CHECK(cudaMemsetAsync(heap, 0, heap_bytes, stream_));
  SYMM_CUDA_CHECK(ncclMemAlloc(&pad_, pad::kPadBytes));
  SYMM_CUDA_CHECK(ncclCommWindowRegister(comm_, pad_, pad::kPadBytes, &pad_win_, NCCL_WIN_COLL_SYMMETRIC));
  SYMM_CUDA_CHECK(cudaMemsetAsync(pad_, 0, pad::kPadBytes, stream_));  // once, ever: epochs only grow

  h_.rank = env.rank;
  h_.world = env.world;
  h_.heap_base = static_cast<char*>(heap);
  h_.pad_local = static_cast<uint32_t*>(pad_);
  int clock_khz = 0;
  SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, env.local_rank));
  h_.timeout_cycles = timeout_cycles ? timeout_cycles : wait_timeout_cycles(process_env(), clock_khz);
  stream_timeout_s_ = stream_timeout_seconds(process_env(), double(h_.timeout_cycles) / (double(clock_khz) * 1e3));
  const auto heaps = window_bases(heap_win_, env.world, env.rank, heap, stream_);
  const auto pads = window_bases(pad_win_, env.world, env.rank, pad_, stream_);
  for (int r = 0; r < env.world; ++r) {
    h_.heap_peer[r] = heaps[std::size_t(r)];
    h_.pad_peer[r] = reinterpret_cast<uint32_t*>(pads[std::size_t(r)]);
  }

  // Mapped pinned host memory: the host can read a timeout report without a device copy.
  SYMM_CUDA_CHECK(cudaHostAlloc(&error_host_, sizeof(WaitError), cudaHostAllocMapped));
  *error_host_ = WaitError{};
  void* dev_err = nullptr;
  SYMM_CUDA_CHECK(cudaHostGetDevicePointer(&dev_err, error_host_, 0));
  h_.error = static_cast<WaitError*>(dev_err);
  SYMM_CUDA_CHECK(cudaMalloc(&h_.poison, sizeof(uint32_t)));
  SYMM_CUDA_CHECK(cudaMemsetAsync(h_.poison, 0, sizeof(uint32_t), stream_));

  // Every rank decides alike (same variables, same NCCL), as NCCL's device-communicator
  // creation is collective.
  if (multicast)
    heap_mc_ = static_cast<char*>(
        multicast_base(process_env(), [&]() { return nccl_lsa_multimem_base(comm_, heap_win_, stream_, &devcomm_); }));

  SYMM_CUDA_CHECK(cudaMalloc(&one_, sizeof(float)));
  barrier();  // no rank signals into a pad a peer has not zeroed yet
}

Runtime::~Runtime() {
  // After abort() nothing here may wait for the device or a peer: the process is about to
  // exit non-zero, and the driver reclaims everything.
  if (aborted_) return;
  // Best effort: a destructor must not throw, and a failed teardown changes no result.
  if (stream_) cudaStreamSynchronize(stream_);
  if (comm_ && devcomm_) nccl_devcomm_destroy(comm_, devcomm_);
  if (comm_) {
    if (heap_win_) ncclCommWindowDeregister(comm_, heap_win_);
    if (pad_win_) ncclCommWindowDeregister(comm_, pad_win_);
  }
  if (h_.heap_base) ncclMemFree(h_.heap_base);
  if (pad_) ncclMemFree(pad_);
  if (one_) cudaFree(one_);
  if (error_host_) cudaFreeHost(error_host_);
  if (h_.poison) cudaFree(h_.poison);
  if (comm_) ncclCommDestroy(comm_);
  if (stream_) cudaStreamDestroy(stream_);
}

std::optional<std::string> Runtime::device_report() const {
  volatile WaitError* e = error_host_;
  // tripped is claimed first, the fields follow: report only once the kernel says they are written.
  if (!e->tripped || !e->complete) return std::nullopt;
  std::atomic_thread_fence(std::memory_order_acquire);
  WaitError copy;
  copy.tripped = e->tripped;
  copy.rank = e->rank;
  copy.block = e->block;
  copy.slot = e->slot;
  copy.expected = e->expected;
  copy.seen = e->seen;
  copy.kind = e->kind;
  copy.packet = e->packet;
  copy.offset = e->offset;
  return describe_wait_timeout(copy);
}

void Runtime::sync() {
  NvtxRange range("symmcoll sync");
  cudaError_t status = cudaSuccess;
  Watchdog dog(
      [&]() {
        const cudaError_t e = cudaStreamQuery(stream_);
        if (e == cudaErrorNotReady) return false;
        status = e;
        return true;
      },
      [&]() { return device_report(); }, stream_timeout_s_);
  for (Watchdog::Watch& w : stream_waits_) dog.add(std::move(w));
  stream_waits_.clear();
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
  *error_host_ = WaitError{};
}

void Runtime::abort() noexcept {
  if (aborted_) return;
  aborted_ = true;
  if (comm_) ncclCommAbort(comm_);
  comm_ = nullptr;
}

void Runtime::barrier() {
  SYMM_CUDA_CHECK(ncclAllReduce(one_, one_, 1, ncclFloat, ncclSum, comm_, stream_));
  sync();
}

}  // namespace symm::cuda
