// One rank's CUDA runtime (host owner): device, NCCL communicator, symmetric heap
// and signal pad (each an ncclMemAlloc buffer registered as an NCCL_WIN_COLL_SYMMETRIC window),
// the per-peer base tables read once through the NCCL device API, and the wait-error area.
//
// Bootstrap: rank 0 creates the NCCL unique id and publishes it as the file
// $SYMM_RUN_DIR/nccl_id (written to a temporary, then renamed); the other ranks poll for it
// for at most SYMM_BOOTSTRAP_TIMEOUT_S seconds (default 120). `symmcoll launch` creates a
// fresh private directory with mkdtemp and removes it afterwards; under torchrun / mpirun set
// SYMM_RUN_DIR to a fresh directory on this host yourself.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <string>

#include "backends/cuda/device_handle.h"
#include "backends/cuda/host_logic.h"

namespace symm::cuda {

class Runtime {
 public:
  Runtime(const RankEnv& env, std::size_t heap_bytes, unsigned long long timeout_cycles);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int rank() const { return h_.rank; }
  int world() const { return h_.world; }
  ncclComm_t comm() const { return comm_; }
  cudaStream_t stream() const { return stream_; }
  char* heap() const { return h_.heap_base; }
  std::size_t heap_bytes() const { return heap_bytes_; }
  const DeviceHandle& handle() const { return h_; }
  const std::string& device_name() const { return device_name_; }
  void set_timeout_cycles(unsigned long long c) { h_.timeout_cycles = c; }

  // Synchronises the stream, then throws kTimeout if any wait on this rank expired.
  void sync();
  // Throws kTimeout describing the first expired wait, and clears it so later calls start clean.
  void check_waits();
  // All ranks meet (a one-element NCCL all-reduce, synchronised).
  void barrier();

 private:
  DeviceHandle h_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  ncclWindow_t heap_win_ = nullptr, pad_win_ = nullptr;
  void* pad_ = nullptr;
  std::size_t heap_bytes_ = 0;
  WaitError* error_host_ = nullptr;
  float* one_ = nullptr;
  std::string device_name_;
};

}  // namespace symm::cuda
