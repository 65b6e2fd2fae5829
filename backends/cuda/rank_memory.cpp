#include "backends/cuda/rank_memory.h"

#include <atomic>
#include <string>

#include "backends/cuda/check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/team.h"
#include "core/common.h"
#include "core/signal_pad.h"

namespace symm::cuda {
namespace {

// Peer bases of a symmetric window, as this process addresses them.
std::vector<char*> window_bases(ncclWindow_t win, int world, int rank, cudaStream_t s) {
  void** dev = nullptr;
  SYMM_CUDA_CHECK(cudaMalloc(&dev, sizeof(void*) * std::size_t(world + 1)));
  gather_window_bases(win, world, dev, s);
  std::vector<void*> host(std::size_t(world) + 1);
  SYMM_CUDA_CHECK(cudaMemcpyAsync(host.data(), dev, sizeof(void*) * host.size(), cudaMemcpyDeviceToHost, s));
  SYMM_CUDA_CHECK(cudaStreamSynchronize(s));
  SYMM_CUDA_CHECK(cudaFree(dev));
  // The tables index peers by world rank; NCCL's LSA team indexes by LSA rank. They agree on
  // one node with every rank in the team, which is what this backend supports: check it.
  // (NCCL maps the team's buffers into one flat range of its own, so these addresses alias the
  // local buffer rather than equal it; offsets within the window are the same.)
  if (host[std::size_t(rank)] != host[std::size_t(world)])
    fail(ErrorCode::kUnsupported, "NCCL's LSA team does not map world rank " + std::to_string(rank) +
                                      " to the same LSA rank (all ranks must be on one NVLink node)");
  std::vector<char*> out;
  for (int r = 0; r < world; ++r) out.push_back(static_cast<char*>(host[std::size_t(r)]));
  return out;
}

// Restores the caller's current device.
struct DeviceGuard {
  int saved = 0;
  DeviceGuard() { SYMM_CUDA_CHECK(cudaGetDevice(&saved)); }
  ~DeviceGuard() { cudaSetDevice(saved); }
};

}  // namespace

void RankMemory::init_record(bool portable, cudaStream_t s) {
  // Mapped pinned host memory: the host reads a timeout report without a device copy. Portable
  // in a team: ranks on other GPUs' contexts see it pinned too.
  SYMM_CUDA_CHECK(
      cudaHostAlloc(&error_host_, sizeof(WaitError), cudaHostAllocMapped | (portable ? cudaHostAllocPortable : 0)));
  *error_host_ = WaitError{};
  void* dev_err = nullptr;
  SYMM_CUDA_CHECK(cudaHostGetDevicePointer(&dev_err, error_host_, 0));
  h_.error = static_cast<WaitError*>(dev_err);
  // The rank's poison word: the first wait that times out sets it, later waits return at once.
  SYMM_CUDA_CHECK(cudaMalloc(&h_.poison, sizeof(uint32_t)));
  SYMM_CUDA_CHECK(cudaMemsetAsync(h_.poison, 0, sizeof(uint32_t), s));
}

void RankMemory::set_peers(const std::vector<char*>& heaps, const std::vector<char*>& pads) {
  for (int r = 0; r < h_.world; ++r) {
    h_.heap_peer[r] = heaps[std::size_t(r)];
    h_.pad_peer[r] = reinterpret_cast<uint32_t*>(pads[std::size_t(r)]);
  }
}

std::unique_ptr<RankMemory> RankMemory::nccl_windows(ncclComm_t comm, std::size_t heap_bytes, cudaStream_t s) {
  std::unique_ptr<RankMemory> m(new RankMemory());
  int rank = 0, world = 0;
  SYMM_CUDA_CHECK(ncclCommUserRank(comm, &rank));
  SYMM_CUDA_CHECK(ncclCommCount(comm, &world));
  SYMM_CUDA_CHECK(cudaGetDevice(&m->device_));
  m->comm_ = comm;
  m->h_.heap_bytes = heap_bytes;
  m->h_.rank = rank;
  m->h_.world = world;
  void* heap = nullptr;
  SYMM_CUDA_CHECK(ncclMemAlloc(&heap, heap_bytes));
  m->h_.heap_base = static_cast<char*>(heap);
  SYMM_CUDA_CHECK(ncclCommWindowRegister(comm, heap, heap_bytes, &m->heap_win_, NCCL_WIN_COLL_SYMMETRIC));
  SYMM_CUDA_CHECK(cudaMemsetAsync(heap, 0, heap_bytes, s));  // packet scratch: no epoch yet
  SYMM_CUDA_CHECK(ncclMemAlloc(&m->pad_, pad::kPadBytes));
  SYMM_CUDA_CHECK(ncclCommWindowRegister(comm, m->pad_, pad::kPadBytes, &m->pad_win_, NCCL_WIN_COLL_SYMMETRIC));
  SYMM_CUDA_CHECK(cudaMemsetAsync(m->pad_, 0, pad::kPadBytes, s));  // epochs only grow
  m->h_.pad_local = static_cast<uint32_t*>(m->pad_);
  m->init_record(false, s);  // ordered before the table reads below, which synchronize s
  m->set_peers(window_bases(m->heap_win_, world, rank, s), window_bases(m->pad_win_, world, rank, s));
  return m;
}

std::vector<std::unique_ptr<RankMemory>> RankMemory::in_process(int world, int gpus, std::size_t heap_bytes) {
  if (auto why = team_world_refusal(world)) fail(ErrorCode::kInvalidArgument, *why);
  if (gpus < 1) fail(ErrorCode::kUnsupported, "an in-process team needs a GPU; this host shows none");
  const DeviceGuard guard;
  const int used = team_gpus_used(world, gpus);
  // Peer access between every pair of distinct GPUs the team uses (ranks on one GPU need none).
  for (int i = 0; i < used; ++i)
    for (int j = 0; j < used; ++j) {
      if (i == j) continue;
      int ok = 0;
      SYMM_CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, i, j));
      if (!ok)
        fail(ErrorCode::kUnsupported, "no peer access from GPU " + std::to_string(i) + " to GPU " + std::to_string(j) +
                                          ": a team over several GPUs needs NVLink/P2P between them (or "
                                          "CUDA_VISIBLE_DEVICES naming one GPU)");
      SYMM_CUDA_CHECK(cudaSetDevice(i));
      const cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        (void)cudaGetLastError();  // enabled before (another team in this process): fine
      else
        SYMM_CUDA_CHECK(e);
    }
  std::vector<std::unique_ptr<RankMemory>> team;
  std::vector<char*> heaps, pads;
  for (int r = 0; r < world; ++r) {
    std::unique_ptr<RankMemory> m(new RankMemory());
    m->device_ = team_gpu(r, gpus);
    SYMM_CUDA_CHECK(cudaSetDevice(m->device_));
    m->h_.heap_bytes = heap_bytes;
    m->h_.rank = r;
    m->h_.world = world;
    m->h_.gpu_ranks = team_ranks_on_gpu(world, gpus, m->device_);
    m->h_.team_gpu_ranks = team_max_ranks_per_gpu(world, gpus);
    void* heap = nullptr;
    SYMM_CUDA_CHECK(cudaMalloc(&heap, heap_bytes));
    m->h_.heap_base = static_cast<char*>(heap);
    SYMM_CUDA_CHECK(cudaMemset(heap, 0, heap_bytes));
    SYMM_CUDA_CHECK(cudaMalloc(&m->pad_, pad::kPadBytes));
    SYMM_CUDA_CHECK(cudaMemset(m->pad_, 0, pad::kPadBytes));
    m->h_.pad_local = static_cast<uint32_t*>(m->pad_);
    m->init_record(true, nullptr);  // the legacy stream: synchronized below
    heaps.push_back(m->h_.heap_base);
    pads.push_back(static_cast<char*>(m->pad_));
    team.push_back(std::move(m));
  }
  for (auto& m : team) m->set_peers(heaps, pads);
  // Every heap and pad zeroed before any rank runs (cudaMemset is asynchronous for device memory).
  for (int g = 0; g < used; ++g) {
    SYMM_CUDA_CHECK(cudaSetDevice(g));
    SYMM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  return team;
}

RankMemory::~RankMemory() {
  if (leak_) return;
  // Best effort: a destructor must not throw, and a failed teardown changes no result.
  int saved = 0;
  const bool restore = cudaGetDevice(&saved) == cudaSuccess;
  cudaSetDevice(device_);
  if (comm_) {
    if (heap_win_) ncclCommWindowDeregister(comm_, heap_win_);
    if (pad_win_) ncclCommWindowDeregister(comm_, pad_win_);
    if (h_.heap_base) ncclMemFree(h_.heap_base);
    if (pad_) ncclMemFree(pad_);
  } else {
    if (h_.heap_base) cudaFree(h_.heap_base);
    if (pad_) cudaFree(pad_);
  }
  if (error_host_) cudaFreeHost(error_host_);
  if (h_.poison) cudaFree(h_.poison);
  if (restore) cudaSetDevice(saved);
}

std::optional<WaitError> RankMemory::report() const {
  volatile WaitError* e = error_host_;
  // tripped is claimed first, the fields follow: report only once the kernel says they are written.
  if (!e || !e->tripped || !e->complete) return std::nullopt;
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
  copy.complete = e->complete;
  return copy;
}

void RankMemory::clear_report() { *error_host_ = WaitError{}; }

}  // namespace symm::cuda
