// Matmul fused with communication: shape validation (core/fused.h), the float64 matmul
// reference and its per-row error (core/reference.h), and the four fused plans run by a small
// plan interpreter (plan_interp.h) at worlds {2,3,4,8} against the reference, including a
// mutant whose GEMMs do not wait for their chunk's flag.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "core/algos/ag_mm_ce_bulk_gemm.h"
#include "core/algos/ag_mm_ce_chunk_gemm.h"
#include "core/algos/mm_rs_gemm_ce_acc.h"
#include "core/algos/mm_rs_gemm_ce_ring_reduce.h"
#include "core/algos/mm_rs_gemm_st_chunk_reduce.h"
#include "core/dispatch.h"
#include "core/fused.h"
#include "core/reference.h"
#include "tests/core/plan_interp.h"
#include "tests/core/thrown.h"

namespace symm {
namespace {

MatShape shape(std::size_t m, std::size_t n, std::size_t k) { return MatShape{m, n, k, ""}; }

std::string why(FusedOp op, const MatShape& s, int world, DType t = DType::kBF16) {
  try {
    validate_fused(op, s, world, t);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "";
}

TEST(FusedShape, NamedShapes) {
  EXPECT_EQ(named_shape("8b").n, 1792u);
  EXPECT_EQ(named_shape("8B").k, 4096u);
  EXPECT_EQ(named_shape("70b").n, 3584u);
  EXPECT_EQ(named_shape("70b").k, 8192u);
  EXPECT_THROW(named_shape("13b"), Error);
}

TEST(FusedShape, TargetShapesPass) {
  for (int w = 2; w <= 8; w *= 2)
    for (std::size_t m : {4096u, 8192u, 16384u})
      for (const char* name : {"8b", "70b"}) {
        MatShape s = named_shape(name);
        s.m = m;
        EXPECT_EQ(why(FusedOp::kAgMm, s, w), "");
        EXPECT_EQ(why(FusedOp::kMmRs, s, w), "");
      }
  EXPECT_EQ(why(FusedOp::kAgMm, shape(24, 16, 32), 3), "");
}

TEST(FusedShape, BadShapesAreOneLineNamingTheOption) {
  EXPECT_NE(why(FusedOp::kAgMm, shape(4097, 1792, 4096), 2).find("--m 4097 is not divisible by the world size 2"),
            std::string::npos);
  EXPECT_NE(why(FusedOp::kMmRs, shape(4096, 1792, 4100), 8).find("--k 4100 is not divisible by the world size 8"),
            std::string::npos);
  EXPECT_EQ(why(FusedOp::kAgMm, shape(4096, 1792, 4100), 8).find("divisible"), std::string::npos);  // ag_mm: any K
  EXPECT_NE(why(FusedOp::kAgMm, shape(0, 1792, 4096), 2).find("--m must be positive"), std::string::npos);
  EXPECT_NE(why(FusedOp::kMmRs, shape(4096, 0, 4096), 2).find("--n must be positive"), std::string::npos);
  EXPECT_NE(why(FusedOp::kMmRs, shape(4096, 8, 0), 2).find("--k must be positive"), std::string::npos);
  EXPECT_NE(why(FusedOp::kAgMm, shape(std::size_t(1) << 21, 1792, 4096), 2).find("--m 2097152 is above"),
            std::string::npos);
  EXPECT_NE(why(FusedOp::kAgMm, shape(std::size_t(1) << 20, std::size_t(1) << 20, 8), 2).find("above the limit"),
            std::string::npos);
  EXPECT_NE(why(FusedOp::kAgMm, shape(4096, 1790, 4096), 2).find("--n 1790 is not a multiple of 8"), std::string::npos);
  EXPECT_NE(why(FusedOp::kMmRs, shape(4096, 1792, 24), 2).find("--k 24 / world is not a multiple of 8"),
            std::string::npos);
  EXPECT_NE(why(FusedOp::kAgMm, shape(4096, 1792, 4096), 2, DType::kFP32).find("--dtype fp32"), std::string::npos);
  for (const std::string& s : {why(FusedOp::kAgMm, shape(4097, 1792, 4096), 2), why(FusedOp::kAgMm, shape(0, 8, 8), 2)})
    EXPECT_EQ(s.find('\n'), std::string::npos);
}

TEST(FusedAlgos, ParseNamesAliasesAndAll) {
  EXPECT_EQ(parse_fused_algos(FusedOp::kAgMm, "all").size(), 4u);
  EXPECT_EQ(parse_fused_algos(FusedOp::kAgMm, "st")[0]->id, std::string("ag_mm.st_bulk_gemm"));
  EXPECT_EQ(parse_fused_algos(FusedOp::kMmRs, "ce")[0]->id, std::string("mm_rs.gemm_ce_ring_reduce"));
  EXPECT_EQ(parse_fused_algos(FusedOp::kMmRs, "ce_acc")[0]->id, std::string("mm_rs.gemm_ce_acc"));
  EXPECT_EQ(parse_fused_algos(FusedOp::kMmRs, "all").size(), 7u);
  EXPECT_EQ(parse_fused_algos(FusedOp::kAgMm, "tiles")[0]->id, std::string("ag_mm.ce_tile_gemm"));
  EXPECT_EQ(parse_fused_algos(FusedOp::kMmRs, "tiles")[0]->id, std::string("mm_rs.tile_st_ld_reduce"));
  EXPECT_EQ(parse_fused_algos(FusedOp::kMmRs, "tiles_push")[0]->id, std::string("mm_rs.tile_st_peer_reduce"));
  EXPECT_EQ(parse_fused_algos(FusedOp::kMmRs, "tiles_ce")[0]->id, std::string("mm_rs.gemm_ce_tile_acc"));
  EXPECT_EQ(parse_fused_algos(FusedOp::kMmRs, "tiles_acc")[0]->id, std::string("mm_rs.tile_st_peer_acc"));
  EXPECT_EQ(parse_fused_algos(FusedOp::kAgMm, "ce_bulk_gemm,ce")[1]->id, std::string("ag_mm.ce_chunk_gemm"));
  EXPECT_EQ(parse_fused_algos(FusedOp::kMmRs, "mm_rs.gemm_st_chunk_reduce,st").size(), 1u);
  EXPECT_THROW(parse_fused_algos(FusedOp::kAgMm, "st_chunk"), Error);
}

// One list (core/dispatch.h's FusedPlans) gives the table, and the dispatch both backends use finds
// every entry's own plan, by its Descriptor; a baseline is no plan.
TEST(FusedAlgos, TheTableIsTheDispatchList) {
  std::set<std::string> ids;
  for (const FusedAlgo& a : fused_algorithms()) {
    EXPECT_TRUE(ids.insert(a.id).second) << a.id;
    const Descriptor d = with_fused_plan(a, []<class P>() { return P::kDescriptor; });
    EXPECT_EQ(d.kind, EntryKind::kFusedPlan);
    EXPECT_EQ(std::string(fused_op_name(d.fused_op)) + "." + d.name, a.id);
    EXPECT_EQ(d.fused_op, a.op);
    EXPECT_EQ(std::string(d.alias), a.alias);
  }
  EXPECT_EQ(int(ids.size()), FusedPlans::kSize);
  for (const FusedAlgo& b : fused_baselines()) {
    EXPECT_EQ(b.index, -1) << b.id;
    EXPECT_NE(testing::thrown([&] { with_fused_plan(b, []<class P>() {}); }, ErrorCode::kInternal), "") << b.id;
  }
}

TEST(FusedAlgos, ChunkRows) {
  EXPECT_EQ(chunk_rows_for(8192, 0, 1024, 64), 1024u);
  EXPECT_EQ(chunk_rows_for(100, 0, 1024, 64), 100u);
  EXPECT_EQ(chunk_rows_for(8192, 16, 1024, 64), 128u);  // at most 64 chunks
  EXPECT_EQ(chunk_rows_for(8192, 3000, 1024, 64), 3000u);
}

TEST(MatmulReference, SmallProductAndRowError) {
  // [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50]
  const std::vector<double> c = reference_matmul({1, 2, 3, 4}, {5, 6, 7, 8}, 2, 2, 2);
  EXPECT_EQ(c, (std::vector<double>{19, 22, 43, 50}));
  // 2 x 3 times 3 x 1
  EXPECT_EQ(reference_matmul({1, 0, 2, 0, 1, 1}, {1, 2, 3}, 2, 1, 3), (std::vector<double>{7, 5}));
  // Row-wise scale: an error of 1 on a row whose largest element is 50 is 0.02.
  EXPECT_DOUBLE_EQ(max_row_rel_err({19, 22, 43, 49}, c, 2, 2), 1.0 / 50);
  EXPECT_DOUBLE_EQ(max_row_rel_err({19, 21, 43, 50}, c, 2, 2), 1.0 / 22);
  EXPECT_TRUE(std::isinf(max_row_rel_err({19, 22, 43, std::nan("")}, c, 2, 2)));
  EXPECT_TRUE(std::isinf(max_row_rel_err({19, 22}, c, 2, 2)));
}

// ---- the plans, interpreted -------------------------------------------------------------

float value(int rank, int which, std::size_t i) {
  uint32_t x = uint32_t(i * 2654435761u) ^ uint32_t(rank * 40503 + which * 977 + 12345);
  x ^= x >> 13, x *= 0x5bd1e995u, x ^= x >> 15;
  return float(int(x % 2001) - 1000) / 1000.0f;
}

// Runs `Plan` on a world of `n` ranks (twice, to exercise consumed flags) and returns the worst
// per-row error against the float64 reference over ranks (inf on poison).
template <class Plan>
double run_fused(FusedOp op, int n, const MatShape& s, std::size_t chunk_rows, testing::Policy pol, bool mutant = false,
                 int calls = 2) {
  using T = bf16;
  const FusedBuffers fb = fused_buffers(op, s, n, DType::kBF16);
  const FusedHeapLayout l = fused_heap_layout(op, fb);
  testing::PlanWorld w(n, l.total, 3);
  w.drop_data_waits = mutant;
  const bool ag = op == FusedOp::kAgMm;
  const std::size_t rows = s.m / std::size_t(n), kl = ag ? s.k : s.k / std::size_t(n);
  for (int r = 0; r < n; ++r) {
    T* a = reinterpret_cast<T*>(w.heap(r) + l.a);
    T* b = reinterpret_cast<T*>(w.heap(r) + l.b);
    for (std::size_t i = 0; i < fb.a / sizeof(T); ++i) a[i] = from_float<T>(value(r, 0, i));
    for (std::size_t i = 0; i < fb.b / sizeof(T); ++i) b[i] = from_float<T>(value(ag ? 0 : r, 1, i));
  }
  for (int call = 0; call < calls; ++call) {
    for (int r = 0; r < n; ++r) {  // poison every output and staging buffer: NaN in bf16
      std::memset(w.heap(r) + l.c, 0xFF, fb.c);
      std::memset(w.heap(r) + l.work, 0xFF, std::max(fb.gathered, fb.scratch));
      std::memset(w.heap(r) + l.partial, 0xFF, fb.partial);
    }
    for (int r = 0; r < n; ++r) {
      testing::PlanWorld::Host h(w, r);
      FusedArgs f;
      f.a = w.heap(r) + l.a;
      f.b = w.heap(r) + l.b;
      f.c = w.heap(r) + l.c;
      f.work = w.heap(r) + l.work;
      f.partial = w.heap(r) + l.partial;
      f.m = s.m, f.n = s.n, f.k = s.k;
      f.chunk_rows = chunk_rows;
      f.blocks = 2;
      // The host verbs' contract, the end of the call included (core/plan.h).
      checked_call(h, [&](auto& checked) { Plan::template run<T>(checked, f); });
    }
    w.run(pol);
  }
  // The reference from the same rounded inputs.
  auto in = [&](int r, int which, std::size_t count) {
    std::vector<double> v(count);
    for (std::size_t i = 0; i < count; ++i) v[i] = double(to_float(from_float<T>(value(r, which, i))));
    return v;
  };
  double worst = 0;
  std::vector<double> want;
  if (ag) {
    std::vector<double> a;
    for (int r = 0; r < n; ++r) {
      const std::vector<double> v = in(r, 0, rows * s.k);
      a.insert(a.end(), v.begin(), v.end());
    }
    want = reference_matmul(a, in(0, 1, s.k * s.n), s.m, s.n, s.k);
  }
  for (int me = 0; me < n; ++me) {
    if (!ag) {
      want.assign(rows * s.n, 0.0);
      for (int r = 0; r < n; ++r) {
        const std::vector<double> a = in(r, 0, s.m * kl);
        const std::vector<double> mine(a.begin() + std::ptrdiff_t(std::size_t(me) * rows * kl),
                                       a.begin() + std::ptrdiff_t(std::size_t(me + 1) * rows * kl));
        const std::vector<double> p = reference_matmul(mine, in(r, 1, kl * s.n), rows, s.n, kl);
        for (std::size_t i = 0; i < want.size(); ++i) want[i] += p[i];
      }
    }
    const T* c = reinterpret_cast<const T*>(w.heap(me) + l.c);
    std::vector<double> got(fb.c / sizeof(T));
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = double(to_float(c[i]));
    worst = std::max(worst, max_row_rel_err(got, want, ag ? s.m : rows, s.n));
  }
  return worst;
}

MatShape small(int n) { return shape(std::size_t(24 * n), 16, std::size_t(16 * n)); }

template <class Plan>
void check_all_worlds(FusedOp op) {
  for (int n : {2, 3, 4, 8})
    for (std::size_t chunk : {std::size_t(0), std::size_t(8), std::size_t(5)})
      for (auto pol : {testing::Policy::kMainFirst, testing::Policy::kSideFirst}) {
        const double bound = matmul_err_bound(DType::kBF16, n, op == FusedOp::kMmRs);
        const double err = run_fused<Plan>(op, n, small(n), chunk, pol);
        EXPECT_LE(err, bound) << "world " << n << " chunk rows " << chunk << " policy " << int(pol);
      }
}

TEST(FusedPlans, AgMmCeChunkGemm) { check_all_worlds<AgMmCeChunkGemm>(FusedOp::kAgMm); }
TEST(FusedPlans, AgMmCeBulkGemm) { check_all_worlds<AgMmCeBulkGemm>(FusedOp::kAgMm); }
TEST(FusedPlans, MmRsGemmCeRingReduce) { check_all_worlds<MmRsGemmCeRingReduce>(FusedOp::kMmRs); }
TEST(FusedPlans, MmRsGemmCeAcc) { check_all_worlds<MmRsGemmCeAcc>(FusedOp::kMmRs); }
TEST(FusedPlans, MmRsGemmStChunkReduce) { check_all_worlds<MmRsGemmStChunkReduce>(FusedOp::kMmRs); }

// A GEMM (or reduce) that starts before its chunk's flag reads bytes not yet landed (poison):
// caught by one of the two schedules (compute first catches the GEMMs that read gathered rows;
// side streams first catches mm_rs.st's reducer, which runs on a side stream).
template <class Plan>
double mutant_error(FusedOp op, int n) {
  double worst = 0;
  for (auto pol : {testing::Policy::kMainFirst, testing::Policy::kSideFirst})
    worst = std::max(worst, run_fused<Plan>(op, n, small(n), 8, pol, /*mutant=*/true, /*calls=*/1));
  return worst;
}

TEST(FusedPlans, MutantWithoutDataWaitsIsCaught) {
  for (int n : {2, 4}) {
    EXPECT_GT(mutant_error<AgMmCeChunkGemm>(FusedOp::kAgMm, n), 1.0);
    EXPECT_GT(mutant_error<AgMmCeBulkGemm>(FusedOp::kAgMm, n), 1.0);
    EXPECT_GT(mutant_error<MmRsGemmCeRingReduce>(FusedOp::kMmRs, n), 1.0);
    EXPECT_GT(mutant_error<MmRsGemmCeAcc>(FusedOp::kMmRs, n), 1.0);
    EXPECT_GT(mutant_error<MmRsGemmStChunkReduce>(FusedOp::kMmRs, n), 1.0);
  }
}

// A rank's share of its GPU's SMs for the persistent tile programs: all of them alone, an equal
// share less 2 in a team (every rank's grid resident at once), at least 1.
TEST(Fused, SmsPerRankSharesTheGpu) {
  EXPECT_EQ(sms_per_rank(132, 1), 132);
  EXPECT_EQ(sms_per_rank(132, 0), 132);
  EXPECT_EQ(sms_per_rank(132, 2), 64);
  EXPECT_EQ(sms_per_rank(132, 4), 31);
  EXPECT_EQ(sms_per_rank(4, 8), 1);
  for (int ranks = 2; ranks <= 8; ++ranks) EXPECT_LE(ranks * sms_per_rank(132, ranks), 132) << ranks;
}

}  // namespace
}  // namespace symm
