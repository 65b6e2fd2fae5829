// The residency check of an in-process team (team.h) on the device: every rank that shares a GPU
// launches its blocks of a program, and a block's waits end only when its peers' blocks run, so
// all ranks' blocks must be resident at once. The occupancy API says how many blocks of a kernel
// fit on an SM at a thread count; team.h does the arithmetic (CPU-tested).
#pragma once

#include <string>

#include "backends/cuda/device_handle.h"

namespace symm::cuda {

// Blocks of `kernel` one rank may launch at `threads` so that the team's most ranks per GPU
// (h.team_gpu_ranks) fit on the current device together: the same on every
// rank of the team (no limit, INT_MAX, when every rank has its GPU to itself).
int team_fit_blocks(const void* kernel, const DeviceHandle& h, int threads);
void check_residency_slow(const void* kernel, const DeviceHandle& h, int blocks, int threads, const char* what);
// Throws kUnsupported with residency_refusal's line (prefixed with the rank) when h.gpu_ranks x
// blocks do not fit. Nothing to do (one compare) with one rank per GPU.
inline void check_residency(const void* kernel, const DeviceHandle& h, int blocks, int threads, const char* what) {
  if (h.gpu_ranks > 1) check_residency_slow(kernel, h, blocks, threads, what);
}

}  // namespace symm::cuda
