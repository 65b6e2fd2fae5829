// Calibration rows: their CSV, and the simulator's predictions of them (the programs of
// core/calib_programs.h run through sim::run, timing-only). The fit is in fit.cpp.
#include "apps/harness/sim/calib.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "backends/sim/testing.h"
#include "core/calib_programs.h"
#include "core/fused.h"

namespace symm::sim {

void write_calibration(std::ostream& out, const CalibTable& t) {
  for (const std::string& c : t.comments) out << "#" << c << "\n";
  // A team's rows say so, as calibrate --world N's file does, so that they read back as a team's.
  const bool team_rows = std::any_of(t.rows.begin(), t.rows.end(), [](const CalibRow& r) { return r.team; });
  const bool said = std::any_of(t.comments.begin(), t.comments.end(),
                                [](const std::string& c) { return c.starts_with(calib::kTeamComment); });
  if (team_rows && !said) out << "#" << calib::kTeamComment << ": the rows of ranks sharing a GPU\n";
  out << "bench,world,blocks,graph,x,time_us,m,n,k\n";
  char buf[256];
  for (const CalibRow& r : t.rows) {
    std::snprintf(buf, sizeof buf, "%s,%d,%d,%d,%.17g,%.17g,%d,%d,%d\n", r.bench.c_str(), r.world, r.blocks,
                  int(r.graph), r.x, r.time_us, r.m, r.n, r.k);
    out << buf;
  }
}

namespace {

// A CSV field as a number, all of it (std::invalid_argument otherwise).
double number(const std::string& s) {
  std::size_t used = 0;
  const double v = std::stod(s, &used);
  if (used != s.size()) throw std::invalid_argument(s);
  return v;
}

// `symmcoll-cuda gemm-bench`'s CSV (apps/harness/cuda/gemm_bench.h): one GPU, our tile GEMM
// (impl `tile`) beside cuBLASLt, each shape graph and eager. Its columns up to the median time.
constexpr const char* kGemmBenchHeader = "backend,machine,op,impl,dtype,M,N,K,graph,time_us_median";

// A gemm-bench row as a calibration row of world 1: impl `tile` in bf16 is `tile_gemm` (what the
// fit's mma keys come from, as calibrate's own tile_gemm rows); any other impl or type keeps its
// name (`gemm_bench_cublaslt`, `tile_gemm_fp16`), data only: cuBLASLt's fitted rows are `gemm`'s.
CalibRow gemm_bench_row(const std::vector<std::string>& f, const std::string& where) {
  CalibRow r;
  try {
    r.m = int(number(f[5])), r.n = int(number(f[6])), r.k = int(number(f[7]));
    r.graph = number(f[8]) != 0;
    r.time_us = number(f[9]);
  } catch (const std::exception&) {
    fail(ErrorCode::kInvalidArgument, where + ": a field of M, N, K, graph, time_us_median is not a number");
  }
  if (f[2] != "gemm") fail(ErrorCode::kInvalidArgument, where + ": op '" + f[2] + "', expected gemm");
  r.bench = (f[3] == "tile" ? std::string("tile_gemm") : "gemm_bench_" + f[3]) + (f[4] == "bf16" ? "" : "_" + f[4]);
  r.world = 1;
  r.x = 2.0 * r.m * r.n * double(r.k);
  if (!(r.time_us > 0) || r.m < 1 || r.n < 1 || r.k < 1)
    fail(ErrorCode::kInvalidArgument, where + ": time_us_median and M, N, K must be positive");
  return r;
}

}  // namespace

CalibTable read_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(ErrorCode::kIo, "cannot read calibration file '" + path + "'");
  CalibTable t;
  std::string line;
  int n = 0;
  bool header = false;
  std::size_t fields = 0;
  bool gemm_bench = false;
  bool team = false;  // calibrate --world N wrote it (backends: apps/harness/cuda/calibrate.cpp)
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      t.comments.push_back(line.substr(1));
      team = team || t.comments.back().starts_with(calib::kTeamComment);
      continue;
    }
    const std::string where = path + ":" + std::to_string(n);
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    if (!header) {
      if (line == "bench,world,blocks,graph,x,time_us,m,n,k")
        fields = 9;
      else if (line == "bench,world,blocks,graph,x,time_us")
        fields = 6;
      else if (line.starts_with(kGemmBenchHeader))
        fields = f.size(), gemm_bench = true;
      else
        fail(ErrorCode::kInvalidArgument, where +
                                              ": expected the header 'bench,world,blocks,graph,x,time_us,m,n,k' "
                                              "(or gemm-bench's '" +
                                              std::string(kGemmBenchHeader) + ",...')");
      if (gemm_bench) t.comments.push_back(" gemm-bench rows of " + path);
      header = true;
      continue;
    }
    if (f.size() != fields)
      fail(ErrorCode::kInvalidArgument,
           where + ": expected " + std::to_string(fields) + " fields, got " + std::to_string(f.size()));
    if (gemm_bench) {
      t.rows.push_back(gemm_bench_row(f, where));
      continue;
    }
    CalibRow r;
    r.bench = f[0];
    try {
      r.world = int(number(f[1]));
      r.blocks = int(number(f[2]));
      r.graph = number(f[3]) != 0;
      r.x = number(f[4]);
      r.time_us = number(f[5]);
      if (fields == 9) r.m = int(number(f[6])), r.n = int(number(f[7])), r.k = int(number(f[8]));
    } catch (const std::exception&) {
      fail(ErrorCode::kInvalidArgument, where + ": a field is not a number");
    }
    if (!(r.time_us > 0)) fail(ErrorCode::kInvalidArgument, where + ": time_us must be positive");
    r.team = team;
    t.rows.push_back(r);
  }
  if (!header) fail(ErrorCode::kInvalidArgument, path + ": no header line (bench,world,blocks,graph,x,time_us,m,n,k)");
  return t;
}

namespace {

// The programs run under a registry algorithm that only lends its buffer sizes (in = out =
// bytes) and limits: all_reduce.ld_reduce.
template <class Program>
// `pdl`: launched with programmatic dependent launch, as calibrate launches the launch, exchange,
// launch_busy and barrier_blocks rows (the bench's way); every other row without (calib.h).
double sim_time(const Machine& m, int world, std::size_t bytes, int blocks, bool graph, bool pdl = false) {
  RunSpec s;
  s.pdl = pdl;
  s.machine = m;
  s.world = world;
  s.algo = &find_algo("all_reduce.ld_reduce");
  s.dtype = DType::kBF16;
  s.bytes = bytes;
  s.blocks = blocks;
  s.graph = graph;
  s.timing_only = true;
  return run_program<Program>(s).time_us;
}

}  // namespace

double simulate_barrier_rounds(const Machine& m, int world, int blocks, int rounds, bool acq_rel, bool landing) {
  const std::size_t b = std::size_t(rounds) * kVecBytes;
  if (landing)
    return acq_rel ? sim_time<calib::BarrierLandingAcqRel>(m, world, b, blocks, true, true)
                   : sim_time<calib::BarrierLandingRelaxed>(m, world, b, blocks, true, true);
  return acq_rel ? sim_time<calib::BarrierRoundsAcqRel>(m, world, b, blocks, true, true)
                 : sim_time<calib::BarrierRoundsRelaxed>(m, world, b, blocks, true, true);
}

double simulate_fence_chain(const Machine& m, int world, int rounds, bool peer) {
  const std::size_t b = std::size_t(rounds) * calib::kLineBytes;
  return peer ? sim_time<calib::FenceChainPeer>(m, world, b, 1, true)
              : sim_time<calib::FenceChainLocal>(m, world, b, 1, true);
}

std::vector<CalibRow> simulate_calibration(const Machine& m, int world, const CalibPlan& plan) {
  using namespace calib;
  plan.check();
  std::vector<CalibRow> rows;
  auto add = [&](const char* bench, int blocks, bool graph, double x, double t) {
    rows.push_back(CalibRow{bench, world, blocks, graph, x, t, 0, 0, 0, m.team != 0});
  };
  add("device_gpus", 0, true, m.gpus, 1);
  add("device_sms", 0, true, m.sms, 1);
  add("device_copy_engines", 0, true, m.copy_engines, 1);
  if (m.l2_MB > 0) add("device_l2_bytes", 0, true, m.l2_MB * 1e6, 1);
  for (bool graph : {true, false}) add("launch", 1, graph, 0, sim_time<Empty>(m, world, kVecBytes, 1, graph, true));
  for (int n : plan.rounds) {
    const std::size_t b = std::size_t(n) * kVecBytes;
    add("pingpong_relaxed", 1, true, n, sim_time<PingPongRelaxed>(m, world, b, 1, true));
    add("pingpong_acqrel", 1, true, n, sim_time<PingPongAcqRel>(m, world, b, 1, true));
    add("pingpong_store", 1, true, n, sim_time<PingPongStore>(m, world, b, 1, true));
    add("pingpong_relaxed_flush", 1, true, n, sim_time<PingPongRelaxedFlush>(m, world, b, 1, true));
    add("load_chain", 1, true, n, sim_time<LoadChain>(m, world, b, 1, true));
    add("load_chain_lines", 1, true, n, sim_time<LoadChainLines>(m, world, std::size_t(n) * kLineBytes, 1, true));
    add("peer_copy_chain", 1, true, n, sim_time<PeerCopyChain>(m, world, std::size_t(n) * kCopyPieceBytes, 1, true));
    add("peer_copy_chain_all", 1, true, n,
        sim_time<PeerCopyChainAll>(m, world, std::size_t(n) * kCopyPieceBytes, 1, true));
    add("fence_chain_local", 1, true, n, simulate_fence_chain(m, world, n, false));
    add("fence_chain_peer", 1, true, n, simulate_fence_chain(m, world, n, true));
    add("exchange", 2, true, n, sim_time<Exchange>(m, world, b, 2, true, true));
    add("acquire_chain", 1, true, n, sim_time<AcquireChain>(m, world, b, 1, true));
    add("acquire_peer_flags", 1, true, n, sim_time<AcquirePeerFlags>(m, world, b, 1, true));
    add("local_reduce_chain", 1, true, n, sim_time<LocalReduceChain>(m, world, std::size_t(n) * kLineBytes, 1, true));
    add("peer_reduce_chain", 1, true, n, sim_time<PeerReduceChain>(m, world, std::size_t(n) * 2 * kLineBytes, 1, true));
    add("ll_unpack_chain", 1, true, n, sim_time<LlUnpackChain>(m, world, std::size_t(n) * kLlChainRound, 1, true));
    add("ll_reduce_chain", 1, true, n, sim_time<LlReduceChain>(m, world, std::size_t(n) * kLlChainRound, 1, true));
  }
  for (int n : plan.rounds) {
    if (n < 16) continue;
    const std::size_t b = std::size_t(n) * kVecBytes;
    for (bool graph : {true, false}) add("launch_busy", 1, graph, n, sim_time<LoadChain>(m, world, b, 1, graph, true));
    for (bool graph : {true, false}) add("exchange_busy", 2, graph, n, sim_time<Exchange>(m, world, b, 2, graph, true));
    for (bool graph : {true, false})
      add("barrier_busy", 1, graph, n, sim_time<BarrierLandingAcqRel>(m, world, b, 1, graph, true));
  }
  for (int blocks : plan.peer_blocks) {
    if (blocks > m.sms) continue;
    for (int n : plan.barrier_rounds) {
      add("barrier_blocks", blocks, true, n, simulate_barrier_rounds(m, world, blocks, n, true));
      add("barrier_blocks_relaxed", blocks, true, n, simulate_barrier_rounds(m, world, blocks, n, false));
    }
  }
  for (int n : plan.barrier_rounds) {
    add("barrier_landing", 1, true, n, simulate_barrier_rounds(m, world, 1, n, true, true));
    add("barrier_landing_relaxed", 1, true, n, simulate_barrier_rounds(m, world, 1, n, false, true));
  }
  for (int blocks : plan.peer_blocks) {
    if (blocks > m.sms) continue;
    for (double b : plan.small_bytes)
      add("copy_peer", blocks, true, b, sim_time<BulkCopy<Pattern::kPeer>>(m, world, std::size_t(b), blocks, true));
  }
  for (int blocks : plan.peer_blocks) {
    if (blocks > m.sms) continue;
    for (double b : plan.reduce_bytes)
      add("reduce_peers", blocks, true, b, sim_time<ReducePeers>(m, world, std::size_t(b), blocks, true));
  }
  const int all = std::min(m.sms, find_algo("all_reduce.ld_reduce").block_limit);
  for (double b : plan.big_bytes) {
    // Scatter / incast move (world-1) equal slices: x is what crosses rank 0's side.
    const std::size_t slice = std::size_t(b) / std::size_t(world - 1) / kVecBytes * kVecBytes;
    const double crossing = double(slice) * (world - 1);
    add("copy_scatter", all, true, crossing,
        sim_time<BulkCopy<Pattern::kScatter>>(m, world, std::size_t(b), all, true));
    add("copy_incast", all, true, crossing, sim_time<BulkCopy<Pattern::kIncast>>(m, world, std::size_t(b), all, true));
    add("copy_local", all, true, b, sim_time<BulkCopy<Pattern::kLocal>>(m, world, std::size_t(b), all, true));
  }
  for (double b : plan.l2_bytes)
    add("copy_local", all, true, b, sim_time<BulkCopy<Pattern::kLocal>>(m, world, std::size_t(b), all, true));
  // GEMM: the simulator's own, a one-GEMM host plan (the fused ops' `cublaslt` baseline on rank 0's
  // M x N x K, timing only, CUDA-graph launch): what a plan's gemm costs in gemm.cpp.
  const FusedAlgo* alone = find_fused_baseline(FusedOp::kAgMm, "cublaslt");
  const FusedAlgo* tiles = find_fused_baseline(FusedOp::kAgMm, "tile_gemm");
  auto gemm = [&](const char* bench, const CalibPlan::GemmShape& s, const FusedAlgo* algo = nullptr) {
    FusedRunSpec f;
    f.machine = m;
    f.world = 2;
    f.algo = algo ? algo : alone;
    f.shape.m = std::size_t(s.m), f.shape.n = std::size_t(s.n), f.shape.k = std::size_t(s.k);
    f.timing_only = true;
    // A plan's call pays one launch latency (its first kernel's, streams.cpp), as the measured
    // rows do: back-to-back GEMMs in one graph, one kernel launch each.
    add(bench, 0, true, 2.0 * s.m * s.n * double(s.k), run_fused(f).time_us);
    rows.back().m = s.m, rows.back().n = s.n, rows.back().k = s.k;
  };
  for (const CalibPlan::GemmShape& s : plan.gemm_fit_shapes()) gemm("gemm", s);
  for (const CalibPlan::GemmShape& s : plan.gemm_fused_shapes()) gemm("gemm_fused", s);
  // Our tile GEMM (the fused ops' tile_gemm baseline: the device program on mma_tile), at the
  // fit's shapes: what mma_TFLOPs and mma_tile_us are fitted from.
  for (const CalibPlan::GemmShape& s : plan.gemm_fit_shapes()) gemm("tile_gemm", s, tiles);
  // --rows: the others are dropped (predicting them all is cheap; measuring them is not).
  std::erase_if(rows, [&](const CalibRow& r) { return !plan.wants(r.bench); });
  return rows;
}

}  // namespace symm::sim
