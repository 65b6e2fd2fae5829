// symmcoll calibrate --backend cuda: the calibration microbenchmarks on this host's GPUs (the
// programs of core/calib_programs.h, copy engines, cuBLASLt GEMMs), one process per GPU through
// `symmcoll launch`, or N ranks in this process (--world N). Rows in apps/harness/sim/calib.h's CSV
// (bench,world,blocks,graph,x,time_us), written by rank 0; `symmcoll fit` turns them into a machine file.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "backends/cuda/device_handle.h"
#include "backends/cuda/verb_trace.h"
#include "core/coll_args.h"

namespace symm::cuda {

// The device programs calibrate runs (calibrate_kernels.cu).
enum class CalibProgram {
  kEmpty,
  kEmptyPdl,  // the same, launched as the bench launches device programs (programmatic dependent launch)
  kPingPongRelaxed,
  kPingPongAcqRel,
  kPingPongStore,
  kPingPongRelaxedFlush,  // the relaxed ping-pong with a local 16-byte copy after each signal (data only)
  kPeerCopyChain,         // rank 0's 4 KiB copies from its peers in turn, one after another (data only)
  kPeerCopyChainAll,      // the same on every rank at once (data only)
  kFenceChainLocal,       // rank 0's 16-byte copies into its own memory, each published by a release (data only)
  kFenceChainPeer,        // the same into rank 1's memory (data only)
  kLoadChain,
  kLoadChainPdl,           // the same, launched as the bench launches device programs (programmatic dependent launch)
  kLoadChainLines,         // the same, a line apart: every load a round trip over the link
  kExchangePdl,            // every rank signals every peer and waits for them, launched as the bench launches programs
  kAcquireChain,           // acquires of a flag already set, one after another (every rank, one block)
  kAcquirePeerFlags,       // acquires of flags a peer set, one after another (ranks 0 and 1, one block)
  kLocalReduceChain,       // reduces of one local vector, one after another (every rank, one block)
  kPeerReduceChain,        // the same over lines a peer just stored (ranks 0 and 1, one block)
  kLlUnpackChain,          // flagged packets a block put into its own memory, unpacked again and again
  kLlReduceChain,          // the same, reduced with a plain source (every rank, one block)
  kBarrierRounds,          // rounds of the collectives' acquire / release barrier, every block of every rank
  kBarrierRoundsRelaxed,   // the same, relaxed (no fence, no acquire)
  kBarrierLanding,         // rounds of the collectives' barrier itself (waits in the order flags land), one block
  kBarrierLandingRelaxed,  // the same, relaxed
  kCopyLocal,
  kCopyPeer,
  kCopyScatter,
  kCopyIncast,
  kReducePeers,  // rank 0's blocks reduce every rank's `in` into its own `out` (block_reduce_GBps)
};
// With a stamp buffer in `trace` (calibrate --trace), the program's traced kernel (verb_trace.h).
void launch_calib(CalibProgram p, const DeviceHandle& h, const CollArgs& a, int blocks, cudaStream_t s,
                  const VerbTraceBuf& trace = {});

// Runs every microbenchmark and writes `csv` (rank 0); `command` is recorded as its first
// comment. team_world > 0: an in-process team of that many ranks (team.h; one GPU is enough, and
// the rows that need a peer get one), else the launcher's ranks. trace_dir non-empty: after the
// rows, the ping-pongs and chains at 16 rounds traced verb by verb (trace_calls calls each, graph;
// a team: eager) into trace_dir/calibrate.<row>.bf16.n16.<graph|eager>.json. `only` non-empty:
// just those rows (calib::CalibPlan::only). Returns the process exit code.
int calibrate_main(const std::string& csv, const std::string& command, int team_world = 0,
                   const std::string& trace_dir = {}, int trace_calls = 10, const std::vector<std::string>& only = {});

}  // namespace symm::cuda
