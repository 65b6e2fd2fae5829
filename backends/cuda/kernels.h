// Host entry points to the device code (kernels.cu). Plain C++ declarations so host files
// need not be compiled by nvcc.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include "backends/cuda/device_handle.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/verb_trace.h"
#include "core/coll_args.h"
#include "core/registry.h"

namespace symm::cuda {

// Enqueue the core program of registry entry `algo` for element type `t` on `blocks` x
// `threads`. Every device program of core/dispatch.h's list x dtype is instantiated behind it,
// which is also the compile-time proof that all of core/ is valid sm_90a device code. The caller has already refused
// multicast programs (multicast_refusal) and checked arguments (plan_launch). With a stamp buffer
// in `trace` (a traced call, verb_trace.h), the program's traced kernel.
void launch_program(const AlgoInfo& algo, DType t, const DeviceHandle& h, const CollArgs& a, int blocks, int threads,
                    cudaStream_t s, const VerbTraceBuf& trace = {});
// Whether device-program kernels launch with programmatic dependent launch (PDL): their launch
// overlaps the end of the kernel before them on the stream, their blocks start only once it has
// completed (program_kernel.cuh). Process-wide, default on; set before any launch.
bool programmatic_launch();
void set_programmatic_launch(bool on);

// In an in-process team (h.gpu_ranks > 1; team.h): launch_program refuses (kUnsupported, one line)
// a launch whose blocks do not fit beside the other ranks' on the GPU; program_fit_blocks is the
// most blocks that do at `threads` (INT_MAX with one rank per GPU).
int program_fit_blocks(const AlgoInfo& algo, DType t, const DeviceHandle& h, int threads);
// plan_launch (host_logic.h) where `blocks` <= 0 in a team takes the registry default capped at
// program_fit_blocks (a device program only; kUnsupported naming both when the program cannot
// run on so few blocks). An explicit count is kept, and launch_program refuses it if it does not fit.
LaunchPlan plan_launch_resident(const AlgoInfo& a, DType t, std::size_t bytes, int world, int blocks, int threads,
                                const DeviceHandle& h);
// Loads every device program's kernel (cudaFuncGetAttributes) so that no launch in a team loads a
// module lazily while a peer's kernel spins (loading may synchronize the context).
void preload_programs();
// The same for the device programs host plans launch (plans.cu).
void preload_plan_programs();

// A host plan's flag waits as a kernel (PlanExec, where ranks of an in-process team share a GPU:
// plan_exec.h says why): n <= kPlanKernelWaits (slot, value) pairs of this rank's pad, one thread
// each, waits (ld.acquire.sys until the flag == value, as cuStreamWaitValue32 with
// CU_STREAM_WAIT_VALUE_EQ; bounded and reported as BlockCtx::wait: h.timeout_cycles, the rank's
// error record and poison), then, once every wait has passed, resets each flag to 0 (the batch's
// resets). One block of 32 threads, no shared memory.
inline constexpr int kPlanKernelWaits = 32;
struct PlanFlagWaits {
  int n = 0;
  uint32_t slot[kPlanKernelWaits] = {};
  uint32_t value[kPlanKernelWaits] = {};
};
void launch_plan_flag_waits(const DeviceHandle& h, const PlanFlagWaits& w, cudaStream_t s);

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
