// A CUDA driver function by name, through the runtime (no link to libcuda): the stream memory
// operations the host plans' flags use (plan_exec.cpp) and calibrate's host_* rows probe.
#pragma once

#include <cuda.h>

namespace symm::cuda {

// The function's CUDA 12.0 version, e.g. driver_entry("cuStreamWriteValue32"); an error says the
// driver lacks it.
void* driver_entry(const char* name);

// The stream memory operations' signatures (cuStreamWriteValue32 and cuStreamWaitValue32 share one).
using StreamValueFn = CUresult(CUDAAPI*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using StreamBatchFn = CUresult(CUDAAPI*)(CUstream, unsigned int, CUstreamBatchMemOpParams*, unsigned int);

// Throws kCuda "<what> failed: CUresult <r>" unless r is CUDA_SUCCESS.
void check_cu(CUresult r, const char* what);

}  // namespace symm::cuda
