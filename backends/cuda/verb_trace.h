// A device program's verbs timed inside its kernel on the GPU (`symmcoll bench --backend cuda
// --trace DIR` of a device program): the measured counterpart of the simulator's block tracks.
//
// A traced call launches each program's traced instantiation (traced_program_kernel, with a stamp
// buffer, VerbTraceBuf), whose every block stamps the
// moment it enters each verb (BlockCtx::stamp, block_ctx.cuh): a __syncthreads, then thread 0
// reads its multiprocessor's cycle counter (clock64) and the GPU's global timer (%globaltimer)
// and writes them with the verb's id. A verb's span is from its stamp to the next one (the last
// to the block's end), so a span is how long the block took to get through the verb: a copy's or
// a reduce's loads and the issue of its stores (stores are posted: their landing shows in the
// release that follows), a release's fence and flag store, a wait's spinning. The simulator's
// slices of the same names mean the same (backends/sim/transfers.cpp: a block transfer's slice
// ends when the block may go on).
//
// What tracing costs: a __syncthreads and a 24-byte store per verb (so a traced call is a little
// slower than a timed one, and consecutive waits, which share one barrier untraced, get one
// each). Untraced kernels (trace == nullptr) take one uniform branch per verb.
//
// Clocks: within a block, spans come from clock64 (one SM's cycles, converted with the SM clock
// measured right after the traced calls: verb_trace_probe, launched by trace_out.cpp); blocks are
// placed against each other by %globaltimer, which ticks coarsely (verb_spans in
// apps/harness/cuda/trace_parts.h averages it over a block's stamps).
#pragma once

#include <cstdint>

namespace symm::cuda {

enum class VerbId : uint32_t {
  kNone = 0,  // an unwritten stamp (the host zeroes the buffer)
  kStart,     // the block starts its program (after a programmatic launch's wait)
  kAdvance,
  kCopy,    // arg: bytes | remote sources << kStampRemoteShift
  kReduce,  // arg: the same
  kMultimemReduce,
  kPutLl,
  kReduceLl,
  kMmaTile,
  kSignal,         // arg: the peer
  kSignalRelease,  // arg: the peer, + kFenced when this release fenced (it had something to publish)
  kWait,           // arg: the slot
  kWaitAcquire,    // arg: the slot
  kEnd,            // the block's end; arg: how many stamps it made (more than the buffer holds: some lost)
  kCount
};

inline constexpr uint32_t kFenced = 1u << 16;
// A copy's or reduce's arg: its bytes (saturated at kStampBytesMax) and, from bit
// kStampRemoteShift, how many of its sources are in a peer's memory.
inline constexpr uint32_t kStampRemoteShift = 24, kStampBytesMax = (1u << kStampRemoteShift) - 1;

// One stamp: 24 bytes, written by thread 0 of the block.
struct VerbStamp {
  unsigned long long clk;  // clock64(): the SM's cycle counter
  unsigned long long gt;   // %globaltimer, ns
  uint32_t verb;           // a VerbId
  uint32_t arg;
};
static_assert(sizeof(VerbStamp) == 24);

// Where a traced kernel stamps (an argument of the traced kernel only: the untraced kernels keep
// their parameters and code exactly as without tracing): block b at stamps[b * cap ...].
struct VerbTraceBuf {
  VerbStamp* stamps = nullptr;
  uint32_t cap = 0;
};

// Stamps per block per call. A block that makes more keeps its first kVerbStampsPerBlock - 1 and
// its end in the last slot (the end's arg tells the host how many were lost).
inline constexpr uint32_t kVerbStampsPerBlock = 64;

// The simulator's slice name of each verb (backends/sim: verbs.cpp, transfers.cpp, packets.cpp,
// tiles.cpp); start and end are not spans.
inline const char* verb_name(VerbId v) {
  switch (v) {
    case VerbId::kStart: return "start";
    case VerbId::kAdvance: return "advance";
    case VerbId::kCopy: return "copy";
    case VerbId::kReduce: return "reduce";
    case VerbId::kMultimemReduce: return "multimem_reduce";
    case VerbId::kPutLl: return "put_ll";
    case VerbId::kReduceLl: return "reduce_ll";
    case VerbId::kMmaTile: return "mma_tile";
    case VerbId::kSignal: return "signal";
    case VerbId::kSignalRelease: return "signal.release";
    case VerbId::kWait: return "wait";
    case VerbId::kWaitAcquire: return "wait.acquire";
    case VerbId::kEnd: return "end";
    default: return "?";
  }
}

}  // namespace symm::cuda
