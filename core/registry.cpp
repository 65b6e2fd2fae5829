#include "core/registry.h"

#include <algorithm>
#include <deque>

#include "core/dispatch.h"

namespace symm {
namespace {

std::vector<AlgoInfo> build() {
  std::vector<AlgoInfo> v;
  for_each_entry(Algorithms{}, [&]<class P>(int index) {
    constexpr Descriptor d = P::kDescriptor;
    AlgoInfo a;
    a.kind = d.kind;
    a.plan = d.kind == EntryKind::kHostPlan;
    a.index = index;
    a.op = d.op;
    a.id = std::string(op_name(d.op)) + "." + d.name;
    a.alias = d.alias;
    a.summary = d.summary;
    a.needs_multicast = d.needs_multicast;
    using C = typename P::Config;
    static_assert(C::kBlockLimit <= kPadBlocks && C::kDefaultBlockCap <= C::kBlockLimit);
    a.block_limit = C::kBlockLimit;
    a.default_block_cap = C::kDefaultBlockCap;
    a.bytes_per_block = C::kBytesPerBlock;
    if constexpr (requires { C::kPieceBytes; }) a.piece_bytes = C::kPieceBytes;
    if constexpr (requires { C::kBlocksPerPeer; }) a.blocks_per_peer = C::kBlocksPerPeer;
    v.push_back(a);
  });
  return v;
}

}  // namespace

const std::vector<AlgoInfo>& algorithms() {
  static const std::vector<AlgoInfo> v = build();
  return v;
}

const std::vector<FusedAlgo>& fused_algorithms() {
  static const std::vector<FusedAlgo> t = [] {
    static std::deque<std::string> ids;  // FusedAlgo::id points into it: kept for the process
    std::vector<FusedAlgo> v;
    for_each_entry(FusedPlans{}, [&]<class P>(int index) {
      constexpr Descriptor d = P::kDescriptor;
      ids.push_back(std::string(fused_op_name(d.fused_op)) + "." + d.name);
      v.push_back(FusedAlgo{ids.back().c_str(), d.alias, d.fused_op, d.summary, index, d.kernel_spins_on_copies});
    });
    return v;
  }();
  return t;
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
int AlgoInfo::default_threads(std::size_t bytes, int world, int blocks) const {
  // The largest per-block piece any phase handles: all_reduce pieces are of the whole buffer
  // (one-shot) or of one rank's slice (two-shot); reduce_scatter / all_gather of one rank's part.
  // Programs that deal blocks to peers cut one source into blocks / world pieces only.
  const std::size_t pieces = std::size_t(std::max(1, pieces_per_source(blocks, world)));
  const std::size_t vecs = (per_rank_bytes(bytes, world) / kVecBytes + pieces - 1) / pieces;
  const std::size_t warps = std::max<std::size_t>(1, (vecs + 31) / 32);
  return int(std::min<std::size_t>(warps * 32, kDefaultBlockThreads));
}
std::size_t AlgoInfo::max_bytes_for(int world) const {
  if (!piece_bytes || op == Op::kBarrier) return 0;
  const std::size_t per_rank = piece_bytes * std::size_t(pieces_per_source(block_limit, world));
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
  if (block_limit == 0) return 0;  // a host plan that runs no kernel (copies only)
  // Work per block: what this rank moves, spread so each block has ~bytes_per_block.
  const std::size_t per_rank = per_rank_bytes(bytes, world);
  const std::size_t mult = blocks_per_peer ? std::size_t(world) : 1;  // blocks per piece
  std::size_t pieces = (per_rank + bytes_per_block - 1) / bytes_per_block;
  pieces = std::min<std::size_t>(pieces, std::size_t(default_block_cap) / mult);
  if (piece_bytes) pieces = std::max(pieces, (per_rank + piece_bytes - 1) / piece_bytes);
  const std::size_t vecs = per_rank / kVecBytes;  // no point in blocks with nothing to do
  pieces = std::min<std::size_t>({pieces, std::size_t(block_limit) / mult, std::max<std::size_t>(vecs, 1)});
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
  fail(ErrorCode::kInvalidArgument,
       "unknown algorithm '" + std::string(name) + "' for op " + op_name(op) + " (valid: " + valid + ")");
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
  if (world < 2 || world > kPadWorld)
    bad(ErrorCode::kInvalidArgument, "world=" + std::to_string(world) + " is outside 2.." + std::to_string(kPadWorld));
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
              (a.piece_bytes ? " (" + std::to_string(a.pieces_per_source(a.block_limit, world)) + " pieces of " +
                                   std::to_string(a.piece_bytes) + " bytes per rank)"
                             : std::string()));
  }
  // multimem.ld_reduce has max/min for 16-bit floats only (PTX ISA): fp32 max/min cannot run.
  if (a.needs_multicast && t == DType::kFP32 && rop != ReduceOp::kSum)
    bad(ErrorCode::kUnsupported, std::string("reduce op ") + reduce_op_name(rop) +
                                     " on fp32 has no multimem.ld_reduce: " + a.id + " supports fp32 sum only");
  if (a.block_limit == 0) {
    if (blocks != 0)
      bad(ErrorCode::kInvalidArgument, "blocks=" + std::to_string(blocks) + ": " + a.id +
                                           " runs no kernel (copy engines only), so it takes no block count");
  } else if (blocks < 1 || blocks > a.block_limit)
    bad(ErrorCode::kInvalidArgument,
        "blocks=" + std::to_string(blocks) + " is outside 1.." + std::to_string(a.block_limit) + " for " + a.id);
  if (a.piece_bytes && a.op != Op::kBarrier) {
    const std::size_t per_rank = a.per_rank_bytes(bytes, world);
    const std::string what = " for " + who + " of " + std::to_string(bytes) + " bytes";
    if (a.blocks_per_peer && blocks < world)
      bad(ErrorCode::kInvalidArgument,
          "blocks=" + std::to_string(blocks) + " is too few" + what +
              ": blocks are dealt to peers, so it needs >= world=" + std::to_string(world));
    const std::size_t need = (per_rank + a.piece_bytes - 1) / a.piece_bytes;
    if (std::size_t(a.pieces_per_source(blocks, world)) < need)
      bad(ErrorCode::kInvalidArgument,
          "blocks=" + std::to_string(blocks) + " is too few" + what + ": each piece carries at most " +
              std::to_string(a.piece_bytes) +
              " bytes, so it needs >= " + std::to_string(need * (a.blocks_per_peer ? std::size_t(world) : 1)));
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
