// symmcoll's CUDA backend as a library (see symmcoll.h for the interface): adopt the NCCL
// communicator your program already has (PyTorch's process group, MPI + ncclCommInitRank, ...)
// and run symmcoll's collectives on it, one process per GPU of one NVLink node.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <memory>

#include "symmcoll/symmcoll.h"

namespace symm {

struct CudaOptions {
  // Symmetric memory per rank, one NCCL window (ncclMemAlloc + ncclCommWindowRegister,
  // NCCL_WIN_COLL_SYMMETRIC): the programs' fixed scratch, then alloc()'s arena. Every call's
  // in/out/scratch must fit; buffers from outside it are staged through `staging_bytes` of it.
  std::size_t heap_bytes = std::size_t(256) << 20;
  std::size_t staging_bytes = std::size_t(64) << 20;
  unsigned long long wait_timeout_cycles = 0;  // 0: SYMM_WAIT_TIMEOUT_CYCLES or ~4 s
};

// Calls whose buffers are staged share one staging region: issue them on one stream, or
// synchronize between streams. Multicast (NVLS) programs are refused as in `symmcoll bench`.
//
// Collective over the ranks of `comm` (call it on every rank). The communicator stays yours:
// symmcoll registers its windows on it and deregisters them when the Communicator is destroyed,
// which must happen before ncclCommDestroy(comm). The current CUDA device must be comm's device.
std::unique_ptr<Communicator> cuda_communicator(ncclComm_t comm, const CudaOptions& options = {});

}  // namespace symm
