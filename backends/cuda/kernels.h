// Host entry points to the device code (kernels.cu). Plain C++ declarations so host files
// need not be compiled by nvcc.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include "backends/cuda/device_handle.h"
#include "core/coll_args.h"
#include "core/registry.h"

namespace symm::cuda {

// Enqueue the core program of registry entry `algo` for element type `t` on `blocks` x
// `threads`. Every device program of core/dispatch.h's list x dtype is instantiated behind it,
// which is also the compile-time proof that all of core/ is valid sm_90a device code. The caller has already refused
// multicast programs (multicast_refusal) and checked arguments (plan_launch).
void launch_program(const AlgoInfo& algo, DType t, const DeviceHandle& h, const CollArgs& a, int blocks, int threads,
                    cudaStream_t s);
// Whether device-program kernels launch with programmatic dependent launch (PDL): their launch
// overlaps the end of the kernel before them on the stream, their blocks start only once it has
// completed (program_kernel.cuh). Process-wide, default on; set before any launch.
bool programmatic_launch();
void set_programmatic_launch(bool on);

// One block waits (acquire) on `slot` for `value`: the bounded-wait error path's probe.
void launch_wait_probe(const DeviceHandle& h, uint32_t slot, uint32_t value, cudaStream_t s);

// One block runs reduce_ll over the packet buffer `packets` (a zeroed heap region nobody writes)
// for `epoch`: the flagged-packet wait's error path.
void launch_ll_probe(const DeviceHandle& h, const void* packets, void* dst, uint32_t epoch, cudaStream_t s);

// out[r] = ncclGetLsaPointer(win, 0, r) for r < world, out[world] = ncclGetLocalPointer(win, 0).
// `out` is device memory of world + 1 pointers.
void gather_window_bases(ncclWindow_t win, int world, void** out, cudaStream_t s);

// Asks NCCL for a device communicator with multimem on the LSA team (NCCL then sets up NVLS
// itself, where it can) and returns the multicast address of offset 0 of `win`
// (ncclGetLsaMultimemPointer), or nullptr where NCCL gives none. Collective: every rank calls it.
// *devcomm receives the device communicator to release with nccl_devcomm_destroy (or nullptr).
// Only ever called where no multicast safety variable is set (multicast_base, host_logic.h).
void* nccl_lsa_multimem_base(ncclComm_t comm, ncclWindow_t win, cudaStream_t s, void** devcomm);
void nccl_devcomm_destroy(ncclComm_t comm, void* devcomm);

}  // namespace symm::cuda
