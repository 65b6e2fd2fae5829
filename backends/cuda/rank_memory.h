// One rank's symmetric memory (host owner): its heap and signal pad, every peer's heap and pad as
// this rank addresses them (the DeviceHandle's tables), the mapped wait-error record and the poison
// word. The one set-up of a rank for everything that runs on CUDA (the bench, calibrate, the fused
// bench, the library), with two providers that differ only in how the peers are found:
//
//   nccl_windows  one process per GPU: heap and pad are ncclMemAlloc buffers registered as
//                 NCCL_WIN_COLL_SYMMETRIC windows; peer bases from NCCL's device API
//                 (ncclGetLsaPointer), read once. Collective over the communicator's ranks.
//   in_process    N ranks in this process (team.h): plain cudaMalloc heaps and pads, rank r's
//                 on GPU team_gpu(r, gpus); peer access enabled between the distinct GPUs (ranks
//                 on one GPU need nothing); the tables point into the other ranks' allocations.
//                 Every rank's memory is made at once, from one thread, before any rank runs.
//
// Both zero the heap (flagged-packet scratch must hold no epoch a block could wait for) and the
// pad (epochs only grow) once, and every rank's is zeroed before any rank signals into it: the
// NCCL provider's owner meets its peers after the set-up (Runtime: a barrier), the in-process one
// synchronizes every device before it returns.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "backends/cuda/device_handle.h"

namespace symm::cuda {

class RankMemory {
 public:
  // The current device must be comm's; `s` carries the zeroing and the table reads.
  static std::unique_ptr<RankMemory> nccl_windows(ncclComm_t comm, std::size_t heap_bytes, cudaStream_t s);
  // Ranks 0..world-1 round-robin over the first `gpus` visible GPUs. Leaves the current device as it was.
  static std::vector<std::unique_ptr<RankMemory>> in_process(int world, int gpus, std::size_t heap_bytes);

  // Frees everything (a window is deregistered on its communicator, which must still exist),
  // unless leak() was called. Every rank that could touch this memory must be done with it.
  ~RankMemory();
  RankMemory(const RankMemory&) = delete;
  RankMemory& operator=(const RankMemory&) = delete;

  // rank, world, heap, pads, peer tables, error record, poison, gpu_ranks; timeout_cycles is 0:
  // the owner sets it at its device's clock.
  const DeviceHandle& handle() const { return h_; }
  int device() const { return device_; }
  std::size_t heap_bytes() const { return h_.heap_bytes; }
  ncclWindow_t heap_window() const { return heap_win_; }  // nccl_windows only, else nullptr

  // The first expired device wait of this rank, once the kernel has written all of it.
  std::optional<WaitError> report() const;
  void clear_report();
  // After a failure: the destructor frees nothing (cudaFree could wait forever behind a stream
  // stuck on a flag; the process is about to end, and the driver reclaims it all).
  void leak() { leak_ = true; }

 private:
  RankMemory() = default;
  // The parts both providers share: the mapped error record and the poison word (on the current
  // device, zeroed on `s`).
  void init_record(bool portable, cudaStream_t s);
  void set_peers(const std::vector<char*>& heaps, const std::vector<char*>& pads);

  DeviceHandle h_;
  int device_ = 0;
  void* pad_ = nullptr;
  WaitError* error_host_ = nullptr;
  ncclComm_t comm_ = nullptr;  // nccl_windows: the windows' communicator
  ncclWindow_t heap_win_ = nullptr, pad_win_ = nullptr;
  bool leak_ = false;
};

}  // namespace symm::cuda
