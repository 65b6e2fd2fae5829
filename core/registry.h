// The algorithm registry: every collective by string id, with what it can and cannot do.
//
// Ids are "<op>.<phases>" after the file that holds the program (all_reduce.rs_ld_ag_st);
// the friendly names (two_shot) are aliases. The CLI, the tests and the result CSVs all go
// through this table, and check_args() is the one place the constraints are enforced.
// The table is built from the type list core/dispatch.h: each entry's Descriptor (id, alias,
// summary, multicast) and Config (block limits, per-block scratch) say everything below. The
// fused plans' table, fused_algorithms() (core/fused.h), is built here too, from FusedPlans.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common.h"
#include "core/descriptor.h"

namespace symm {

// Threads of a block: every device program's default at most, and a host plan's kernels' always.
inline constexpr int kDefaultBlockThreads = 512;

struct AlgoInfo {
  EntryKind kind = EntryKind::kDeviceProgram;
  bool plan = false;  // kind == kHostPlan: copy engines and stream flags (core/plan.h), with_plan
  int index = -1;     // position in core/dispatch.h's Algorithms (with_program)
  Op op;
  std::string id;       // "all_reduce.rs_ld_ag_st"
  std::string alias;    // "two_shot"
  std::string summary;  // one line for `symmcoll list`
  int min_world = 2;
  int max_world = kPadWorld;
  bool needs_multicast = false;
  int block_limit = kPadBlocks;            // Config::kBlockLimit: no call may use more (check_args)
  int default_block_cap = kPadBlocks;      // Config::kDefaultBlockCap: the default count stays under it
  std::size_t bytes_per_block = 64 << 10;  // Config::kBytesPerBlock: the default count aims at this
  // Programs on fixed per-block scratch regions (core/algos/block_regions.h): each block
  // carries at most this many bytes of one rank's data, and every block at least one vector.
  // 0: the program has no such regions.
  std::size_t piece_bytes = 0;
  // Blocks are dealt round-robin to peer offsets (block b serves offset b % world): needs
  // blocks >= world, and only blocks / world of them split one source's data.
  bool blocks_per_peer = false;
  // How many pieces one source's data is cut into with `blocks` blocks (the fewest, if the
  // offsets get different counts).
  int pieces_per_source(int blocks, int world) const { return blocks_per_peer ? blocks / world : blocks; }

  // Bytes of symmetric scratch the program needs for a call of `bytes` (nccl-tests size).
  std::size_t scratch_bytes(std::size_t bytes, int world) const;
  // The block count used when the caller does not choose one.
  int default_blocks(std::size_t bytes, int world) const;
  // Element count of CollArgs::count for a call of `bytes` (nccl-tests size).
  std::size_t count(std::size_t bytes, DType t, int world) const;
  // Bytes of each rank's `in` and `out` for a call of `bytes`.
  std::size_t in_bytes(std::size_t bytes, int world) const;
  std::size_t out_bytes(std::size_t bytes, int world) const;
  // Bytes each block count divides: the whole buffer for all_reduce, one rank's chunk for
  // reduce_scatter (its output) and all_gather (its input).
  std::size_t per_rank_bytes(std::size_t bytes, int world) const;
  // Threads a block runs when the caller does not choose (the CUDA backend's launch,
  // backends/cuda/host_logic.cpp plan_launch): a 16-byte vector of the block's largest piece per
  // thread, in whole warps, at most kDefaultBlockThreads. The simulator's verbs count their steps
  // by it (RunSpec::serial_tail).
  int default_threads(std::size_t bytes, int world, int blocks) const;
  // The largest call (nccl-tests size) check_args accepts at `world`: for programs on fixed
  // regions, piece_bytes x the most pieces. 0: no limit beyond the symmetric heap.
  std::size_t max_bytes_for(int world) const;
};

const std::vector<AlgoInfo>& algorithms();

// Look up by op and by id, alias or the id's suffix ("rs_ld_ag_st"). Throws kInvalidArgument
// listing the valid names for that op.
const AlgoInfo& find_algo(Op op, std::string_view name);
// Accepts "all_reduce.one_shot" style full names too.
const AlgoInfo& find_algo(std::string_view full_name);

// Throws kInvalidArgument / kUnsupported with one line that names the offending value, e.g.
// "bytes=1000 is not a multiple of 16 for bf16 all_reduce.ld_reduce".
void check_args(const AlgoInfo& a, DType t, std::size_t bytes, int world, int blocks, ReduceOp rop = ReduceOp::kSum);

// nccl-tests conventions: algbw = bytes / time; busbw = algbw * factor.
double bus_factor(Op op, int world);

}  // namespace symm
