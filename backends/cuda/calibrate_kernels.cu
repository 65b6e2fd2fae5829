// The calibration programs (core/calib_programs.h) as kernels, bf16 (only the byte count matters).
#include "backends/cuda/calibrate.h"
#include "backends/cuda/check.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/program_kernel.cuh"
#include "core/calib_programs.h"

namespace symm::cuda {

namespace {
template <class P>
void go(const DeviceHandle& h, const CollArgs& a, int blocks, cudaStream_t s) {
  program_kernel<P, bf16><<<blocks, kDefaultThreads, 0, s>>>(h, a);
}
}  // namespace

void launch_calib(CalibProgram p, const DeviceHandle& h, const CollArgs& a, int blocks, cudaStream_t s) {
  using namespace calib;
  switch (p) {
    case CalibProgram::kEmpty: go<Empty>(h, a, blocks, s); break;
    case CalibProgram::kPingPongRelaxed: go<PingPongRelaxed>(h, a, blocks, s); break;
    case CalibProgram::kPingPongAcqRel: go<PingPongAcqRel>(h, a, blocks, s); break;
    case CalibProgram::kPingPongStore: go<PingPongStore>(h, a, blocks, s); break;
    case CalibProgram::kLoadChain: go<LoadChain>(h, a, blocks, s); break;
    case CalibProgram::kCopyLocal: go<BulkCopy<Pattern::kLocal>>(h, a, blocks, s); break;
    case CalibProgram::kCopyPeer: go<BulkCopy<Pattern::kPeer>>(h, a, blocks, s); break;
    case CalibProgram::kCopyScatter: go<BulkCopy<Pattern::kScatter>>(h, a, blocks, s); break;
    case CalibProgram::kCopyIncast: go<BulkCopy<Pattern::kIncast>>(h, a, blocks, s); break;
  }
  SYMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symm::cuda
