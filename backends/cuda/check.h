// One way to fail for CUDA and NCCL calls: SYMM_CUDA_CHECK(call) throws
// symm::Error(kCuda, "<call> failed at file:line: <code> (<text>)"). Host code only.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "core/common.h"

namespace symm::cuda {

[[noreturn]] void throw_call_failed(const char* call, const char* where, int code, const char* text);

inline void check_call(cudaError_t e, const char* call, const char* where) {
  if (e != cudaSuccess) throw_call_failed(call, where, int(e), cudaGetErrorString(e));
}
inline void check_call(ncclResult_t e, const char* call, const char* where) {
  if (e != ncclSuccess && e != ncclInProgress) throw_call_failed(call, where, int(e), ncclGetErrorString(e));
}

}  // namespace symm::cuda

#define SYMM_CUDA_STR2(x) #x
#define SYMM_CUDA_STR(x) SYMM_CUDA_STR2(x)
// Works on cudaError_t and ncclResult_t alike: the overload picks the error text.
#define SYMM_CUDA_CHECK(call) ::symm::cuda::check_call((call), #call, __FILE__ ":" SYMM_CUDA_STR(__LINE__))
