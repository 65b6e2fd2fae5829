// Matmul fused with communication: the two operations, their shapes and their plans' arguments.
//
//   ag_mm   A is sharded by rows (each rank holds M/world x K), B (K x N) is replicated:
//           C = all_gather(A) @ B, M x N on every rank.
//   mm_rs   A (M x K/world) and B (K/world x N) are sharded along K:
//           C = reduce_scatter(A @ B), each rank keeps its M/world rows (M/world x N).
//
// Every matrix is row-major and dense (leading dimension = its column count). (M, N, K) are the
// global sizes of the product, the same on every rank. Llama-3 tensor-parallel shapes have
// names: 8b (N 1792, K 4096) and 70b (N 3584, K 8192).
//
// The fused algorithms are host plans in core/algos/ag_mm_*.h and mm_rs_*.h, each with its
// Descriptor (kind kFusedPlan), listed once in core/dispatch.h (FusedPlans), which both backends
// dispatch through (with_fused_plan); fused_algorithms() below is the registry's table of them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/common.h"

namespace symm {

const char* fused_op_name(FusedOp op);
bool is_fused_op(const std::string& s);
FusedOp parse_fused_op(const std::string& s);  // throws kInvalidArgument naming the value

struct MatShape {
  std::size_t m = 0, n = 0, k = 0;
  std::string name;  // "8b", "70b", or "" for a custom shape
};

// "8b" / "70b" (case-insensitive): N and K of that model's tensor-parallel matmul (m = 0).
// Throws kInvalidArgument listing the names.
MatShape named_shape(const std::string& name);

// Largest dimension and largest matrix a run may ask for (bad input beyond, not a crash).
inline constexpr std::size_t kMaxMatDim = std::size_t(1) << 20;
inline constexpr std::size_t kMaxMatBytes = std::size_t(16) << 30;

// The one check of a fused shape on `world` ranks, before any buffer exists: every dimension
// non-zero and at most kMaxMatDim, M divisible by world, (mm_rs) K divisible by world, rows of
// every matrix whole 16-byte vectors (N and the per-rank K multiples of 8 elements: copy
// engines and cuBLASLt move 16-byte vectors), no matrix above kMaxMatBytes. Throws
// kInvalidArgument with one line naming the option (--m, --n, --k, or the world).
void validate_fused(FusedOp op, const MatShape& s, int world, DType t);

// Per-rank buffer sizes (bytes) of one call. ag_mm: a = M/w x K (the shard), b = K x N,
// c = M x N, gathered = M x K (the all-gathered A, symmetric). mm_rs: a = M x K/w,
// b = K/w x N, c = M/w x N, partial = M x N (this rank's A @ B, local), scratch = world slots
// of M/w x N (what peers send, symmetric).
struct FusedBuffers {
  std::size_t a = 0, b = 0, c = 0, gathered = 0, partial = 0, scratch = 0;
};
FusedBuffers fused_buffers(FusedOp op, const MatShape& s, int world, DType t);

// Where one call's buffers lie, as byte offsets, every piece `align`-aligned. Two layouts, the
// only two there are:
//  - fused_heap_layout: everything in one heap (the simulator, the tests' interpreter): a, b, c,
//    work (ag_mm's gathered A or mm_rs's scratch slots), partial, then `coll_scratch` bytes for a
//    collective program (the simulator's seq_coll_gemm baseline); total is the heap a rank needs.
//  - fused_symmetric_layout: only what peers must reach, in the symmetric heap (the CUDA bench;
//    the rest is plain device memory): ag_mm's shard `a` then `work`; mm_rs's `work` alone
//    (a = b = c = partial = 0, unused).
struct FusedHeapLayout {
  std::size_t a = 0, b = 0, c = 0, work = 0, partial = 0, coll_scratch = 0, total = 0;
};
FusedHeapLayout fused_heap_layout(FusedOp op, const FusedBuffers& fb, std::size_t coll_scratch = 0,
                                  std::size_t align = 256);
FusedHeapLayout fused_symmetric_layout(FusedOp op, const FusedBuffers& fb, std::size_t align = 4096);

// What a fused plan gets for one call (this rank's addresses; see fused_buffers for sizes).
// `work` is the symmetric buffer the plan communicates through: ag_mm's gathered A, mm_rs's
// scratch slots. `partial` (mm_rs) is where this rank's product rows are staged (local).
struct FusedArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  void* work = nullptr;
  void* partial = nullptr;
  std::size_t m = 0, n = 0, k = 0;  // global sizes
  DType dtype = DType::kBF16;
  std::size_t chunk_rows = 0;    // rows per progress flag / per GEMM (0: the plan's default)
  int blocks = 0;                // blocks of the plan's kernels (0: default)
  void* coll_scratch = nullptr;  // symmetric scratch of a collective program (the simulator's
                                 // seq_coll_gemm baseline, fused_baselines()); unused by the plans
  int sms = 0;                   // SMs of this rank's GPU: the persistent tile programs' blocks
                                 // (0: kResidentBlocks, an H100's / H200's 132): sms_per_rank
};

// FusedArgs::sms for a rank whose GPU's `sms` SMs `ranks` ranks share (an in-process team): an
// equal share, less 2 that leave room for the other ranks' kernels, so that every rank's
// persistent tile program is resident at once; a rank alone on its GPU holds them all. The same
// on every rank (the tile programs' flags name a tile's block by the block count).
constexpr int sms_per_rank(int sms, int ranks) {
  if (ranks <= 1) return sms;
  const int per = sms / ranks - 2;
  return per > 0 ? per : 1;
}

// A fused algorithm of the registry: id ("op.name"), alias, op, summary (from its plan's
// Descriptor), and where with_fused_plan (core/dispatch.h) finds the plan.
struct FusedAlgo {
  const char* id;
  const char* alias;
  FusedOp op;
  const char* summary;
  int index = -1;                       // position in core/dispatch.h's FusedPlans; -1: a baseline, not a plan
  bool kernel_spins_on_copies = false;  // Descriptor::kernel_spins_on_copies
};
// Every fused plan, in FusedPlans order (core/dispatch.h); built by the registry
// (core/registry.cpp) from the plans' Descriptors.
const std::vector<FusedAlgo>& fused_algorithms();
// The baselines every fused algorithm is compared with, one pair per op, named as the CUDA bench
// names its rows where both run the same thing (apps/harness/cuda/bench_fused.cpp):
//   cublaslt        the matmul alone, no communication: ag_mm M x N x K (A already gathered),
//                   mm_rs M x N x K/world (this rank's partial product, not reduced); the lower bound
//   seq_coll_gemm   (simulator) the collective, then the matmul, one after the other: our SM
//                   all-gather / reduce-scatter program (the one `--algo auto` runs without a
//                   table, auto_rule) stands where the CUDA bench's nccl_cublaslt has NCCL's
//   tile_gemm       (simulator) the matmul alone as the tile GEMM device program
//                   (core/algos/tile_gemm.h): the device-program variants' own lower bound
// They are not in fused_algorithms(): `--algo all` never names them; sweeps add them beside.
const std::vector<FusedAlgo>& fused_baselines();
// The baseline of `op` called `name` ("cublaslt", "seq_coll_gemm"), or nullptr.
const FusedAlgo* find_fused_baseline(FusedOp op, const std::string& name);

// "ag_mm: ce, ce_bulk, st; mm_rs: ce, ce_acc, st": every fused plan's alias by op, from
// fused_algorithms() (the help texts of both backends).
std::string fused_alias_list();

// "all", ids, suffixes or aliases of `op`'s algorithms, comma separated; unknown names throw
// kInvalidArgument listing the valid ones.
std::vector<const FusedAlgo*> parse_fused_algos(FusedOp op, const std::string& spec);

// Rows per chunk for a plan: `want` rows (0: `dflt`), at least 1, at most rows, and at most
// `max_chunks` chunks per rank's rows.
std::size_t chunk_rows_for(std::size_t rows, std::size_t want, std::size_t dflt, int max_chunks);

}  // namespace symm
