// The signal pad: one array of 32-bit flags per rank, in its own symmetric window.
//
// Layout (flag index = "slot"):
//
//   [0, kFlagSlots)            flags[kChannels][kPadBlocks][kPadWorld]
//                              flags[c][b][r] on rank R is written by rank r's block b
//                              (signal) and read by rank R's block b (wait). Values are
//                              epochs that only grow: no one ever resets a flag, so a
//                              captured CUDA graph replays with no host-side work.
//   [kFlagSlots, kPlanBase)    counters[kPadBlocks][kCounters]
//                              counters[b][k] on rank R is written and read only by rank R's
//                              block b (advance()); it is the call counter epochs come from.
//   [kPlanBase, kPadSlots)     plan_flags[kPlanChannels][kPlanChunks][kPadWorld]
//                              host plans' stream flags (core/plan.h): plan_flags[c][k][r] on
//                              rank R is written by rank r's stream (write_flag) and consumed
//                              (waited for, then reset to 0) by rank R's stream (wait_flag).
//                              Unlike the epochs above they go back to 0 after every use, which
//                              is what keeps a captured graph of stream writes replayable.
//
// Both backends zero the pad once at start-up and never again.
#pragma once

#include <string>

#include "core/common.h"

namespace symm::pad {

inline constexpr int kChannels = 4;  // independent flag sets (0: barriers, 1..: data-ready)
inline constexpr int kCounters = 6;  // per-block counters (0: barrier epochs; each user names its own)
inline constexpr uint32_t kFlagSlots = uint32_t(kChannels) * kPadBlocks * kPadWorld;
inline constexpr uint32_t kPlanBase = kFlagSlots + uint32_t(kPadBlocks) * kCounters;
inline constexpr int kPlanChannels = 4;  // 0: entry handshake, 1..: data-ready per chunk
inline constexpr int kPlanReady = 0, kPlanData = 1, kPlanData2 = 2;
inline constexpr int kPlanChunks = 64;  // progress flags per (channel, source rank)
inline constexpr uint32_t kPadSlots = kPlanBase + uint32_t(kPlanChannels) * kPlanChunks * kPadWorld;
inline constexpr std::size_t kPadBytes = std::size_t(kPadSlots) * sizeof(uint32_t);
// Each rank's pad starts on its own 128-byte line group (vLLM's Signal is alignas(128)).
inline constexpr std::size_t kPadAlign = 128;
static_assert(kPadBytes % kPadAlign == 0, "pad must tile whole 128-byte lines");

// Flag written by `from_rank`'s block `block` into the owner's pad, channel `channel`.
SYMM_HD constexpr uint32_t flag(int channel, int block, int from_rank) {
  return (uint32_t(channel) * kPadBlocks + uint32_t(block)) * kPadWorld + uint32_t(from_rank);
}
// Block-private counter k of `block`.
SYMM_HD constexpr uint32_t counter(int block, int k = 0) {
  return kFlagSlots + uint32_t(block) * kCounters + uint32_t(k);
}

// Plan flag of `channel`, chunk `chunk`, written by `from_rank` into the owner's pad.
SYMM_HD constexpr uint32_t plan_flag(int channel, int chunk, int from_rank) {
  return kPlanBase + (uint32_t(channel) * kPlanChunks + uint32_t(chunk)) * kPadWorld + uint32_t(from_rank);
}
SYMM_HD constexpr bool is_plan_flag(uint32_t slot) { return slot >= kPlanBase && slot < kPadSlots; }
// The rank a flag slot names as its writer (flag's or plan_flag's from_rank), or -1 (a counter).
SYMM_HD constexpr int from_of(uint32_t slot) {
  return slot < kFlagSlots    ? int(slot % uint32_t(kPadWorld))
         : is_plan_flag(slot) ? int((slot - kPlanBase) % uint32_t(kPadWorld))
                              : -1;
}

#if !defined(__CUDA_ARCH__)
// "plan slot 41603 (channel 0, chunk 0, from rank 3)": how both backends name a plan flag in an
// error (the watchdog's stuck stream wait on CUDA, a deadlock in the simulator).
inline std::string describe_plan_slot(uint32_t slot) {
  const uint32_t rel = slot - kPlanBase;
  return "plan slot " + std::to_string(slot) + " (channel " + std::to_string(rel / kPadWorld / kPlanChunks) +
         ", chunk " + std::to_string((rel / kPadWorld) % kPlanChunks) + ", from rank " +
         std::to_string(rel % kPadWorld) + ")";
}
#endif

}  // namespace symm::pad
