// The calibration programs (core/calib_programs.h) as kernels, bf16 (only the byte count matters).
#include "apps/harness/cuda/calibrate.h"
#include "backends/cuda/check.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/program_kernel.cuh"
#include "backends/cuda/residency.h"
#include "core/calib_programs.h"

namespace symm::cuda {

namespace {
// Waits: the program waits for a peer, so in an in-process team every rank's blocks must be
// resident (residency.h); the bulk copies wait for no one.
template <class P, bool kWaits = false>
void go(const DeviceHandle& h, const CollArgs& a, int blocks, cudaStream_t s, const VerbTraceBuf& trace) {
  const void* k = trace.stamps ? reinterpret_cast<const void*>(&traced_program_kernel<P, bf16>)
                               : reinterpret_cast<const void*>(&program_kernel<P, bf16>);
  if (kWaits) check_residency(k, h, blocks, kDefaultThreads, "a calibration ping-pong");
  if (trace.stamps)
    traced_program_kernel<P, bf16><<<blocks, kDefaultThreads, 0, s>>>(h, a, trace);
  else
    program_kernel<P, bf16><<<blocks, kDefaultThreads, 0, s>>>(h, a);
}
// As the bench launches device programs: programmatic dependent launch (off where ranks share a
// GPU), every block resident (the program waits for peers).
template <class P>
void go_as_bench(const DeviceHandle& h, const CollArgs& a, int blocks, cudaStream_t s, const VerbTraceBuf& trace,
                 const char* what) {
  check_residency(reinterpret_cast<const void*>(&program_kernel<P, bf16>), h, blocks, kDefaultThreads, what);
  launch_program_kernel<P, bf16>(h, a, blocks, kDefaultThreads, s, /*pdl=*/h.gpu_ranks <= 1, trace);
}
}  // namespace

void launch_calib(CalibProgram p, const DeviceHandle& h, const CollArgs& a, int blocks, cudaStream_t s,
                  const VerbTraceBuf& trace) {
  using namespace calib;
  switch (p) {
    case CalibProgram::kEmpty: go<Empty>(h, a, blocks, s, trace); break;
    case CalibProgram::kEmptyPdl:
      launch_program_kernel<Empty, bf16>(h, a, blocks, kDefaultThreads, s, /*pdl=*/h.gpu_ranks <= 1, trace);
      break;
    case CalibProgram::kPingPongRelaxed: go<PingPongRelaxed, true>(h, a, blocks, s, trace); break;
    case CalibProgram::kPingPongAcqRel: go<PingPongAcqRel, true>(h, a, blocks, s, trace); break;
    case CalibProgram::kPingPongStore: go<PingPongStore, true>(h, a, blocks, s, trace); break;
    case CalibProgram::kPingPongRelaxedFlush: go<PingPongRelaxedFlush, true>(h, a, blocks, s, trace); break;
    case CalibProgram::kLoadChain: go<LoadChain, true>(h, a, blocks, s, trace); break;
    case CalibProgram::kLoadChainLines: go<LoadChainLines, true>(h, a, blocks, s, trace); break;
    case CalibProgram::kPeerCopyChain: go<PeerCopyChain, true>(h, a, blocks, s, trace); break;
    case CalibProgram::kPeerCopyChainAll: go<PeerCopyChainAll, true>(h, a, blocks, s, trace); break;
    case CalibProgram::kFenceChainLocal: go<FenceChainLocal>(h, a, blocks, s, trace); break;
    case CalibProgram::kFenceChainPeer: go<FenceChainPeer>(h, a, blocks, s, trace); break;
    case CalibProgram::kLoadChainPdl: go_as_bench<LoadChain>(h, a, blocks, s, trace, "a calibration load chain"); break;
    case CalibProgram::kExchangePdl: go_as_bench<Exchange>(h, a, blocks, s, trace, "a calibration exchange"); break;
    case CalibProgram::kAcquireChain: go<AcquireChain>(h, a, blocks, s, trace); break;
    case CalibProgram::kAcquirePeerFlags: go<AcquirePeerFlags, true>(h, a, blocks, s, trace); break;
    case CalibProgram::kLocalReduceChain: go<LocalReduceChain>(h, a, blocks, s, trace); break;
    case CalibProgram::kPeerReduceChain: go<PeerReduceChain, true>(h, a, blocks, s, trace); break;
    case CalibProgram::kLlUnpackChain: go<LlUnpackChain>(h, a, blocks, s, trace); break;
    case CalibProgram::kLlReduceChain: go<LlReduceChain>(h, a, blocks, s, trace); break;
    case CalibProgram::kBarrierRounds:
      go_as_bench<BarrierRoundsAcqRel>(h, a, blocks, s, trace, "a calibration barrier");
      break;
    case CalibProgram::kBarrierRoundsRelaxed:
      go_as_bench<BarrierRoundsRelaxed>(h, a, blocks, s, trace, "a calibration barrier");
      break;
    case CalibProgram::kBarrierLanding:
      go_as_bench<BarrierLandingAcqRel>(h, a, blocks, s, trace, "a calibration barrier");
      break;
    case CalibProgram::kBarrierLandingRelaxed:
      go_as_bench<BarrierLandingRelaxed>(h, a, blocks, s, trace, "a calibration barrier");
      break;
    case CalibProgram::kCopyLocal: go<BulkCopy<Pattern::kLocal>>(h, a, blocks, s, trace); break;
    case CalibProgram::kCopyPeer: go<BulkCopy<Pattern::kPeer>>(h, a, blocks, s, trace); break;
    case CalibProgram::kCopyScatter: go<BulkCopy<Pattern::kScatter>>(h, a, blocks, s, trace); break;
    case CalibProgram::kCopyIncast: go<BulkCopy<Pattern::kIncast>>(h, a, blocks, s, trace); break;
    case CalibProgram::kReducePeers: go<ReducePeers>(h, a, blocks, s, trace); break;
  }
  SYMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symm::cuda
