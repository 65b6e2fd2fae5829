#include "core/registry.h"

#include <algorithm>

#include "core/dispatch.h"

namespace symm {
namespace {

template <class P>
void set_config(AlgoInfo& a) {
  a.max_blocks = P::Config::kMaxBlocks;
  a.default_max_blocks = P::Config::kDefaultMaxBlocks;
  a.bytes_per_block = P::Config::kBytesPerBlock;
  if constexpr (requires { P::Config::kPieceBytes; }) a.piece_bytes = P::Config::kPieceBytes;
  if constexpr (requires { P::Config::kBlocksPerPeer; }) a.blocks_per_peer = P::Config::kBlocksPerPeer;
}

std::vector<AlgoInfo> build() {
  std::vector<AlgoInfo> v;
  v.reserve(32);  // add() hands out pointers into v
  auto add = [&](AlgoKind k, Op op, const char* phases, const char* alias, const char* summary) {
    AlgoInfo a;
    a.kind = k;
    a.op = op;
    a.id = std::string(op_name(op)) + "." + phases;
    a.alias = alias;
    a.summary = summary;
    with_program(k, [&]<class P>() {
      if constexpr (requires { P::Config::kMaxBlocks; })
        set_config<P>(a);
      else
        a.max_blocks = a.default_max_blocks = kSymmMaxBlocks;  // barriers: every block resident
    });
    v.push_back(a);
    return &v.back();
  };
  add(AlgoKind::kBarrierAcqRel, Op::kBarrier, "signal_wait", "acq_rel",
      "blockwise barrier on signal pads, release signals / acquire waits");
  add(AlgoKind::kBarrierRelaxed, Op::kBarrier, "signal_wait_relaxed", "relaxed",
      "blockwise barrier on signal pads, relaxed (orders execution only)");
  add(AlgoKind::kAllReduceLdReduce, Op::kAllReduce, "ld_reduce", "one_shot",
      "barrier; load every peer's input and reduce locally; barrier");
  add(AlgoKind::kAllReduceStReduce, Op::kAllReduce, "st_reduce", "one_shot_push",
      "push input into every peer's scratch (release), reduce the received copies locally");
  add(AlgoKind::kAllReduceRsLdAgSt, Op::kAllReduce, "rs_ld_ag_st", "two_shot",
      "reduce-scatter by loads, all-gather by stores");
  add(AlgoKind::kAllReduceRsLdAgLd, Op::kAllReduce, "rs_ld_ag_ld", "two_shot_ld",
      "reduce-scatter by loads, barrier, all-gather by loads");
  add(AlgoKind::kAllReduceMcLdReduceMcSt, Op::kAllReduce, "mc_ld_reduce_mc_st", "multimem",
      "NVSwitch multimem.ld_reduce + multimem.st on each rank's slice (NVLS)")->needs_multicast = true;
  add(AlgoKind::kReduceScatterLdReduce, Op::kReduceScatter, "ld_reduce", "pull",
      "each rank loads its slice from every peer and reduces");
  add(AlgoKind::kAllGatherSt, Op::kAllGather, "st", "push",
      "each rank stores its input into every rank's output");
  add(AlgoKind::kAllGatherLd, Op::kAllGather, "ld", "pull",
      "each rank loads every peer's input into its output");
  // Flagged-packet (LL) programs: no barrier, one one-way trip; small messages.
  add(AlgoKind::kAllReduceStLlReduce, Op::kAllReduce, "st_ll_reduce", "one_shot_ll",
      "push input as flagged packets to every rank, reduce the packets received");
  add(AlgoKind::kReduceScatterStLlReduce, Op::kReduceScatter, "st_ll_reduce", "push_ll",
      "push slice q to rank q as flagged packets, reduce the packets received");
  add(AlgoKind::kAllGatherStLl, Op::kAllGather, "st_ll", "push_ll",
      "push input as flagged packets to every rank, unpack the packets received");
  // Host plans: copy engines move the bytes; SMs only reduce (blocks = the reduce kernel's).
  auto add_plan = [&](AlgoKind k, Op op, const char* phases, const char* alias, const char* summary) {
    AlgoInfo a;
    a.kind = k;
    a.op = op;
    a.id = std::string(op_name(op)) + "." + phases;
    a.alias = alias;
    a.summary = summary;
    a.plan = true;
    const bool kernel = op != Op::kAllGather;  // the all-gather plan runs no kernel at all
    a.max_blocks = kernel ? LocalReduceRing::Config::kMaxBlocks : 0;
    a.default_max_blocks = kernel ? LocalReduceRing::Config::kDefaultMaxBlocks : 0;
    a.bytes_per_block = LocalReduceRing::Config::kBytesPerBlock;
    v.push_back(a);
  };
  add_plan(AlgoKind::kPlanAllGatherCeSt, Op::kAllGather, "ce_st", "ce",
           "host plan: copy engines push the input into every peer's output, a flag per chunk");
  add_plan(AlgoKind::kPlanReduceScatterCeStRingReduce, Op::kReduceScatter, "ce_st_ring_reduce", "ce",
           "host plan: copy engines scatter slices into owners' scratch; one kernel reduces in ring order");
  add_plan(AlgoKind::kPlanReduceScatterCeStChunkReduce, Op::kReduceScatter, "ce_st_chunk_reduce", "ce_overlap",
           "host plan: as ce, the reduce of chunk k starts when chunk k of every peer has landed");
  return v;
}

}  // namespace

const std::vector<AlgoInfo>& algorithms() {
  static const std::vector<AlgoInfo> v = build();
  return v;
}

std::size_t AlgoInfo::in_bytes(std::size_t bytes, int world) const {
  return op == Op::kAllGather ? bytes / std::size_t(world) : bytes;
}
std::size_t AlgoInfo::out_bytes(std::size_t bytes, int world) const {
  return op == Op::kReduceScatter ? bytes / std::size_t(world) : bytes;
}
std::size_t AlgoInfo::per_rank_bytes(std::size_t bytes, int world) const {
  return (op == Op::kAllReduce || op == Op::kBarrier) ? bytes : bytes / std::size_t(world);
}
std::size_t AlgoInfo::max_bytes_for(int world) const {
  if (!piece_bytes || op == Op::kBarrier) return 0;
  const std::size_t per_rank = piece_bytes * std::size_t(pieces_per_source(max_blocks, world));
  return op == Op::kAllReduce ? per_rank : per_rank * std::size_t(world);
}
std::size_t AlgoInfo::count(std::size_t bytes, DType t, int world) const {
  return per_rank_bytes(bytes, world) / dtype_size(t);
}
std::size_t AlgoInfo::scratch_bytes(std::size_t bytes, int world) const {
  // Copy-engine reduce-scatter: a slot per source rank of one rank's output = the input size.
  if (plan) return op == Op::kReduceScatter ? bytes : 0;
  return piece_bytes ? BlockRegions::scratch_bytes(world) : 0;
}
int AlgoInfo::default_blocks(std::size_t bytes, int world) const {
  if (op == Op::kBarrier) return 1;
  if (plan && op == Op::kAllGather) return 0;  // copies only: no SM
  // Work per block: what this rank moves, spread so each block has ~bytes_per_block.
  const std::size_t per_rank = per_rank_bytes(bytes, world);
  const std::size_t mult = blocks_per_peer ? std::size_t(world) : 1;  // blocks per piece
  std::size_t pieces = (per_rank + bytes_per_block - 1) / bytes_per_block;
  pieces = std::min<std::size_t>(pieces, std::size_t(default_max_blocks) / mult);
  if (piece_bytes) pieces = std::max(pieces, (per_rank + piece_bytes - 1) / piece_bytes);
  const std::size_t vecs = per_rank / kVecBytes;  // no point in blocks with nothing to do
  pieces = std::min<std::size_t>({pieces, std::size_t(max_blocks) / mult, std::max<std::size_t>(vecs, 1)});
  return int(std::max<std::size_t>(pieces, 1) * mult);
}

const AlgoInfo& find_algo(Op op, std::string_view name) {
  std::string valid;
  for (const AlgoInfo& a : algorithms()) {
    if (a.op != op) continue;
    const std::string_view suffix = std::string_view(a.id).substr(std::string_view(a.id).find('.') + 1);
    if (name == a.id || name == a.alias || name == suffix) return a;
    valid += (valid.empty() ? "" : ", ") + a.alias + " (" + std::string(suffix) + ")";
  }
  fail(ErrorCode::kInvalidArgument, "unknown algorithm '" + std::string(name) + "' for op " +
                                        op_name(op) + " (valid: " + valid + ")");
}

const AlgoInfo& find_algo(std::string_view full_name) {
  const auto dot = full_name.find('.');
  if (dot == std::string_view::npos)
    fail(ErrorCode::kInvalidArgument,
         "algorithm '" + std::string(full_name) + "' needs the form <op>.<name>, e.g. all_reduce.one_shot");
  return find_algo(parse_op(std::string(full_name.substr(0, dot))), full_name.substr(dot + 1));
}

void check_args(const AlgoInfo& a, DType t, std::size_t bytes, int world, int blocks, ReduceOp rop) {
  const std::string who = std::string(dtype_name(t)) + " " + a.id;
  auto bad = [&](ErrorCode c, const std::string& m) { fail(c, m); };
  if (world < 2 || world > kMaxWorld)
    bad(ErrorCode::kInvalidArgument,
        "world=" + std::to_string(world) + " is outside 2.." + std::to_string(kMaxWorld));
  if (world < a.min_world || world > a.max_world)
    bad(ErrorCode::kUnsupported, "world=" + std::to_string(world) + " is outside " + a.id + "'s range " +
                                     std::to_string(a.min_world) + ".." + std::to_string(a.max_world));
  if (a.op != Op::kBarrier) {
    if (bytes == 0) bad(ErrorCode::kInvalidArgument, "bytes=0: a collective needs at least one 16-byte vector");
    const bool per_rank = a.op == Op::kReduceScatter || a.op == Op::kAllGather;
    const std::size_t unit = per_rank ? kVecBytes * std::size_t(world) : kVecBytes;
    if (bytes % unit)
      bad(ErrorCode::kInvalidArgument,
          "bytes=" + std::to_string(bytes) + " is not a multiple of " + std::to_string(unit) + " for " + who +
              (per_rank ? " (16-byte vectors per rank times world=" + std::to_string(world) + ")" : ""));
    const std::size_t most = a.max_bytes_for(world);
    if (most && bytes > most)
      bad(ErrorCode::kUnsupported,
          "bytes=" + std::to_string(bytes) + " exceeds " + a.id + "'s maximum of " + std::to_string(most) +
              " at world=" + std::to_string(world) +
              (a.piece_bytes ? " (" + std::to_string(a.pieces_per_source(a.max_blocks, world)) + " pieces of " +
                                   std::to_string(a.piece_bytes) + " bytes per rank)"
                             : std::string()));
  }
  // multimem.ld_reduce has max/min for 16-bit floats only (PTX ISA): fp32 max/min cannot run.
  if (a.needs_multicast && t == DType::kFP32 && rop != ReduceOp::kSum)
    bad(ErrorCode::kUnsupported, std::string("reduce op ") + reduce_op_name(rop) + " on fp32 has no multimem.ld_reduce: " +
                                     a.id + " supports fp32 sum only");
  if (a.plan && a.op == Op::kAllGather) {
    if (blocks != 0)
      bad(ErrorCode::kInvalidArgument, "blocks=" + std::to_string(blocks) + ": " + a.id +
                                           " runs no kernel (copy engines only), so it takes no block count");
  } else if (blocks < 1 || blocks > a.max_blocks)
    bad(ErrorCode::kInvalidArgument, "blocks=" + std::to_string(blocks) + " is outside 1.." +
                                         std::to_string(a.max_blocks) + " for " + a.id);
  if (a.piece_bytes && a.op != Op::kBarrier) {
    const std::size_t per_rank = a.per_rank_bytes(bytes, world);
    const std::string what = " for " + who + " of " + std::to_string(bytes) + " bytes";
    if (a.blocks_per_peer && blocks < world)
      bad(ErrorCode::kInvalidArgument, "blocks=" + std::to_string(blocks) + " is too few" + what +
                                           ": blocks are dealt to peers, so it needs >= world=" + std::to_string(world));
    const std::size_t need = (per_rank + a.piece_bytes - 1) / a.piece_bytes;
    if (std::size_t(a.pieces_per_source(blocks, world)) < need)
      bad(ErrorCode::kInvalidArgument,
          "blocks=" + std::to_string(blocks) + " is too few" + what + ": each piece carries at most " +
              std::to_string(a.piece_bytes) + " bytes, so it needs >= " +
              std::to_string(need * (a.blocks_per_peer ? std::size_t(world) : 1)));
    // The most pieces any source is cut into must each hold a vector.
    const std::size_t most_pieces = a.blocks_per_peer ? (std::size_t(blocks) + world - 1) / world : blocks;
    if (most_pieces > per_rank / kVecBytes)
      bad(ErrorCode::kInvalidArgument, "blocks=" + std::to_string(blocks) + " is too many" + what +
                                           ": every block must carry at least one 16-byte vector");
  }
}

double bus_factor(Op op, int world) {
  const double n = world;
  switch (op) {
    case Op::kAllReduce: return 2.0 * (n - 1) / n;
    case Op::kReduceScatter:
    case Op::kAllGather: return (n - 1) / n;
    default: return 1.0;
  }
}

}  // namespace symm
