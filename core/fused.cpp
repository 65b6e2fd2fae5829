#include "core/fused.h"

#include <algorithm>
#include <cctype>

namespace symm {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

[[noreturn]] void bad(const std::string& msg) { fail(ErrorCode::kInvalidArgument, msg); }

}  // namespace

const char* fused_op_name(FusedOp op) { return op == FusedOp::kAgMm ? "ag_mm" : "mm_rs"; }

bool is_fused_op(const std::string& s) { return s == "ag_mm" || s == "mm_rs"; }

FusedOp parse_fused_op(const std::string& s) {
  if (s == "ag_mm") return FusedOp::kAgMm;
  if (s == "mm_rs") return FusedOp::kMmRs;
  bad("unknown fused op '" + s + "' (valid: ag_mm, mm_rs)");
}

MatShape named_shape(const std::string& name) {
  const std::string l = lower(name);
  if (l == "8b") return MatShape{0, 1792, 4096, "8b"};
  if (l == "70b") return MatShape{0, 3584, 8192, "70b"};
  bad("--shape '" + name + "' is not a known shape (valid: 8b, 70b)");
}

void validate_fused(FusedOp op, const MatShape& s, int world, DType t) {
  const std::string o = fused_op_name(op);
  if (world < 2) bad(o + " needs a world of at least 2 ranks (got " + std::to_string(world) + ")");
  if (t != DType::kBF16 && t != DType::kFP16)
    bad("--dtype " + std::string(dtype_name(t)) + " is not supported by " + o + " (valid: bf16, fp16)");
  const std::pair<const char*, std::size_t> dims[] = {{"--m", s.m}, {"--n", s.n}, {"--k", s.k}};
  for (const auto& [opt, v] : dims) {
    if (v == 0) bad(std::string(opt) + " must be positive for " + o);
    if (v > kMaxMatDim)
      bad(std::string(opt) + " " + std::to_string(v) + " is above the largest dimension " + std::to_string(kMaxMatDim));
  }
  if (s.m % std::size_t(world))
    bad("--m " + std::to_string(s.m) + " is not divisible by the world size " + std::to_string(world) + " for " + o);
  if (op == FusedOp::kMmRs && s.k % std::size_t(world))
    bad("--k " + std::to_string(s.k) + " is not divisible by the world size " + std::to_string(world) + " for " + o);
  const std::size_t vec = kVecBytes / dtype_size(t);
  if (s.n % vec) bad("--n " + std::to_string(s.n) + " is not a multiple of " + std::to_string(vec) + " (16-byte rows)");
  const std::size_t k_rank = op == FusedOp::kMmRs ? s.k / std::size_t(world) : s.k;
  if (k_rank % vec)
    bad("--k " + std::to_string(s.k) + (op == FusedOp::kMmRs ? " / world" : "") + " is not a multiple of " +
        std::to_string(vec) + " (16-byte rows)");
  const FusedBuffers b = fused_buffers(op, s, world, t);
  const std::size_t biggest = std::max({b.a, b.b, b.c, b.gathered, b.partial, b.scratch});
  if (biggest > kMaxMatBytes)
    bad("--m/--n/--k " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
        " need a matrix of " + format_size(biggest) + " per rank, above the limit of " + format_size(kMaxMatBytes));
}

FusedBuffers fused_buffers(FusedOp op, const MatShape& s, int world, DType t) {
  const std::size_t e = dtype_size(t), w = std::size_t(world);
  FusedBuffers b;
  if (op == FusedOp::kAgMm) {
    b.a = s.m / w * s.k * e;
    b.b = s.k * s.n * e;
    b.c = s.m * s.n * e;
    b.gathered = s.m * s.k * e;
  } else {
    b.a = s.m * (s.k / w) * e;
    b.b = s.k / w * s.n * e;
    b.c = s.m / w * s.n * e;
    b.partial = s.m * s.n * e;
    b.scratch = s.m * s.n * e;  // world slots of M/w x N
  }
  return b;
}

namespace {
std::size_t align_to(std::size_t b, std::size_t a) { return (b + a - 1) / a * a; }
}  // namespace

FusedHeapLayout fused_heap_layout(FusedOp op, const FusedBuffers& fb, std::size_t coll_scratch, std::size_t align) {
  FusedHeapLayout l;
  std::size_t off = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t at = off;
    off = align_to(off + bytes, align);
    return at;
  };
  l.a = take(fb.a);
  l.b = take(fb.b);
  l.c = take(fb.c);
  l.work = take(op == FusedOp::kAgMm ? fb.gathered : fb.scratch);
  l.partial = take(fb.partial);
  l.coll_scratch = take(coll_scratch);
  l.total = std::max(off, align);
  return l;
}

FusedHeapLayout fused_symmetric_layout(FusedOp op, const FusedBuffers& fb, std::size_t align) {
  FusedHeapLayout l;
  if (op == FusedOp::kAgMm) {
    l.work = align_to(fb.a, align);
    l.total = l.work + fb.gathered;
  } else {
    l.total = fb.scratch;
  }
  return l;
}

std::string fused_alias_list() {
  std::string out;
  for (FusedOp op : {FusedOp::kAgMm, FusedOp::kMmRs}) {
    out += std::string(out.empty() ? "" : "; ") + fused_op_name(op) + ":";
    bool first = true;
    for (const FusedAlgo& a : fused_algorithms())
      if (a.op == op) out += std::string(first ? " " : ", ") + a.alias, first = false;
  }
  return out;
}

const std::vector<FusedAlgo>& fused_baselines() {
  static const std::vector<FusedAlgo> t = {
      {"cublaslt", "cublaslt", FusedOp::kAgMm,
       "baseline: the matmul alone, M x N x K on A already gathered, no communication (the lower bound)"},
      {"seq_coll_gemm", "seq_coll_gemm", FusedOp::kAgMm,
       "baseline: our SM all-gather (auto's rule), then the matmul; stands for NCCL + cuBLAS, our SM "
       "collective in NCCL's place"},
      {"cublaslt", "cublaslt", FusedOp::kMmRs,
       "baseline: the matmul alone, M x N x K/world (each rank's partial product), no communication (the "
       "lower bound)"},
      {"seq_coll_gemm", "seq_coll_gemm", FusedOp::kMmRs,
       "baseline: the matmul, then our SM reduce-scatter (auto's rule); stands for cuBLAS + NCCL, our SM "
       "collective in NCCL's place"},
      // The tile programs' own matmul alone (core/algos/tile_gemm.h), beside cuBLASLt's.
      {"tile_gemm", "tile_gemm", FusedOp::kAgMm,
       "baseline: the matmul alone as our persistent tile GEMM device program (mma_tile), M x N x K on A "
       "already gathered"},
      {"tile_gemm", "tile_gemm", FusedOp::kMmRs,
       "baseline: the matmul alone as our persistent tile GEMM device program (mma_tile), M x N x K/world"},
  };
  return t;
}

const FusedAlgo* find_fused_baseline(FusedOp op, const std::string& name) {
  for (const FusedAlgo& a : fused_baselines())
    if (a.op == op && name == a.id) return &a;
  return nullptr;
}

std::vector<const FusedAlgo*> parse_fused_algos(FusedOp op, const std::string& spec) {
  std::vector<const FusedAlgo*> out;
  std::string valid;
  for (const FusedAlgo& a : fused_algorithms())
    if (a.op == op) valid += std::string(valid.empty() ? "" : ", ") + a.id + " (" + a.alias + ")";
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const std::size_t end = std::min(spec.find(',', pos), spec.size());
    const std::string name = spec.substr(pos, end - pos);
    pos = end + 1;
    if (name.empty()) continue;
    bool hit = false;
    for (const FusedAlgo& a : fused_algorithms()) {
      if (a.op != op) continue;
      const std::string id = a.id, suffix = id.substr(id.find('.') + 1);
      if (name == "all" || name == id || name == suffix || name == a.alias) {
        if (std::find(out.begin(), out.end(), &a) == out.end()) out.push_back(&a);
        hit = true;
      }
    }
    if (!hit) bad("unknown " + std::string(fused_op_name(op)) + " algorithm '" + name + "' (valid: " + valid + ")");
  }
  return out;
}

std::size_t chunk_rows_for(std::size_t rows, std::size_t want, std::size_t dflt, int max_chunks) {
  if (rows == 0) return 1;
  std::size_t c = want ? want : dflt;
  c = std::clamp<std::size_t>(c, 1, rows);
  const std::size_t least = (rows + std::size_t(max_chunks) - 1) / std::size_t(max_chunks);
  return std::max(c, least);
}

}  // namespace symm
