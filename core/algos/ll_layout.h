// Scratch layout shared by the flagged-packet (LL) programs.
//
//   scratch = region[kMaxBlocks]        region b is written only by block b of every rank
//   region  = half[2]                   half e & 1 carries the call with epoch e
//   half    = slot[world]               slot r holds rank r's packets for this block
//   slot    = ll_bytes(kPieceBytes)     at most kPieceBytes of data per block and source
//
// Why per-block regions: epochs come from each block's own counter (advance), so a region
// only ever sees block b's epochs, which only grow; a stale packet can never carry the epoch
// being waited for, whatever block counts earlier calls used.
// Why two halves: a rank starts epoch e only after finishing e-1, which needed every peer's
// packets of e-1, which every peer sent after it had finished reading e-2, the last user of
// half e & 1. This holds only if every call exchanges packets with every peer on every block:
// LL programs therefore refuse block counts that would leave a block with nothing to send
// (AlgoInfo::ll_piece_bytes, check_args).
#pragma once

#include "core/signal_pad.h"
#include "core/verbs.h"

namespace symm {

struct LlLayout {
  static constexpr int kMaxBlocks = 64;
  static constexpr std::size_t kPieceBytes = 16 << 10;
  static constexpr int kCounter = 2;  // pad::counter(block, kCounter) gives the epochs

  SYMM_HD static constexpr std::size_t slot_bytes() { return ll_bytes(kPieceBytes); }
  SYMM_HD static constexpr std::size_t scratch_bytes(int world) {
    return std::size_t(kMaxBlocks) * 2 * std::size_t(world) * slot_bytes();
  }
  SYMM_HD static char* slot(void* scratch, int world, int block, uint32_t epoch, int from) {
    const std::size_t i = (std::size_t(block) * 2 + (epoch & 1)) * std::size_t(world) + std::size_t(from);
    return static_cast<char*>(scratch) + i * slot_bytes();
  }
};

}  // namespace symm
