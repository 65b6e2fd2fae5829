// symmcoll's CUDA backend as a library (see symmcoll.h for the interface): adopt the NCCL
// communicator your program already has (PyTorch's process group, MPI + ncclCommInitRank, ...)
// and run symmcoll's collectives on it, one process per GPU of one NVLink node; or make N ranks
// in one process (cuda_node), on one GPU or several.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <memory>
#include <vector>

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

// N ranks in this process, as sim_node gives simulated ones: rank r on GPU r % gpus (round-robin
// over the visible GPUs, or the first `gpus` of them), its heap and signal pad plain device memory
// (cudaMalloc; peer access enabled between the GPUs), no NCCL. The same programs run as with
// cuda_communicator; the "auto" table is the machine's by device and GPU count (h200x1).
//  - Every rank's blocks must be resident at once for its waits to end: a call whose ranks x
//    blocks do not fit on their GPU is refused (kUnsupported, naming ranks, blocks and what fits).
//  - Call each rank from its own thread, or from one thread rank after rank, then synchronize():
//    a rank's synchronize() (cudaDeviceSynchronize of its GPU) before every rank has made the
//    same call waits for a kernel that waits for the missing ranks, and ends in kTimeout.
//  - Host plans (ce, ce_overlap) on a stream other than the communicator's own make their side
//    streams and buffers on first use: make the first such call on every rank before any rank
//    synchronizes (their allocations may wait for the device).
//  - Destroy the communicators after the last synchronize(); each frees its own memory.
//  - Set CUDA_DEVICE_MAX_CONNECTIONS=32 before the process creates its CUDA context (cuda_node
//    sets it if unset, which helps only when no context exists yet): with the default 8, a GPU's
//    streams share hardware queues, and a host plan's stream stopped at a flag wait can stop the
//    peer stream that would write the flag.
//  - Where ranks share a GPU, even with 32 connections some streams of different ranks share a
//    hardware queue, where an item waits in line behind a rank's earlier item that spins for a
//    peer's item queued further back (shown on one H200, README "Eager calls in lockstep"). The
//    bench keeps its ranks in lockstep, after each call and within a host plan's call; these
//    communicators do not step their plans. Meeting the other threads after each call kept the
//    device programs' eager calls safe in the bench; the copy-engine host plans (all_gather ce and
//    ce_sm, reduce_scatter ce and ce_overlap) at 8 ranks on one GPU stopped in it with that alone
//    (teams of 4 completed), and this API's eager calls of them are not measured at 4 or 8 ranks on
//    a GPU: prefer CUDA graphs there.
//  - Programmatic dependent launch is off for the process once cuda_node has run.
struct CudaNodeOptions {
  int world = 2;       // 2..8
  int gpus = 0;        // 0: every visible GPU (CUDA_VISIBLE_DEVICES)
  CudaOptions cuda{};  // heap, staging and wait bound per rank, as for cuda_communicator
};
std::vector<std::unique_ptr<Communicator>> cuda_node(const CudaNodeOptions& options = {});

}  // namespace symm
