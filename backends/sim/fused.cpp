// The fused matmuls (core/fused.h) on the simulator: run_fused lays out every rank's symmetric
// heap (A, B, C, the plan's work buffers), writes the seeded inputs, runs the calls of the plan
// (FusedRunSpec::calls, back to back) as a custom workload of the Simulator (workload.h,
// CustomRun), and checks every rank's C of every call against the float64 product of the global
// matrices. The baselines (fused_baselines: the
// matmul alone, and our SM collective and the matmul one after the other) run on the same harness.
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "backends/sim/conv.h"
#include "backends/sim/simulator.h"
#include "backends/sim/testing.h"
#include "core/algos/tile_gemm.h"
#include "core/auto_select.h"
#include "core/dispatch.h"
#include "core/reference.h"

namespace symm::sim {
namespace {

// The global matrices, rounded to T: A is M x K, B is K x N, values in (-1, 1).
template <class T>
std::vector<double> draw_matrix(uint64_t seed, uint64_t which, std::size_t elems) {
  std::vector<double> v(elems);
  const uint64_t stream = splitmix64(seed ^ splitmix64(which));
  for (std::size_t i = 0; i < elems; ++i)
    v[i] = double(Conv<T>::load(Conv<T>::store(draw_input(splitmix64(stream + i) >> 40))));
  return v;
}

template <class T>
void put_rows(uint8_t* dst, const std::vector<double>& src, std::size_t ld, std::size_t row0, std::size_t rows,
              std::size_t col0, std::size_t cols) {
  T* p = reinterpret_cast<T*>(dst);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) p[i * cols + j] = Conv<T>::store(float(src[(row0 + i) * ld + col0 + j]));
}

// The rows of the global C (m rows, each `row_macs` multiply-adds of the reference) compared with
// the float64 product: all of them within `budget`, else every s-th (from s/2) and the first and
// last row of every shard of `shard` rows (where an off-by-one in a plan's offsets shows).
std::vector<std::size_t> sample_rows(std::size_t m, std::size_t shard, std::size_t row_macs, std::size_t budget) {
  std::vector<std::size_t> out;
  const double total = double(m) * double(row_macs);
  if (total <= double(budget)) {
    for (std::size_t i = 0; i < m; ++i) out.push_back(i);
    return out;
  }
  const std::size_t stride = std::size_t(std::ceil(total / double(budget)));
  for (std::size_t i = stride / 2; i < m; i += stride) out.push_back(i);
  for (std::size_t r0 = 0; r0 < m; r0 += shard) {
    out.push_back(r0);
    out.push_back(std::min(m, r0 + shard) - 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The float64 product of rows `pick` of A (lda columns, of which `cols` from col0) with B
// (cols x n): pick.size() x n.
std::vector<double> reference_rows(const std::vector<double>& a, std::size_t lda, std::size_t col0, std::size_t cols,
                                   const std::vector<double>& b, std::size_t n, const std::vector<std::size_t>& pick) {
  std::vector<double> sub(pick.size() * cols);
  for (std::size_t i = 0; i < pick.size(); ++i)
    std::copy_n(a.begin() + std::ptrdiff_t(pick[i] * lda + col0), cols, sub.begin() + std::ptrdiff_t(i * cols));
  return reference_matmul(sub, b, pick.size(), n, cols);
}

// Rows [r0, r0 + nr) of a result `p` (row-major, n columns, rows counted from r0) against the
// reference rows `want` (the rows `pick`, n columns each): the worst row's error over the picked
// rows in range, and +inf if any element of any row in range is unwritten (NaN). Adds the rows it
// compared to `checked`.
template <class T>
double check_rows(const T* p, std::size_t r0, std::size_t nr, std::size_t n, const std::vector<double>& want,
                  const std::vector<std::size_t>& pick, std::size_t& checked) {
  for (std::size_t i = 0; i < nr * n; ++i)
    if (std::isnan(double(Conv<T>::load(p[i])))) return std::numeric_limits<double>::infinity();
  std::vector<double> got, w;
  std::size_t rows = 0;
  for (std::size_t j = 0; j < pick.size(); ++j) {
    if (pick[j] < r0 || pick[j] >= r0 + nr) continue;
    const T* row = p + (pick[j] - r0) * n;
    for (std::size_t c = 0; c < n; ++c) got.push_back(Conv<T>::load(row[c]));
    w.insert(w.end(), want.begin() + std::ptrdiff_t(j * n), want.begin() + std::ptrdiff_t((j + 1) * n));
    ++rows;
  }
  checked += rows;
  return rows ? max_row_rel_err(got, w, rows, n) : 0.0;
}

}  // namespace

namespace detail {
RunResult run_fused_with(const FusedRunSpec& spec, const FusedPlanFn& plan, const FusedHarness& hx) {
  const Machine& m = spec.machine;
  SYMM_REQUIRE(spec.algo, ErrorCode::kInvalidArgument, "no fused algorithm given");
  SYMM_REQUIRE(m.gpus > 0, ErrorCode::kInvalidArgument, "no machine loaded (Machine::by_name)");
  const FusedOp op = spec.algo->op;
  const MatShape& s = spec.shape;
  const int w = spec.world;
  if (w < 2) fail(ErrorCode::kInvalidArgument, "world=" + std::to_string(w) + " must be at least 2");
  validate_fused(op, s, w, spec.dtype);
  check_streams(spec.streams, kMinFusedStreams, "streams");
  SYMM_REQUIRE(spec.calls >= 1, ErrorCode::kInvalidArgument, "calls=" + std::to_string(spec.calls) + " must be >= 1");
  if (w > m.gpus && !spec.timing_only && !m.team)  // a team machine's ranks share its GPUs
    fail(ErrorCode::kUnsupported, "world=" + std::to_string(w) + " exceeds machine " + m.name + "'s " +
                                      std::to_string(m.gpus) + " GPUs (use --timing-only to scale past it)");
  const FusedBuffers fb = fused_buffers(op, s, w, spec.dtype);
  SYMM_REQUIRE(!hx.gathered_input || op == FusedOp::kAgMm, ErrorCode::kInternal, "gathered input is ag_mm's");
  SYMM_REQUIRE(!hx.check_partial || op == FusedOp::kMmRs, ErrorCode::kInternal, "a partial check is mm_rs's");
  const FusedHeapLayout l = fused_heap_layout(op, fb, hx.coll_scratch);
  const std::size_t rows = s.m / std::size_t(w), kl = s.k / std::size_t(w);

  // A custom workload (workload.h): no registry entry; the heap, inputs and check are the run's.
  RunSpec rs;
  rs.machine = m;
  rs.world = w;
  rs.algo = nullptr;
  rs.dtype = spec.dtype;
  rs.bytes = 0;
  rs.graph = spec.graph;
  rs.timing_only = spec.timing_only;
  rs.race_check = spec.race_check;
  rs.seed = spec.seed;
  rs.trace_path = spec.trace_path;
  rs.streams = spec.streams;
  rs.lanes = spec.lanes;

  std::vector<double> ga, gb, want;
  if (!spec.timing_only)
    with_type(spec.dtype, [&]<class T>() {
      ga = draw_matrix<T>(spec.seed, 1, s.m * s.k);
      gb = draw_matrix<T>(spec.seed, 2, s.k * s.n);
    });

  CustomRun cr;
  cr.heap_bytes = l.total;
  cr.plan = [&](SimHost& h, char* base) {
    FusedArgs f;
    f.a = base + l.a;
    f.b = base + l.b;
    f.c = base + l.c;
    f.work = base + l.work;
    f.partial = fb.partial ? base + l.partial : nullptr;
    f.m = s.m, f.n = s.n, f.k = s.k;
    f.dtype = spec.dtype;
    f.chunk_rows = spec.chunk_rows;
    f.blocks = spec.blocks;
    f.coll_scratch = hx.coll_scratch ? base + l.coll_scratch : nullptr;
    // A team machine's ranks share their GPUs round robin, as the CUDA bench's team does: the
    // busiest GPU's ranks set every rank's share.
    f.sms = sms_per_rank(m.sms, m.ranks_per_gpu(spec.world));
    plan(h, f);
  };
  cr.write_inputs = [&](int r, uint8_t* heap) {
    with_type(spec.dtype, [&]<class T>() {
      const std::size_t ur = std::size_t(r);
      if (op == FusedOp::kAgMm) {
        put_rows<T>(heap + l.a, ga, s.k, ur * rows, rows, 0, s.k);
        put_rows<T>(heap + l.b, gb, s.n, 0, s.k, 0, s.n);
        if (hx.gathered_input) put_rows<T>(heap + l.work, ga, s.k, 0, s.m, 0, s.k);
      } else {
        put_rows<T>(heap + l.a, ga, s.k, 0, s.m, ur * kl, kl);
        put_rows<T>(heap + l.b, gb, s.n, ur * kl, kl, 0, s.n);
      }
    });
    std::memset(heap + l.c, 0xFF, fb.c);  // unwritten = NaN = wrong
    if (hx.check_partial) std::memset(heap + l.partial, 0xFF, fb.partial);
  };
  // The rows of C the float64 reference covers (all of them unless the product is large).
  const std::vector<std::size_t> pick =
      sample_rows(s.m, rows, s.n * s.k, spec.check_macs ? spec.check_macs : kFusedCheckMacs);
  std::size_t checked = 0, total_rows = 0;
  // mm_rs's matmul alone: rank r's partial, M x N, against A[:, r's K slice] @ B[r's K slice, :].
  auto check_partials = [&](const std::vector<const uint8_t*>& heaps) {
    double worst = 0;
    for (int r = 0; r < w; ++r) {
      const std::size_t k0 = std::size_t(r) * kl;
      const std::vector<double> br(gb.begin() + std::ptrdiff_t(k0 * s.n), gb.begin() + std::ptrdiff_t((k0 + kl) * s.n));
      const std::vector<double> want_r = reference_rows(ga, s.k, k0, kl, br, s.n, pick);
      with_type(spec.dtype, [&]<class T>() {
        const T* p = reinterpret_cast<const T*>(heaps[std::size_t(r)] + l.partial);
        worst = std::max(worst, check_rows(p, 0, s.m, s.n, want_r, pick, checked));
      });
      total_rows += s.m;
    }
    return worst;
  };
  cr.check = [&](const std::vector<const uint8_t*>& heaps) {
    checked = total_rows = 0;
    if (hx.check_partial) return check_partials(heaps);
    if (want.empty()) want = reference_rows(ga, s.k, 0, s.k, gb, s.n, pick);
    double worst = 0;
    for (int r = 0; r < w; ++r) {
      const std::size_t r0 = op == FusedOp::kAgMm ? 0 : std::size_t(r) * rows;
      const std::size_t nr = op == FusedOp::kAgMm ? s.m : rows;
      with_type(spec.dtype, [&]<class T>() {
        const T* p = reinterpret_cast<const T*>(heaps[std::size_t(r)] + l.c);
        worst = std::max(worst, check_rows(p, r0, nr, s.n, want, pick, checked));
      });
      total_rows += nr;
    }
    return worst;
  };

  const auto wall0 = std::chrono::steady_clock::now();
  RunResult res;
  {
    Simulator sim(rs, Workload::custom(cr), std::vector<int>(std::size_t(spec.calls), m.sms));
    res = sim.run();
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  res.blocks = 0;
  res.err_bound = matmul_err_bound(spec.dtype, w, op == FusedOp::kMmRs && !hx.check_partial);
  if (spec.timing_only) res.max_rel_err = -1;
  res.checked_rows = checked;
  res.rows = total_rows;
  return res;
}
}  // namespace detail

namespace {

// ---- the baselines (core/fused.h fused_baselines), as plans on the same harness --------------

// cublaslt: one GEMM on the main stream, nothing else. ag_mm reads the gathered A the harness
// put in `work` (M x N x K); mm_rs writes this rank's partial product (M x N x K/world).
RunResult run_gemm_alone(const FusedRunSpec& spec) {
  const bool ag = spec.algo->op == FusedOp::kAgMm;
  detail::FusedHarness hx;
  hx.gathered_input = ag;
  hx.check_partial = !ag;
  return with_type(spec.dtype, [&]<class T>() {
    return detail::run_fused_with(
        spec,
        [ag](SimHost& h, const FusedArgs& f) {
          const std::size_t kl = ag ? f.k : f.k / std::size_t(h.world());
          h.gemm(kMainStream, gemm_args(ag ? f.work : f.a, f.b, ag ? f.c : f.partial, f.m, f.n, kl, DTypeOf<T>::value));
        },
        hx);
  });
}

// tile_gemm: cublaslt's product as the tile GEMM device program (core/algos/tile_gemm.h) on
// one block per SM (at most one per tile).
RunResult run_tile_gemm_alone(const FusedRunSpec& spec) {
  const bool ag = spec.algo->op == FusedOp::kAgMm;
  detail::FusedHarness hx;
  hx.gathered_input = ag;
  hx.check_partial = !ag;
  return with_type(spec.dtype, [&]<class T>() {
    return detail::run_fused_with(
        spec,
        [ag](SimHost& h, const FusedArgs& f) {
          CollArgs c;
          c.mat.a = ag ? f.work : f.a;
          c.mat.b = f.b;
          c.mat.c = ag ? f.c : f.partial;
          c.mat.m = uint32_t(f.m), c.mat.n = uint32_t(f.n);
          c.mat.k = uint32_t(ag ? f.k : f.k / std::size_t(h.world()));
          const int blocks = tile_blocks(f.sms, TileGrid(c.mat.m, c.mat.n).tiles());
          CheckedHost<SimHost>(h).template launch<TileGemm, T>(kMainStream, c, blocks);
        },
        hx);
  });
}

// seq_coll_gemm: the collective, then the GEMM (ag_mm), or the GEMM, then the collective (mm_rs),
// on the main stream: the collective is the SM device program `--algo auto` runs without a table
// (auto_rule) at its default block count, on the same buffers the fused plans use (ag_mm: the
// shard `a` gathered into `work`; mm_rs: `partial` reduce-scattered into `c`).
RunResult run_seq_coll_gemm(const FusedRunSpec& spec) {
  const FusedOp op = spec.algo->op;
  const bool ag = op == FusedOp::kAgMm;
  validate_fused(op, spec.shape, spec.world, spec.dtype);  // before the sizes below are used
  const FusedBuffers fb = fused_buffers(op, spec.shape, spec.world, spec.dtype);
  const std::size_t bytes = ag ? fb.gathered : fb.partial;  // nccl-tests size of the collective
  const AutoChoice choice = auto_rule(ag ? Op::kAllGather : Op::kReduceScatter, bytes, spec.world, spec.dtype);
  const AlgoInfo& coll = *choice.algo;
  SYMM_REQUIRE(coll.kind == EntryKind::kDeviceProgram, ErrorCode::kInternal, coll.id + " is not an SM program");
  const int blocks = coll.default_blocks(bytes, spec.world);
  const std::size_t count = coll.count(bytes, spec.dtype, spec.world);
  detail::FusedHarness hx;
  hx.coll_scratch = coll.scratch_bytes(bytes, spec.world);
  return with_type(spec.dtype, [&]<class T>() {
    return detail::run_fused_with(
        spec,
        [&](SimHost& h, const FusedArgs& f) {
          CollArgs c;
          c.in = ag ? f.a : f.partial;
          c.out = ag ? f.work : f.c;
          c.scratch = f.coll_scratch;
          c.count = count;
          c.op = ReduceOp::kSum;
          const std::size_t kl = ag ? f.k : f.k / std::size_t(h.world());
          const GemmArgs g = gemm_args(ag ? f.work : f.a, f.b, ag ? f.c : f.partial, f.m, f.n, kl, DTypeOf<T>::value);
          if (!ag) h.gemm(kMainStream, g);
          with_program(coll, [&]<class P>() { h.template launch<P, T>(kMainStream, c, blocks); });
          if (ag) h.gemm(kMainStream, g);
        },
        hx);
  });
}

}  // namespace

namespace {

// Multiply-adds per second of Eigen's GEMM on this host in float (the simulated GEMMs) and double
// (the reference), measured once per process: the best of three small products (~10 ms in all).
std::pair<double, double> gemm_rates() {
  static const std::pair<double, double> rates = [] {
    auto rate = []<class S>() {
      using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      const Eigen::Index n = 256;
      const Mat a = Mat::Constant(n, 2 * n, S(0.5)), b = Mat::Constant(2 * n, n, S(0.25));
      Mat c(n, n);
      double best = std::numeric_limits<double>::infinity();
      for (int i = 0; i < 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        c.noalias() = a * b;
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      volatile S sink = c(0, 0);
      (void)sink;
      return double(n) * double(2 * n) * double(n) / std::max(best, 1e-9);
    };
    return std::make_pair(rate.template operator()<float>(), rate.template operator()<double>());
  }();
  return rates;
}

}  // namespace

DataCost fused_data_cost(const FusedRunSpec& spec) {
  SYMM_REQUIRE(spec.algo, ErrorCode::kInvalidArgument, "no fused algorithm given");
  DataCost c;
  if (spec.timing_only) return c;
  const FusedOp op = spec.algo->op;
  const MatShape& s = spec.shape;
  const int w = spec.world;
  validate_fused(op, s, w, spec.dtype);
  const FusedBuffers fb = fused_buffers(op, s, w, spec.dtype);
  const double m = double(s.m), n = double(s.n), k = double(s.k), kl = op == FusedOp::kAgMm ? k : k / w;
  const std::size_t rows = s.m / std::size_t(w);
  const double picked =
      double(sample_rows(s.m, rows, s.n * s.k, spec.check_macs ? spec.check_macs : kFusedCheckMacs).size());
  const double heap = double(fb.a + fb.b + fb.c + fb.partial) + double(op == FusedOp::kAgMm ? fb.gathered : fb.scratch);
  // Heaps; A and B in float64; the reference rows (and their A rows); the largest GEMM's fp32
  // copies of its operands (one GEMM at a time: the simulator runs on one thread).
  c.bytes = w * heap + (m * k + k * n) * 8 + picked * (n + k) * 8 + (m * kl + kl * n + m * n) * 4;
  const auto [fp32, fp64] = gemm_rates();
  // Every rank's GEMMs (ag_mm: M x N x K each; mm_rs: M x N x K/world), their operands converted
  // to fp32 and back (half as much again: B once per chunk's GEMM), the reference rows, and drawing the inputs (~20 ns
  // an element: a hash, a rounding, a store; then each rank's copy).
  c.seconds = 1.5 * w * m * n * kl / fp32 + picked * n * k / fp64 + 20e-9 * (m * k + k * n) * 2;
  // More calls: each runs and is checked again; a rank's heap may be kept for a slower rank's check.
  if (spec.calls > 1) {
    c.seconds *= spec.calls;
    c.bytes += w * heap;
  }
  return c;
}

RunResult run_fused(const FusedRunSpec& spec) {
  SYMM_REQUIRE(spec.algo, ErrorCode::kInvalidArgument, "no fused algorithm given");
  if (spec.algo->index >= 0) return with_fused_plan(*spec.algo, [&]<class P>() { return run_fused_plan<P>(spec); });
  // The baselines (fused_baselines()) are compositions of the harness, not plans.
  const std::string id = spec.algo->id;
  if (id == "cublaslt") return run_gemm_alone(spec);
  if (id == "seq_coll_gemm") return run_seq_coll_gemm(spec);
  if (id == "tile_gemm") return run_tile_gemm_alone(spec);
  fail(ErrorCode::kInvalidArgument, "unknown fused algorithm '" + id + "'");
}

}  // namespace symm::sim
