// NVTX ranges (nvtx3, header-only) around each call of the CUDA backend, so `nsys profile`
// timelines show which collective, algorithm, type and size a stretch of GPU work belongs to.
// Costs a function-pointer test per range when no tool is attached; labels are built once per
// case by the caller, never per call.
#pragma once

#include <nvtx3/nvToolsExt.h>

namespace symm::cuda {

class NvtxRange {
 public:
  explicit NvtxRange(const char* label) { nvtxRangePushA(label); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace symm::cuda
