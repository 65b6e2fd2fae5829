// Fixed per-block, double-buffered scratch: the layout of the programs that skip the end
// barrier (the flagged-packet programs and all_reduce.st_reduce).
//
//   scratch = region[kRegions]          region b is written only by block b of every rank
//   region  = half[2]                   half e & 1 carries the call in which block b's epoch is e
//   half    = slot[world]               slot r holds what rank r sent to this block
//   slot    = kSlotBytes                the most one block receives from one source
//
// The offsets depend on neither the message size nor the block count, so any sequence of
// calls of any sizes and block counts reuses the same bytes the same way.
//
// Why per-block regions: epochs come from each block's own counter (advance), so a region only
// ever sees block b's epochs, which only grow; whatever earlier calls did, a stale value in a
// region carries an older epoch than the one in use.
//
// Why two halves are enough: calls of one program run as whole kernels in stream order, so a
// rank starts a call only after every block of its previous call has finished. Suppose rank P
// writes half h of rank Q's region b at epoch e. The last use of half h was epoch e-2. P
// finished the call in which block b had epoch e-1, and in that call P received something from
// Q (a flag or packets, on some block), which Q sent during its own call with epoch e-1 on
// block b, so after Q's call with epoch e-2 (and its reads of half h) had finished. This needs
// every call to receive from every peer: LL programs refuse block counts that would leave a
// block with nothing to send (AlgoInfo::piece_bytes, check_args), and no program here shares a
// kernel with another (no persistent or fused kernels over these regions).
#pragma once

#include "core/common.h"

namespace symm {

struct BlockRegions {
  static constexpr int kRegions = 64;  // one per block: the block limit of these programs
  static constexpr std::size_t kSlotBytes = 32 << 10;

  SYMM_HD static constexpr std::size_t scratch_bytes(int world) {
    return std::size_t(kRegions) * 2 * std::size_t(world) * kSlotBytes;
  }
  SYMM_HD static char* slot(void* scratch, int world, int block, uint32_t epoch, int from) {
    const std::size_t i = (std::size_t(block) * 2 + (epoch & 1)) * std::size_t(world) + std::size_t(from);
    return static_cast<char*>(scratch) + i * kSlotBytes;
  }
};

}  // namespace symm
