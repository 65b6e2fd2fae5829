// symmcoll calibrate --backend cuda (calibrate.h): every microbenchmark on this host's GPUs.
// Each row's time is per call, as the bench measures collectives: a CUDA graph of `calls`
// back-to-back calls (or `calls` eager launches) between two events, the median of kIters such
// samples, the maximum over ranks. Every rank runs the same sequence; waits are bounded by the
// runtime's timeout (SYMM_WAIT_TIMEOUT_S), which Runtime::sync reports as an error.
#include "apps/harness/cuda/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>
#include <vector>

#include "apps/harness/cuda/bench_common.h"
#include "apps/harness/cuda/host_ops_probe.h"
#include "apps/harness/cuda/plan_wait_probe.h"
#include "apps/harness/cuda/trace_out.h"
#include "backends/cuda/check.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/plan_exec.h"
#include "backends/cuda/runtime.h"
#include "backends/cuda/team.h"
#include "backends/cuda/team_run.h"
#include "backends/cuda/tile_gemm.h"
#include "core/calib_plan.h"
#include "core/output_file.h"
#include "core/result.h"

namespace symm::cuda {
namespace {

constexpr int kIters = 15, kWarmup = 3;

class Calibrator {
 public:
  Calibrator(Runtime& rt, std::size_t half, const calib::CalibPlan& plan)
      : rt_(rt), half_(half), plan_(plan), timer_(rt, kIters) {}

  // One row (rank 0 keeps it): the per-call time of `one`, repeated `calls` times (the median
  // of kIters samples, the maximum over ranks). Not measured where --rows leaves it out.
  void row(const char* bench, int blocks, bool graph, double x, const std::function<void()>& one, int calls, int m = 0,
           int n = 0, int k = 0) {
    if (!plan_.wants(bench)) return;
    const double t = timer_.time(one, graph, calls, kWarmup, [&] { rt_.sync(); }).median;
    measured_row(bench, blocks, graph, x, t, m, n, k);
  }
  // A row whose time was measured elsewhere (rank 0's own value).
  void measured_row(const char* bench, int blocks, bool graph, double x, double t, int m, int n, int k) {
    if (!plan_.wants(bench)) return;
    if (!std::string_view(bench).starts_with("device_")) ++timed_;
    if (rt_.rank() != 0) return;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s,%d,%d,%d,%.17g,%.6f,%d,%d,%d\n", bench, rt_.world(), blocks, int(graph), x, t, m,
                  n, k);
    out_ += buf;
    std::printf("%s", buf);
    std::fflush(stdout);
  }
  void device_row(const char* bench, int value) { measured_row(bench, 0, true, value, 1.0, 0, 0, 0); }
  // A calibration program on `blocks` blocks over `bytes` of in (heap[0, half)) and out.
  std::function<void()> program(CalibProgram p, std::size_t bytes, int blocks) {
    CollArgs a;
    a.in = rt_.heap();
    a.out = rt_.heap() + half_;
    a.count = bytes / sizeof(bf16);
    const DeviceHandle h = rt_.handle();
    cudaStream_t s = rt_.stream();
    const VerbTraceBuf* trace = &rt_.verb_trace();  // set only while a call is traced (calibrate --trace)
    return [=]() { launch_calib(p, h, a, blocks, s, *trace); };
  }

  const std::string& rows() const { return out_; }
  const calib::CalibPlan& plan() const { return plan_; }
  int timed() const { return timed_; }  // rows written besides the device rows

 private:
  Runtime& rt_;
  std::size_t half_;
  const calib::CalibPlan& plan_;
  int timed_ = 0;
  SampleTimer timer_;
  std::string out_;
};

int calls_for(double bytes) { return bytes <= (1 << 20) ? 50 : bytes <= (16 << 20) ? 10 : 3; }
// Calls per sample of a GEMM row, by its flops.
int calls_for_flops(double flops) { return flops >= 2e11 ? 3 : flops >= 2e10 ? 10 : 30; }

// Random bf16 in [-1, 1) (not zeros: a GEMM of zeros draws less power and runs faster).
void fill_random(void* dst, std::size_t elems, uint64_t seed) {
  std::vector<uint16_t> h(elems);
  for (std::size_t i = 0; i < elems; ++i) {
    const float v = float(double(splitmix64(seed + i) >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    h[i] = uint16_t(u >> 16);
  }
  SYMM_CUDA_CHECK(cudaMemcpy(dst, h.data(), elems * 2, cudaMemcpyHostToDevice));
}

// A GEMM beside other work (eager, events on each stream, median of kConcIters): the GEMM on a
// second stream and an SM copy kernel of `blocks` blocks (or cudaMemcpyAsync within the GPU,
// blocks 0) on the main stream, launched one just after the other; each one's own time from the
// call's start (blocks -1: the GEMM alone). Rows:
//   conc_copy                                 the copy alone
//   conc_gemm / conc_copy_beside_gemm         the GEMM launched first: the GEMM's, the copy's time
//   conc_gemm_after_copy / conc_copy_before_gemm   the copy launched first: the GEMM's, the copy's
void concurrency_rows(Calibrator& c, Runtime& rt, const calib::CalibPlan& plan, GemmRunner& g, void* a, void* b,
                      void* cm) {
  if (!plan.wants_group("conc_")) return;
  constexpr int kConcIters = 15;
  const calib::CalibPlan::GemmShape sh = plan.conc_gemm;
  const GemmArgs ga = gemm_args(a, b, cm, std::size_t(sh.m), std::size_t(sh.n), std::size_t(sh.k), DType::kBF16);
  cudaStream_t main = rt.stream(), side = nullptr;
  SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t e0, eg, ec;
  SYMM_CUDA_CHECK(cudaEventCreate(&e0));
  SYMM_CUDA_CHECK(cudaEventCreate(&eg));
  SYMM_CUDA_CHECK(cudaEventCreate(&ec));
  const std::size_t bytes = std::size_t(plan.conc_copy_bytes);
  CollArgs ca;
  ca.in = rt.heap();
  ca.out = rt.heap() + bytes;
  ca.count = bytes / sizeof(bf16);
  const DeviceHandle h = rt.handle();
  // One setting: gemm? copy kind (blocks > 0: SM copy, 0: memcpy, -1: none); which goes first.
  auto measure = [&](bool gemm, int blocks, bool gemm_first, double& t_gemm, double& t_copy) {
    std::vector<double> tg, tc;
    auto copy = [&]() {
      if (blocks > 0)
        launch_calib(CalibProgram::kCopyLocal, h, ca, blocks, main);
      else if (blocks == 0)
        SYMM_CUDA_CHECK(cudaMemcpyAsync(ca.out, ca.in, bytes, cudaMemcpyDeviceToDevice, main));
      SYMM_CUDA_CHECK(cudaEventRecord(ec, main));
    };
    for (int i = 0; i < kConcIters + 2; ++i) {
      SYMM_CUDA_CHECK(cudaEventRecord(e0, main));
      SYMM_CUDA_CHECK(cudaStreamWaitEvent(side, e0, 0));
      if (!gemm_first) copy();
      if (gemm) g.run(side, 0, ga);
      SYMM_CUDA_CHECK(cudaEventRecord(eg, side));
      if (gemm_first) copy();
      SYMM_CUDA_CHECK(cudaStreamWaitEvent(main, eg, 0));
      rt.sync();
      float ms_g = 0, ms_c = 0;
      SYMM_CUDA_CHECK(cudaEventElapsedTime(&ms_g, e0, eg));
      SYMM_CUDA_CHECK(cudaEventElapsedTime(&ms_c, e0, ec));
      if (i >= 2) tg.push_back(ms_g * 1e3), tc.push_back(ms_c * 1e3);
    }
    std::sort(tg.begin(), tg.end());
    std::sort(tc.begin(), tc.end());
    t_gemm = tg[tg.size() / 2];
    t_copy = tc[tc.size() / 2];
  };
  const double flops = 2.0 * sh.m * sh.n * double(sh.k);
  double tg = 0, tc = 0;
  measure(true, -1, true, tg, tc);
  c.measured_row("conc_gemm", -1, false, flops, tg, sh.m, sh.n, sh.k);
  std::vector<int> kinds = plan.conc_blocks;
  kinds.push_back(0);
  for (int blocks : kinds) {
    measure(false, blocks, true, tg, tc);
    c.measured_row("conc_copy", blocks, false, double(bytes), tc, 0, 0, 0);  // the copy alone
    measure(true, blocks, true, tg, tc);
    c.measured_row("conc_gemm", blocks, false, flops, tg, sh.m, sh.n, sh.k);
    c.measured_row("conc_copy_beside_gemm", blocks, false, double(bytes), tc, sh.m, sh.n, sh.k);
    // The other order: the copy launched first, the GEMM just after it.
    measure(true, blocks, false, tg, tc);
    c.measured_row("conc_gemm_after_copy", blocks, false, flops, tg, sh.m, sh.n, sh.k);
    c.measured_row("conc_copy_before_gemm", blocks, false, double(bytes), tc, sh.m, sh.n, sh.k);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(eg);
  cudaEventDestroy(ec);
  cudaStreamDestroy(side);
}

// Host plans' stream flags, on any world (a rank writes its own pad): one call forks a side
// stream, writes a plan flag there (cuStreamWriteValue32, release) and waits for it on the main
// stream (cuStreamWaitValue32, then consumed: reset to 0), then joins. `plan_flag`: its time per
// call in a graph of 100 calls, replayed 18 times (the consumed flags must replay). Last, the
// watchdog probe: a wait for a flag nobody writes must end in a timeout naming rank, stream and
// slot; `plan_wait_timeout` (x = the bound in s) is how long the report took, and the flag is then
// written from another stream so the stuck stream drains.
void plan_rows(Calibrator& c, Runtime& rt) {
  if (!c.plan().wants_group("plan_")) return;
  PlanExec x(rt.handle(), rt.stream(), 2, 256);
  const int me = rt.rank();
  const uint32_t slot = pad::plan_flag(pad::kPlanData, 0, me);
  c.row(
      "plan_flag", 0, true, 0,
      [&x, me, slot]() {
        x.begin_call();
        x.write_flag(1, me, slot, 1);
        x.wait_flag(0, slot, 1);
        x.end_call();
      },
      100);
  rt.sync();
  constexpr int kFlagCalls = 100;
  static_assert(kFlagCalls % 2 == 0, "plan_flag_peers alternates two chunks' flags call by call");
  // A batch of n flag pairs (x = n): n writes on the side stream, then n waits on the main stream,
  // each run of consecutive flag operations one cuStreamBatchMemOp (plan_exec.cpp). Own flags
  // (`plan_flag_batch`: what a batch costs beyond one operation) and the flags of every peer
  // (`plan_flag_peers`, x = world - 1: each rank writes one flag into every peer's pad and waits
  // for every peer's, as the host plans' data flags; the ranks' skew included). Graph and eager.
  for (bool graph : {true, false}) {
    for (int n : {1, 2, 4, 8})
      c.row(
          "plan_flag_batch", 0, graph, n,
          [&x, me, n]() {
            x.begin_call();
            for (int i = 0; i < n; ++i) x.write_flag(1, me, pad::plan_flag(pad::kPlanData, 2 + i, me), 1);
            for (int i = 0; i < n; ++i) x.wait_flag(0, pad::plan_flag(pad::kPlanData, 2 + i, me), 1);
            x.end_call();
          },
          kFlagCalls);
    // Consecutive calls alternate between two chunks' flags: a rank may run one call ahead of a
    // peer that has not yet consumed its flag, never two (its next call needs that peer's flag,
    // which the peer writes only after its own previous call consumed everything). A graph of an
    // even number of calls ends on the chunk it started from, so its replays alternate too.
    const int w = rt.world();
    int parity = 0;
    if (w > 1)
      c.row(
          "plan_flag_peers", 0, graph, w - 1,
          [&x, me, w, &parity]() {
            const int k = 2 + (parity ^= 1);
            x.begin_call();
            for (int i = 1; i < w; ++i) x.write_flag(1, (me + i) % w, pad::plan_flag(pad::kPlanData, k, me), 1);
            for (int i = 1; i < w; ++i) x.wait_flag(0, pad::plan_flag(pad::kPlanData, k, (me + w - i) % w), 1);
            x.end_call();
          },
          kFlagCalls);
    rt.sync();
  }
  // host_plan_call: the host's time per call of plan_flag_batch's eager call at n = 1 (fork, a
  // flag write, its wait, join: six items through PlanExec), kFlagCalls calls back to back on the
  // host's clock, the median of kIters samples: beside the host_* rows (host_ops_probe.h: each API
  // call alone), what our plan executor adds per call.
  if (c.plan().wants("host_plan_call")) {
    std::vector<double> per_call;
    for (int i = 0; i < kIters + 1; ++i) {  // the first sample untimed
      const auto t0 = std::chrono::steady_clock::now();
      for (int j = 0; j < kFlagCalls; ++j) {
        x.begin_call();
        x.write_flag(1, me, pad::plan_flag(pad::kPlanData, 2, me), 1);
        x.wait_flag(0, pad::plan_flag(pad::kPlanData, 2, me), 1);
        x.end_call();
      }
      const auto t1 = std::chrono::steady_clock::now();
      rt.sync();
      if (i > 0) per_call.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kFlagCalls);
    }
    std::sort(per_call.begin(), per_call.end());
    c.measured_row("host_plan_call", 0, false, kFlagCalls, per_call[per_call.size() / 2], 0, 0, 0);
  }
  if (!c.plan().wants("plan_wait_timeout")) return;
  const uint32_t stuck = pad::plan_flag(pad::kPlanData, 1, me);
  const double bound = 1.0;
  std::printf("# plan wait probe: a wait nobody satisfies, bound %.1f s\n", bound);
  std::fflush(stdout);
  const PlanWaitReport p = probe_stuck_plan_wait(
      x, rt,
      [&] {
        x.begin_call();
        x.wait_flag(0, stuck, 7);
        x.end_call();
      },
      stuck, 7, bound, "calibrate: plan wait probe");
  const std::string& report = p.report;
  const double took = p.took_s;
  std::printf("# plan wait probe: reported after %.3f s, then released and drained: %s\n", took, report.c_str());
  std::fflush(stdout);
  const bool named = report.find("rank " + std::to_string(me)) != std::string::npos &&
                     report.find("stream 0") != std::string::npos && report.find("slot") != std::string::npos;
  if (rt.rank() == 0) std::printf("# plan wait probe (%s): %s\n", named ? "named" : "NOT NAMED", report.c_str());
  if (!named)
    fail(ErrorCode::kInternal, "the plan wait probe's report does not name rank, stream and slot: '" + report + "'");
  c.measured_row("plan_wait_timeout", 0, false, bound, took * 1e6, 0, 0, 0);
}

// GEMM (cuBLASLt bf16, fp32 accumulation), graph and eager: the fit's shapes (`gemm`) and the
// fused operations' shapes held out for validation (`gemm_fused`); then our tile GEMM at the fit's
// shapes (`tile_gemm`); buffers outside the heap.
void gemm_rows(Calibrator& c, Runtime& rt, const calib::CalibPlan& plan) {
  if (!plan.wants_group("gemm") && !plan.wants_group("tile_gemm") && !plan.wants_group("conc_")) return;
  using Shape = calib::CalibPlan::GemmShape;
  std::vector<std::pair<const char*, Shape>> shapes;
  for (const Shape& s : plan.gemm_fit_shapes()) shapes.push_back({"gemm", s});
  for (const Shape& s : plan.gemm_fused_shapes()) shapes.push_back({"gemm_fused", s});
  std::size_t ea = 0, eb = 0, ec = 0;
  for (const auto& [name, s] : shapes) {
    ea = std::max(ea, std::size_t(s.m) * std::size_t(s.k));
    eb = std::max(eb, std::size_t(s.k) * std::size_t(s.n));
    ec = std::max(ec, std::size_t(s.m) * std::size_t(s.n));
  }
  void *a = nullptr, *b = nullptr, *cm = nullptr;
  SYMM_CUDA_CHECK(cudaMalloc(&a, ea * 2));
  SYMM_CUDA_CHECK(cudaMalloc(&b, eb * 2));
  SYMM_CUDA_CHECK(cudaMalloc(&cm, ec * 2));
  fill_random(a, ea, 0x5eed0001ull + uint64_t(rt.rank()) * 0x9e3779b97f4a7c15ull);
  fill_random(b, eb, 0x5eed0002ull + uint64_t(rt.rank()) * 0x9e3779b97f4a7c15ull);
  GemmRunner g(1);
  cudaStream_t st = rt.stream();
  for (const auto& [name, s] : shapes) {
    const GemmArgs ga = gemm_args(a, b, cm, std::size_t(s.m), std::size_t(s.n), std::size_t(s.k), DType::kBF16);
    g.run(st, 0, ga);  // plans the shape outside the capture
    rt.sync();
    const double flops = 2.0 * s.m * s.n * double(s.k);
    const int calls = calls_for_flops(flops);
    for (bool graph : {true, false})
      c.row(
          name, 0, graph, flops, [&g, st, ga]() { g.run(st, 0, ga); }, calls, s.m, s.n, s.k);
  }
  // Our tile GEMM alone (the kernel the tile programs run: the cooperative schedule, one block per
  // SM), at the fit's shapes: the rows mma_TFLOPs and mma_tile_us come from (fit.cpp).
  TileGemmOptions coop;
  coop.schedule = tile::TileSchedule::kCoop;
  for (const Shape& s : plan.gemm_fit_shapes()) {
    const GemmArgs ga = gemm_args(a, b, cm, std::size_t(s.m), std::size_t(s.n), std::size_t(s.k), DType::kBF16);
    const double flops = 2.0 * s.m * s.n * double(s.k);
    const int calls = calls_for_flops(flops);
    for (bool graph : {true, false})
      c.row(
          "tile_gemm", 0, graph, flops, [st, ga, coop]() { tile_gemm(st, ga, coop); }, calls, s.m, s.n, s.k);
  }
  concurrency_rows(c, rt, plan, g, a, b, cm);
  SYMM_CUDA_CHECK(cudaFree(a));
  SYMM_CUDA_CHECK(cudaFree(b));
  SYMM_CUDA_CHECK(cudaFree(cm));
}

// The rows timed at every round count of the plan (x = rounds, loads, copies or reduces), each a
// program whose call moves round_bytes per round, on `blocks` blocks; peer: it needs a second rank;
// traced: calibrate --trace traces it (exchange, launched as the bench launches, is not).
struct RoundRow {
  const char* row;
  CalibProgram program;
  std::size_t round_bytes;
  int blocks;
  bool peer;
  bool traced;
};
constexpr RoundRow kRoundRows[] = {
    {"pingpong_relaxed", CalibProgram::kPingPongRelaxed, kVecBytes, 1, true, true},
    {"pingpong_acqrel", CalibProgram::kPingPongAcqRel, kVecBytes, 1, true, true},
    {"pingpong_store", CalibProgram::kPingPongStore, kVecBytes, 1, true, true},
    {"pingpong_relaxed_flush", CalibProgram::kPingPongRelaxedFlush, kVecBytes, 1, true, true},
    {"load_chain", CalibProgram::kLoadChain, kVecBytes, 1, true, true},
    {"load_chain_lines", CalibProgram::kLoadChainLines, calib::kLineBytes, 1, true, true},
    {"peer_copy_chain", CalibProgram::kPeerCopyChain, calib::kCopyPieceBytes, 1, true, true},
    {"peer_copy_chain_all", CalibProgram::kPeerCopyChainAll, calib::kCopyPieceBytes, 1, true, true},
    {"fence_chain_peer", CalibProgram::kFenceChainPeer, calib::kLineBytes, 1, true, true},
    {"exchange", CalibProgram::kExchangePdl, kVecBytes, 2, true, false},
    {"acquire_peer_flags", CalibProgram::kAcquirePeerFlags, kVecBytes, 1, true, true},
    {"peer_reduce_chain", CalibProgram::kPeerReduceChain, 2 * calib::kLineBytes, 1, true, true},
    // No peer: every world, one GPU too.
    {"acquire_chain", CalibProgram::kAcquireChain, kVecBytes, 1, false, true},  // a flag already set (data only)
    {"fence_chain_local", CalibProgram::kFenceChainLocal, calib::kLineBytes, 1, false, true},    // data only
    {"local_reduce_chain", CalibProgram::kLocalReduceChain, calib::kLineBytes, 1, false, true},  // local_load_us
    {"ll_unpack_chain", CalibProgram::kLlUnpackChain, calib::kLlChainRound, 1, false, true},     // ll_read_GBps
    {"ll_reduce_chain", CalibProgram::kLlReduceChain, calib::kLlChainRound, 1, false, true},     // data only
};

// calibrate --trace: the ping-pongs and chains at 16 rounds, each traced verb by verb (trace_out.h):
// what every round's fence, flag, acquire, load or reduce costs inside the kernel, beside the rows'
// time per round. Graph calls as the rows are timed (a team: eager, its graph being every rank's).
void trace_rows(Calibrator& c, Runtime& rt, const std::string& dir, int calls, bool peers) {
  constexpr int n = 16;
  std::string rounds = "n";  // appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "n" + ...
  rounds += std::to_string(n);
  for (const RoundRow& r : kRoundRows)
    if (r.traced && (peers || !r.peer))
      trace_program_case(rt, dir, "calibrate", r.row, "bf16", rounds,
                         c.program(r.program, std::size_t(n) * r.round_bytes, r.blocks), r.blocks,
                         /*graph=*/true, /*eager=*/rt.team() != nullptr, calls);
}

// One rank's calibration (a process of a launch, or a thread of a team).
int calibrate_rank(Runtime& rt, const calib::CalibPlan& plan, std::size_t half, const std::string& csv,
                   const std::string& command, const std::string& trace_dir, int trace_calls) {
  plan.check();
  const int me = rt.rank(), world = rt.world();
  const bool peers = world >= 2;
  Calibrator c(rt, half, plan);
  using P = CalibProgram;
  if (rt.team()) {
    print_team_header(rt);
    rt.barrier();  // every rank's set-up done before any rank launches
  }

  int gpus = 0, sms = 0, engines = 0, dev = 0;
  SYMM_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  SYMM_CUDA_CHECK(cudaGetDevice(&dev));
  SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&engines, cudaDevAttrAsyncEngineCount, dev));
  c.device_row("device_gpus", gpus);
  c.device_row("device_sms", sms);
  c.device_row("device_copy_engines", engines);
  int l2 = 0;
  SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  c.device_row("device_l2_bytes", l2);
  const int all = std::min(sms, kResidentBlocks);  // every block of a program resident

  // Launched as the bench launches device programs (programmatic dependent launch where ranks
  // have a GPU each), so launch_*_us are what a bench row pays.
  for (bool graph : {true, false}) c.row("launch", 1, graph, 0, c.program(P::kEmptyPdl, kVecBytes, 1), 200);
  for (int n : plan.rounds)
    for (const RoundRow& r : kRoundRows)
      if (peers || !r.peer)
        c.row(r.row, r.blocks, true, n, c.program(r.program, std::size_t(n) * r.round_bytes, r.blocks), 20);
  // Back-to-back calls of a kernel longer than the launch interval, launched as the bench launches
  // device programs, in a graph and eager: eager's extra cost per call (launch_eager_gap_us).
  for (int n : plan.rounds) {
    if (!peers || n < 16) continue;
    const std::size_t b = std::size_t(n) * kVecBytes;
    for (bool graph : {true, false}) c.row("launch_busy", 1, graph, n, c.program(P::kLoadChainPdl, b, 1), 20);
    // The same for a kernel that meets its peers every round (the exchange): a device program's
    // calls are coupled across ranks, each waiting for the peers' launches as well as its own.
    for (bool graph : {true, false}) c.row("exchange_busy", 2, graph, n, c.program(P::kExchangePdl, b, 2), 20);
    // And the collectives' own barrier (release signals, acquire waits), as every device program
    // starts: eager's extra cost for a call whose first round publishes with a release.
    for (bool graph : {true, false}) c.row("barrier_busy", 1, graph, n, c.program(P::kBarrierLanding, b, 1), 20);
  }
  // The barrier at every block count: what more blocks crossing it at once cost (fence_gap_us).
  for (int blocks : plan.peer_blocks) {
    if (blocks > all || !peers) continue;
    for (int n : plan.barrier_rounds) {
      const std::size_t b = std::size_t(n) * kVecBytes;
      c.row("barrier_blocks", blocks, true, n, c.program(P::kBarrierRounds, b, blocks), 20);
      c.row("barrier_blocks_relaxed", blocks, true, n, c.program(P::kBarrierRoundsRelaxed, b, blocks), 20);
    }
  }
  // The collectives' barrier itself (its waits in the order the flags land), one block: beside the
  // rows above, what a later wait costs apart from a later signal (wait_next_us, signal_next_us).
  for (int n : plan.barrier_rounds) {
    if (!peers) break;
    const std::size_t b = std::size_t(n) * kVecBytes;
    c.row("barrier_landing", 1, true, n, c.program(P::kBarrierLanding, b, 1), 20);
    c.row("barrier_landing_relaxed", 1, true, n, c.program(P::kBarrierLandingRelaxed, b, 1), 20);
  }
  for (int blocks : plan.peer_blocks) {
    if (blocks > all || !peers) continue;
    for (double b : plan.small_bytes)
      c.row("copy_peer", blocks, true, b, c.program(P::kCopyPeer, std::size_t(b), blocks), calls_for(b));
  }
  // A block's reduce of every rank's input (x = the bytes out; world loaded per byte out).
  for (int blocks : plan.peer_blocks) {
    if (blocks > all || !peers) continue;
    for (double b : plan.reduce_bytes)
      c.row("reduce_peers", blocks, true, b, c.program(P::kReducePeers, std::size_t(b), blocks), calls_for(b));
  }
  for (double b : plan.big_bytes) {
    if (peers) {
      const std::size_t slice = std::size_t(b) / std::size_t(world - 1) / kVecBytes * kVecBytes;
      const double crossing = double(slice) * (world - 1);
      c.row("copy_scatter", all, true, crossing, c.program(P::kCopyScatter, std::size_t(b), all), calls_for(b));
      c.row("copy_incast", all, true, crossing, c.program(P::kCopyIncast, std::size_t(b), all), calls_for(b));
    }
    c.row("copy_local", all, true, b, c.program(P::kCopyLocal, std::size_t(b), all), calls_for(b));
  }
  for (double b : plan.l2_bytes)
    c.row("copy_local", all, true, b, c.program(P::kCopyLocal, std::size_t(b), all), calls_for(b));
  // Copy engine: every rank copies into the next rank's heap (cudaMemcpyAsync on peer addresses
  // of the symmetric heap, as host plans do), all at once; and within its own heap (data only:
  // HBM to HBM, no key is fitted from it).
  for (double b : plan.small_bytes) {
    const char* src = rt.heap();
    cudaStream_t s = rt.stream();
    const std::size_t n = std::size_t(b);
    for (bool local : {false, true}) {
      if (!local && !peers) continue;
      char* dst = local ? rt.heap() + half : rt.handle().heap_peer[(me + 1) % world] + half;
      c.row(
          local ? "ce_copy_local" : "ce_copy", 0, true, b,
          [=]() { SYMM_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s)); }, calls_for(b));
    }
  }
  // What a link carries one way and both ways at once (data only, no key is fitted from them):
  // ce_link_oneway, rank 0's copy engine into rank 1 while the others idle; ce_link_twoway, every
  // rank into the next at once (an all-gather's load at world 2).
  for (double b : plan.link_bytes) {
    if (!peers) break;
    const char* src = rt.heap();
    cudaStream_t s = rt.stream();
    const std::size_t n = std::size_t(b);
    char* dst = rt.handle().heap_peer[(me + 1) % world] + half;
    c.row(
        "ce_link_oneway", 0, true, b,
        [=]() {
          if (me == 0) SYMM_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s));
        },
        calls_for(b));
    c.row(
        "ce_link_twoway", 0, true, b,
        [=]() { SYMM_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s)); }, calls_for(b));
  }
  // A team's ranks share the GPU: the GEMM and stream-flag rows of every rank run at once (each
  // rank's row is the max over ranks as everywhere), and the barriers keep them apart from the rows before.
  if (rt.team()) rt.barrier();
  gemm_rows(c, rt, plan);
  if (rt.team()) rt.barrier();
  plan_rows(c, rt);
  if (c.plan().wants_group("host_")) {  // host_ops_probe.h; rank 0's host, every rank probing at once
    if (rt.team()) rt.barrier();
    for (const HostOpRow& r : probe_host_ops(rt, c.program(P::kEmpty, kVecBytes, 1), kIters))
      c.measured_row(r.bench, 0, false, kHostOps, r.us, 0, 0, 0);
  }
  if (!trace_dir.empty()) trace_rows(c, rt, trace_dir, trace_calls, peers);
  rt.barrier();
  if (c.timed() == 0)
    fail(ErrorCode::kInvalidArgument,
         "--rows matched no row this run measures (apps/harness/sim/calib.h lists the rows)");
  if (me == 0) {
    std::ostringstream f;
    f << "#" << command << "\n# device " << rt.device_name() << ", git " << git_sha() << "\n";
    if (rt.team())
      f << "#" << calib::kTeamComment << ": " << world << " ranks, machine " << rt.machine()
        << " (one GPU's HBM and L2 between ranks, not NVLink)\n";
    f << "bench,world,blocks,graph,x,time_us,m,n,k\n" << c.rows();
    write_file(csv, f.str());  // whole or not at all; an error names the file and the reason
    std::printf("# calibrate: rows -> %s\n", csv.c_str());
  }
  return 0;
}

}  // namespace

int calibrate_main(const std::string& csv, const std::string& command, int team_world, const std::string& trace_dir,
                   int trace_calls, const std::vector<std::string>& only) {
  const RankEnv env = rank_env(process_env());
  // --world N: an in-process team; else the launcher's ranks, or one rank alone.
  const CommandRanks ranks =
      team_world ? command_ranks(team_world, env.world, "calibrate --backend cuda") : CommandRanks{env.world, false};
  // One rank (a single GPU) measures the per-GPU rows only: launch, local copies, GEMM.
  const bool peers = ranks.world >= 2;
  if (env.rank == 0) OutputFile::check(csv);  // a bad --csv fails now, not after the measurements
  calib::CalibPlan plan;
  plan.only = only;
  if (!peers && env.rank == 0)
    std::printf(
        "# calibrate: one rank: the rows that need a peer (ping-pongs, loads, peer and copy-engine peer "
        "copies) are skipped\n");
  const double biggest = std::max({*std::max_element(plan.big_bytes.begin(), plan.big_bytes.end()),
                                   *std::max_element(plan.small_bytes.begin(), plan.small_bytes.end()),
                                   *std::max_element(plan.link_bytes.begin(), plan.link_bytes.end())});
  const std::size_t half = std::size_t(biggest) + (4u << 20);
  // Timeout 0: the runtime converts SYMM_WAIT_TIMEOUT_S (or its default) at the device clock.
  if (ranks.team)
    return run_in_process(ranks.world, 2 * half, 0, [&](Runtime& rt) {
      return calibrate_rank(rt, plan, half, csv, command, trace_dir, trace_calls);
    });
  Runtime rt(env, 2 * half, 0);
  try {
    return calibrate_rank(rt, plan, half, csv, command, trace_dir, trace_calls);
  } catch (...) {
    rt.abort();  // a peer may wait in NCCL for this rank: wait for nothing more
    throw;
  }
}

}  // namespace symm::cuda
