// Bounded waits on CUDA, the device half of "no hang, ever" (the host half: watchdog.h): every
// wait of a verb (a flag, block_ctx.cuh; packets, ll_packets.cuh) gives up after
// h.timeout_cycles, records the first expiry in h.error (mapped pinned memory the host polls)
// and poisons the rank (h.poison); a wait whose first look fails reads the poison word, and again
// every kPoisonEvery polls, and returns at once if it is set. A failed call thus drains in
// microseconds, and an already satisfied wait pays nothing for the check.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/device_handle.h"

namespace symm::cuda::detail {

// Polls between two looks at the poison word inside a spin loop (a power of two).
inline constexpr uint32_t kPoisonEvery = 64;

// Has a wait of this rank expired? Device memory, written once by the first expiry.
__device__ __forceinline__ bool poisoned(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v != 0;
}

// The first expiry of the rank poisons it (every later wait returns at once) and fills the
// record; later expiries (other threads or blocks racing it) change neither. kind: WaitError::kFlag
// (slot) or kPackets (packet of the packet buffer at `buf` in this rank's heap; slot 0).
__device__ inline void report_wait_timeout(const DeviceHandle& h, uint32_t kind, uint32_t slot, uint32_t expected,
                                           uint32_t seen, uint32_t packet, const void* buf) {
  atomicExch(h.poison, 1u);
  WaitError* e = h.error;
  if (atomicCAS_system(&e->tripped, 0u, 1u) == 0u) {
    e->rank = h.rank;
    e->block = int(blockIdx.x);
    e->slot = slot;
    e->expected = expected;
    e->seen = seen;
    e->kind = kind;
    if (kind == WaitError::kPackets) {  // a flag's record leaves them as cleared (0)
      e->packet = packet;
      e->offset = static_cast<unsigned long long>(static_cast<const char*>(buf) - h.heap_base);
    }
    __threadfence_system();  // the fields before `complete`: the host reads them after it
    *reinterpret_cast<volatile uint32_t*>(&e->complete) = 1u;
  }
}

// A flag wait (BlockCtx::wait) on pad slot `slot` expired having seen `seen` < `expected`.
__device__ inline void report_flag_timeout(const DeviceHandle& h, uint32_t slot, uint32_t expected, uint32_t seen) {
  report_wait_timeout(h, WaitError::kFlag, slot, expected, seen, 0, nullptr);
}

// One thread's bounded acquire on this rank's pad slot `slot` (BlockCtx::wait(slot, value,
// kAcquire)'s spin, with its poison checks and its report on expiry): until the flag is >= value,
// or == value with kExact (as cuStreamWaitValue32's CU_STREAM_WAIT_VALUE_EQ: a host plan's waits
// in a kernel, launch_plan_flag_waits).
template <bool kExact = false>
__device__ void acquire_flag(const DeviceHandle& h, uint32_t slot, uint32_t value) {
  const uint32_t* f = h.pad_local + slot;
  const long long t0 = clock64();
  uint32_t v;
  for (uint32_t polls = 0;; ++polls) {
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
    if (kExact ? v == value : v >= value) return;
    if ((polls & (kPoisonEvery - 1)) == 0 && poisoned(h.poison)) return;
    if (static_cast<unsigned long long>(clock64() - t0) > h.timeout_cycles) {
      report_flag_timeout(h, slot, value, v);
      return;
    }
  }
}

// A packet wait (reduce_ll) expired: packet `packet` of the buffer at `buf` (in this rank's heap)
// held epoch `seen`, not `expected`.
__device__ inline void report_packet_timeout(const DeviceHandle& h, const void* buf, std::size_t packet,
                                             uint32_t expected, uint32_t seen) {
  report_wait_timeout(h, WaitError::kPackets, 0, expected, seen, uint32_t(packet), buf);
}

}  // namespace symm::cuda::detail
