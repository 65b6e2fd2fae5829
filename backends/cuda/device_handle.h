// What a kernel needs to reach the symmetric heap and the signal pads: a trivially
// copyable handle built by the host Runtime and passed by value as a kernel
// parameter. The peer tables live in the parameter (constant bank) rather than in global
// memory so that the first peer() of a launch costs no dependent global load.
#pragma once

#include <cstdint>

#include "core/common.h"

namespace symm::cuda {

// The most ranks this backend runs: the GPUs of one NVSwitch node. The programs' per-rank
// arrays and the peer tables below are sized by it (BlockCtx::kWorldLimit), which keeps them
// small; the simulator alone scales to symm::kPadWorld.
inline constexpr int kNodeWorld = 8;

// The first wait that timed out on this rank, written by the kernel into mapped pinned host
// memory, which the host polls while it waits for the stream (Runtime::sync, watchdog.h).
struct WaitError {
  uint32_t tripped;  // 0 until a wait expires; set with atomicCAS so the first report wins
  int32_t rank;
  int32_t block;
  uint32_t slot;  // kFlag: the signal-pad slot; kPackets: unused (0)
  uint32_t expected;
  uint32_t seen;
  uint32_t kind = 0;              // kFlag (wait) or kPackets (reduce_ll)
  uint32_t packet = 0;            // kPackets: index of the 8-byte packet within its buffer
  unsigned long long offset = 0;  // kPackets: byte offset of the packet buffer in the symmetric heap
  uint32_t complete = 0;          // set (after a system fence) once the fields above are written
  static constexpr uint32_t kFlag = 0, kPackets = 1;
};

struct DeviceHandle {
  int rank = 0;
  int world = 0;
  char* heap_base = nullptr;            // this rank's symmetric heap (data window)
  char* heap_peer[kNodeWorld] = {};     // every rank's heap base in this process's address space
  std::size_t heap_bytes = 0;           // each heap's size (the same on every rank)
  uint32_t* pad_peer[kNodeWorld] = {};  // every rank's signal pad
  uint32_t* pad_local = nullptr;        // == pad_peer[rank]
  unsigned long long timeout_cycles = 0;
  WaitError* error = nullptr;  // mapped pinned host memory
  // Device memory, 0 until a wait of this rank expires; then every later wait (of this and
  // every later kernel) returns at once, so a failed call drains in microseconds instead of
  // spinning out each wait's bound. Read only when a wait's first look fails (no cost to a
  // wait that is already satisfied); cleared by the host only after it has read the report.
  uint32_t* poison = nullptr;
  // Host side only: how many ranks of this rank's team share its GPU (an in-process team, team.h;
  // 1 with one process per GPU). Above 1, every launch first checks that all of their blocks fit
  // on the GPU at once (residency_refusal), since a rank's waits end only when its peers run.
  int gpu_ranks = 1;
  // Host side only: the most ranks any GPU of the team holds (team_max_ranks_per_gpu). Choices that
  // every rank must make alike (default block counts, cases skipped) use it: with 3 ranks over 2
  // GPUs, the rank alone on its GPU would otherwise pick more blocks, or run a case, that its
  // peers do not, and its waits on them would never end.
  int team_gpu_ranks = 1;
};

}  // namespace symm::cuda
