#include "backends/cuda/check.h"

#include "backends/cuda/driver_entry.h"

namespace symm::cuda {

void throw_call_failed(const char* call, const char* where, int code, const char* text) {
  fail(ErrorCode::kCuda,
       std::string(call) + " failed at " + where + ": code " + std::to_string(code) + " (" + (text ? text : "?") + ")");
}

void* driver_entry(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  SYMM_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q));
  if (!fn || q != cudaDriverEntryPointSuccess)
    fail(ErrorCode::kCuda, std::string("the CUDA driver has no ") + name + " (stream memory operations)");
  return fn;
}

void check_cu(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) fail(ErrorCode::kCuda, std::string(what) + " failed: CUresult " + std::to_string(int(r)));
}

}  // namespace symm::cuda
