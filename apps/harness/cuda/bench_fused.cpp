// The fused-operation bench (bench_fused.h).
#include "apps/harness/cuda/bench_fused.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <memory>
#include <type_traits>

#include "apps/harness/cuda/bench_common.h"
#include "apps/harness/cuda/bench_fused_ref.h"
#include "apps/harness/cuda/trace_out.h"
#include "backends/cuda/check.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/plan_exec.h"
#include "backends/cuda/runtime.h"
#include "backends/cuda/team.h"
#include "backends/cuda/team_run.h"
#include "backends/cuda/tile_fused.h"
#include "core/reference.h"
#include "core/result.h"

namespace symm::cuda {
namespace {

// One thing to measure: a fused algorithm or a baseline.
struct Case {
  const FusedAlgo* algo = nullptr;  // nullptr: a baseline
  bool nccl = false;                // baseline: with the collective (nccl_cublaslt) or the matmul alone
  bool tile = false;                // baseline: the matmul alone as the TileGemm program (tile_fused.h)
  std::string name() const { return algo ? algo->id : tile ? "tile_gemm" : nccl ? "nccl_cublaslt" : "cublaslt"; }
};

// Device buffers of one (op, shape, dtype): symmetric ones in the heap, plain ones PlainBuffers
// (bench_common.h: registered with NCCL where there is a communicator).

class FusedBench {
 public:
  FusedBench(const FusedBenchOptions& o, Runtime& rt, int skip_rank)
      : o_(o),
        rt_(rt),
        skip_rank_(skip_rank),
        exec_(rt.handle(), rt.stream(), o.streams, 512),
        gemm_(1, rt.handle().gpu_ranks),
        timer_(rt, o.iters) {
    // A rank of its own process that times out on a plan's flag releases its stuck waits before the
    // NCCL abort, which would wait for them (plan_exec.h).
    exec_.release_on_failure(!rt.team());
    set_team_lockstep(rt, exec_);
    machine_ = o.machine.empty() ? rt.machine() : o.machine;
    csv_.open(rt, o.csv, csv_header());
  }
  int failures() const { return failures_; }
  void close_csv() { csv_.close(); }

  void print_header() {
    if (team()) print_team_header(rt_);
    if (rt_.rank() != 0) return;
    std::printf("# symmcoll bench (fused), backend cuda, machine %s, world %d, device %s, git %s, streams %d\n",
                machine_.c_str(), rt_.world(), rt_.device_name().c_str(), git_sha(), exec_.streams());
    std::printf(
        "# times: per call, max over ranks of each rank's median / p10 / p90; err_ref: max relative error "
        "per row vs float64 (-1: not computed); err_base: vs nccl_cublaslt's result\n");
    print_team_lockstep(rt_);
    std::printf("%-6s %-27s %-5s %6s %6s %6s %5s %10s %10s %10s %8s %9s %9s\n", "op", "algo", "type", "M", "N", "K",
                "graph", "time_us", "p10_us", "p90_us", "TFLOPS", "err_ref", "err_base");
    std::fflush(stdout);
  }

  void run_shape(FusedOp op, DType t, const MatShape& s, const std::vector<const FusedAlgo*>& algos) {
    with_fp16_types(t, [&]<class T>() { run_typed<T>(op, t, s, algos); });
  }

 private:
  template <class F>
  static void with_fp16_types(DType t, F&& f) {
    if (t == DType::kBF16) return f.template operator()<bf16>();
    if (t == DType::kFP16) return f.template operator()<fp16>();
    fail(ErrorCode::kInvalidArgument, "fused ops run bf16 and fp16 only");
  }

  // ---- one (op, dtype, shape) -----------------------------------------------------------
  template <class T>
  void run_typed(FusedOp op, DType t, const MatShape& s, const std::vector<const FusedAlgo*>& algos) {
    const int w = rt_.world(), me = rt_.rank();
    const bool ag = op == FusedOp::kAgMm;
    const std::size_t rows = s.m / std::size_t(w), kl = ag ? s.k : s.k / std::size_t(w);
    const FusedBuffers fb = fused_buffers(op, s, w, t);
    // Symmetric: ag_mm's shard and gathered A; mm_rs's scratch. Plain: the rest.
    char* heap = rt_.heap();
    const FusedHeapLayout sym = fused_symmetric_layout(op, fb);
    void* sym_a = ag ? heap + sym.a : nullptr;
    void* work = heap + sym.work;
    ncclComm_t nc = rt_.comm();
    PlainBuffer a_plain(fb.a, nc), b(fb.b, nc), c(fb.c, nc), partial(ag ? 0 : fb.partial, nc);
    PlainBuffer base_full(ag ? fb.gathered : fb.partial, nc), base_c(fb.c, nc);  // the baselines' own buffers
    const void* a_dev = ag ? sym_a : a_plain.get();

    // Inputs: A from (seed, rank); B from (seed+1, 0) for ag_mm (replicated), (seed+1, rank) for mm_rs.
    const uint64_t seed = next_seed_++ * 2 + 1;
    const std::size_t a_count = fb.a / sizeof(T), b_count = fb.b / sizeof(T), c_count = fb.c / sizeof(T);
    const std::vector<T> a_host = make_input<T>(seed, me, a_count);
    const std::vector<T> b_host = make_input<T>(seed + 1, ag ? 0 : me, b_count);
    cudaStream_t st = rt_.stream();
    SYMM_CUDA_CHECK(cudaMemcpyAsync(const_cast<void*>(a_dev), a_host.data(), fb.a, cudaMemcpyHostToDevice, st));
    if (ag) SYMM_CUDA_CHECK(cudaMemcpyAsync(a_plain.get(), a_host.data(), fb.a, cudaMemcpyHostToDevice, st));
    // ag_mm: my slot of the gathered A holds my shard too, though no plan reads it there (they read
    // the shard): memory a diagnosis reads instead holds real values, not a constant whose products
    // draw less power (the GPUs run at their power limit in these GEMMs).
    if (ag)
      SYMM_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(work) + std::size_t(me) * fb.a, a_host.data(), fb.a,
                                      cudaMemcpyHostToDevice, st));
    SYMM_CUDA_CHECK(cudaMemcpyAsync(b.get(), b_host.data(), fb.b, cudaMemcpyHostToDevice, st));
    rt_.sync();

    FusedArgs f;
    f.a = a_dev;
    f.b = b.get();
    f.c = c.get();
    f.work = work;
    f.partial = partial.get();
    f.m = s.m, f.n = s.n, f.k = s.k;
    f.dtype = t;
    f.chunk_rows = o_.chunk_rows;
    f.blocks = o_.blocks;
    f.sms = sms_per_rank();  // the tile programs' persistent blocks: every rank sharing the GPU resident

    // The enqueue of each case, on the caller's stream.
    auto baseline = [&, ag](bool with_nccl) -> std::function<void()> {
      const ncclDataType_t nt = nccl_type(t);
      ncclComm_t comm = rt_.comm();
      if (ag) {
        const GemmArgs g = gemm_args(base_full.get(), b.get(), base_c.get(), s.m, s.n, kl, t);
        const void* shard = a_plain.get();
        void* full = base_full.get();
        const std::size_t count = a_count;
        return [=, this]() {
          if (with_nccl) SYMM_CUDA_CHECK(ncclAllGather(shard, full, count, nt, comm, st));
          gemm_.run(st, 0, g);
        };
      }
      const GemmArgs g = gemm_args(a_plain.get(), b.get(), base_full.get(), s.m, s.n, kl, t);
      void* part = base_full.get();
      void* out = base_c.get();
      const std::size_t count = c_count;
      return [=, this]() {
        gemm_.run(st, 0, g);
        if (with_nccl) SYMM_CUDA_CHECK(ncclReduceScatter(part, out, count, nt, ncclSum, comm, st));
      };
    };
    // The tile programs' matmul alone (core/algos/tile_gemm.h on the wgmma kernel): the product
    // cublaslt times, on the blocks the tile programs get.
    auto tile_baseline = [&, ag]() -> std::function<void()> {
      MatArgs m;
      m.a = ag ? base_full.get() : a_plain.get();
      m.b = b.get();
      m.c = ag ? base_c.get() : base_full.get();
      // Diagnosis only (timing; the baseline is never checked): SYMM_DEBUG_TILE_GEMM_C=heap stores
      // mm_rs's tile_gemm product into the symmetric scratch (the pull program's `work`) instead of
      // plain memory: does the symmetric heap slow the tiles' stores?
      static const bool into_heap = [] {
        const char* e = std::getenv("SYMM_DEBUG_TILE_GEMM_C");
        return e && std::string(e) == "heap";
      }();
      if (into_heap && !ag) m.c = f.work;
      m.m = uint32_t(s.m), m.n = uint32_t(s.n), m.k = uint32_t(kl);
      const int blocks = tile_blocks(f.sms, TileGrid(m.m, m.n).tiles());
      const DeviceHandle& h = rt_.handle();
      return [=, &h]() { launch_tile_program(TileProgram::kGemm, t, h, m, blocks, st); };
    };
    auto enqueue = [&](const Case& cs) -> std::function<void()> {
      if (cs.tile) return tile_baseline();
      if (!cs.algo) return baseline(cs.nccl);
      const FusedAlgo* al = cs.algo;
      if (skip_rank_ == rt_.rank()) return [] {};  // testing (SYMM_TEST_RANK_SKIP): never calls
      return [=, this]() {
        bench_step(rt_.rank(), "enqueue");
        exec_.enqueue_fused(*al, f);
        bench_step(rt_.rank(), "enqueued");
      };
    };
    auto out_of = [&](const Case& cs) { return cs.algo ? c.get() : base_c.get(); };
    // What a rank is doing, for a timeout's message (Runtime::set_context): "mm_rs
    // mm_rs.gemm_ce_acc bf16 M 16384 N 1792 K 4096, checked call".
    auto where = [&](const Case& cs, const std::string& what) {
      return std::string(fused_op_name(op)) + " " + cs.name() + " " + dtype_name(t) + " M " + std::to_string(s.m) +
             " N " + std::to_string(s.n) + " K " + std::to_string(s.k) + ", " + what;
    };

    // The reference (float64) of this rank's C, when small enough.
    std::vector<double> want;
    const double macs = double(s.m) * double(s.n) * double(s.k) / (ag ? 1.0 : double(w));
    if (o_.check && macs <= o_.ref_max) want = fused_reference_c<T>(op, s, seed, w, me);

    std::vector<Case> cases;
    // A team has no NCCL: its check answer comes from peer copies and cuBLASLt (team_answer).
    if ((o_.baselines || o_.check) && !team()) cases.push_back(Case{nullptr, true});
    if (o_.baselines) cases.push_back(Case{nullptr, false});
    if (o_.baselines && has_tile_program(algos)) cases.push_back(Case{nullptr, false, true});
    for (const FusedAlgo* a : algos) {
      // A device program that spins for its peers beside a GEMM cannot be kept resident when ranks
      // share a GPU: another rank's GEMM may hold the SMs its blocks need while ours spin (found on
      // an H200: ag_mm.st_bulk_gemm's all-gather timed out at 4 and 8 ranks on one GPU). Decided
      // for the whole team: a rank alone on its GPU skips it too, or its call would wait for peers
      // that never make theirs (3 ranks over 2 GPUs timed out so on 2x H100 and 2x H200).
      if (max_ranks_per_gpu() > 1 && std::string(a->id) == "ag_mm.st_bulk_gemm") {
        if (me == 0)
          std::printf(
              "# skip %s: its SM all-gather spins beside the GEMMs, and with up to %d ranks on one GPU "
              "another rank's GEMM may hold the SMs its blocks need\n",
              a->id, max_ranks_per_gpu());
        continue;
      }
      if (!graph_ok(Case{a, false}) && me == 0)
        std::printf(
            "# %s: no CUDA graph with %d ranks on one GPU (eager only): its kernel spins on the flags its peers' "
            "copies write, and the team's one graph does not promise those copies run beside it (at 4 ranks, "
            "12 chunks each, a replay never ended on an H200)\n",
            a->id, rt_.handle().gpu_ranks);
      cases.push_back(Case{a, false});
    }

    std::vector<double> base_answer;
    if (o_.check && team())
      base_answer = team_answer<T>(op, s, fb, a_plain.get(), b.get(), base_full.get(), base_c.get());
    // Every fused case's GEMMs once on every rank, before any rank enqueues a flag wait: cuBLASLt
    // loads a kernel's module on its first launch, and that load waits for the whole context
    // (GemmRunner::prime). Before the poisoned checked calls, which overwrite what this writes.
    rt_.set_context(std::string(fused_op_name(op)) + " priming the plans' GEMMs");
    // (Testing: SYMM_TEST_NO_GEMM_PRIME=1 leaves the GEMMs unprimed.)
    static const bool prime = std::getenv("SYMM_TEST_NO_GEMM_PRIME") == nullptr;
    for (const Case& cs : cases)
      if (cs.algo && prime) exec_.prime_fused(*cs.algo, f);
    if (team()) rt_.barrier();
    const double bound = matmul_err_bound(t, w, !ag);
    // The cases to time once every case is checked (FusedBenchOptions::passes).
    struct Timed {
      ResultRow row;
      double err[2];
      double flops;
      Case cs;
      int calls;
      std::vector<Stats> st[2];  // per pass, graph (0) and eager (1)
    };
    std::vector<Timed> timed;
    for (const Case& cs : cases) {
      ResultRow row;
      row.backend = "cuda";
      row.machine = machine_;
      row.world = w;
      row.op = fused_op_name(op);
      row.algo = cs.name();
      row.dtype = dtype_name(t);
      row.bytes = ag ? fb.gathered : fb.partial;  // the collective's nccl-tests size
      row.git_sha = git_sha();
      row.m = s.m, row.n = s.n, row.k = s.k;
      double err[2] = {-1, -1};  // vs reference, vs nccl_cublaslt
      // The matmul alone has no C, but ag_mm's tile_gemm computes C from the gathered A: checked.
      const bool checkable = o_.check && (!(cs.algo == nullptr && !cs.nccl) || (cs.tile && ag));
      if (checkable) {
        const std::size_t out_rows = ag ? s.m : rows;
        auto measure = [&](const std::vector<double>& got) {
          if (!want.empty()) err[0] = std::max(err[0], max_row_rel_err(got, want, out_rows, s.n));
          if (cs.algo && !base_answer.empty())
            err[1] = std::max(err[1], max_row_rel_err(got, base_answer, out_rows, s.n));
        };
        rt_.set_context(where(cs, "checked call"));
        const std::vector<double> got = run_once<T>(enqueue(cs), out_of(cs), c_count);
        measure(got);
        if (cs.algo == nullptr && !cs.tile) base_answer = got;
        if (o_.replays > 0 && cs.algo && graph_ok(cs)) {
          rt_.set_context(where(cs, "graph of 1 call replayed " + std::to_string(o_.replays) + " times"));
          measure(run_replays<T>(enqueue(cs), out_of(cs), c_count));
        }
        reduce_max(err, 2);
        const bool bad =
            (!want.empty() && !(err[0] <= bound)) || (cs.algo && !base_answer.empty() && !(err[1] <= 2 * bound));
        if (bad) {
          ++failures_;
          if (me == 0)
            std::printf(
                "FAIL %s %s %s M=%zu N=%zu K=%zu: max row rel err %.3g vs reference, %.3g vs nccl_cublaslt "
                "(bound %.3g)\n",
                row.op.c_str(), row.algo.c_str(), row.dtype.c_str(), s.m, s.n, s.k, err[0], err[1], bound);
        }
      } else {
        rt_.set_context(where(cs, "untimed first call"));
        if (team()) rt_.barrier();  // every rank's buffers made before any rank launches
        enqueue(cs)();              // one eager call first: GEMM plans and kernels load outside any capture
        sync_all(true);
      }
      row.max_rel_err = err[0] >= 0 ? err[0] : err[1];
      if (!cs.algo && !o_.baselines) continue;  // run for its answer only
      const double flops = 2.0 * macs;
      if (!o_.timing) {
        emit(row, err, flops);
        continue;
      }
      const int calls = o_.calls > 0 ? o_.calls : flops < 2e11 ? 20 : 5;
      timed.push_back(Timed{row, {err[0], err[1]}, flops, cs, calls, {}});
    }
    for (int pass = 0; pass < o_.passes; ++pass)
      for (Timed& x : timed)
        for (int mode = 0; mode < 2; ++mode) {
          const bool graph = mode == 0;
          if ((graph && !o_.graph) || (!graph && !o_.eager) || (graph && !graph_ok(x.cs))) continue;
          // A team's eager fused plans: one call per sample (bench.cpp says why).
          const int n = !graph && team() && x.cs.algo ? 1 : x.calls;
          rt_.set_context(where(x.cs, "timing pass " + std::to_string(pass + 1) + ", " + std::to_string(o_.warmup) +
                                          "+" + std::to_string(o_.iters) + " samples of " + std::to_string(n) +
                                          (graph ? " calls in a CUDA graph" : " eager calls")));
          x.st[mode].push_back(time_case(enqueue(x.cs), graph, n, x.cs.algo != nullptr));
        }
    for (Timed& x : timed) {
      ResultRow& row = x.row;
      for (int mode = 0; mode < 2; ++mode) {
        if (x.st[mode].empty()) continue;
        const Stats st2 = median_of_passes(x.st[mode]);
        row.graph = mode == 0;
        row.time_us_median = st2.median;
        row.time_us_p10 = st2.p10;
        row.time_us_p90 = st2.p90;
        row.algbw_GBps = double(row.bytes) / (st2.median * 1e3);
        row.busbw_GBps = (!x.cs.algo && !x.cs.nccl) ? 0.0 : row.algbw_GBps * double(w - 1) / double(w);
        if (!x.cs.algo && !x.cs.nccl) row.algbw_GBps = 0.0;  // no communication
        emit(row, x.err, x.flops);
      }
      if (!o_.trace_dir.empty() && x.cs.algo)
        trace_case(rt_, exec_, o_.trace_dir, row.op, row.algo, row.dtype,
                   "M" + std::to_string(s.m) + "_N" + std::to_string(s.n) + "_K" + std::to_string(s.k), enqueue(x.cs),
                   o_.graph && graph_ok(x.cs), o_.eager, o_.trace_calls);
    }
  }

  // Each of median, p10 and p90 over the passes (one pass: its own).
  static Stats median_of_passes(const std::vector<Stats>& v) {
    auto med = [&](double Stats::*f) {
      std::vector<double> x;
      for (const Stats& s : v) x.push_back(s.*f);
      std::sort(x.begin(), x.end());
      const std::size_t n = x.size();
      return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
    };
    return Stats{med(&Stats::median), med(&Stats::p10), med(&Stats::p90)};
  }

  bool team() const { return rt_.team() != nullptr; }

  // SMs of this GPU over the ranks that share it (FusedArgs::sms), less 2 per rank when they share
  // it: a copy between two ranks of one GPU is a device-to-device copy that may need an SM, and
  // the tile programs' blocks (one per SM) spin until those copies land (ag_mm.ce_tile_gemm timed
  // out at 2 ranks on an H200 with every SM taken: experiments/results/h200x1/tile_fused).
  // Whether case cs may run in a CUDA graph here. Not a plan whose kernel spins on host-plan flags
  // (written by its peers' copy-engine streams) in a team graph (team_graph.h: every rank of the
  // team on one GPU, one graph): the graph's edges order the flags' stream waits, not a kernel's
  // spin, so nothing makes the driver run the peers' copies beside the spinning kernel.
  bool graph_ok(const Case& cs) const { return !cs.algo || !team_graph(rt_) || !cs.algo->kernel_spins_on_copies; }

  // The same on every rank of a team, whatever its GPU holds: the tile programs' flag protocols
  // (mm_rs.tile_st_*_reduce) name a tile's block by the block count, which must agree across ranks.
  int sms_per_rank() const {
    int dev = 0, sms = 0;
    SYMM_CUDA_CHECK(cudaGetDevice(&dev));
    SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // Diagnosis only (timing runs): SYMM_DEBUG_FUSED_SMS=n caps them at n (the same on every rank).
    static const int cap = [] {
      const char* e = std::getenv("SYMM_DEBUG_FUSED_SMS");
      return e ? std::atoi(e) : 0;
    }();
    const int per = symm::sms_per_rank(sms, max_ranks_per_gpu());
    return cap > 0 && cap < per ? cap : per;
  }
  // The most ranks any GPU of this team holds (team.h's round robin over the visible GPUs); 1 for
  // ranks in processes of their own.
  int max_ranks_per_gpu() const { return std::max(rt_.handle().team_gpu_ranks, 1); }
  // Whether one of `algos` is a tile program (then the tile_gemm baseline row runs beside cublaslt).
  static bool has_tile_program(const std::vector<const FusedAlgo*>& algos) {
    for (const FusedAlgo* a : algos)
      if (std::string(a->id).find("tile") != std::string::npos) return true;
    return false;
  }

  // An in-process team's answer to check the fused plans against, in place of nccl_cublaslt's
  // (NCCL refuses ranks that share a GPU): ag_mm, every rank's shard copied from its plain buffer
  // (one address space) into `full`, then the cuBLASLt GEMM into `c`; mm_rs, every rank's GEMM
  // of its partial product into `full`, then this rank's rows of every rank's partial summed on
  // the host in float64. Meetings order it: no rank reads a peer's buffer before the peer has
  // written it, or before the peer is done with it. Not timed (no row): a check only.
  template <class T>
  std::vector<double> team_answer(FusedOp op, const MatShape& s, const FusedBuffers& fb, void* a, void* b, void* full,
                                  void* c) {
    const int w = rt_.world(), me = rt_.rank();
    const std::size_t rows = s.m / std::size_t(w);
    cudaStream_t st = rt_.stream();
    rt_.set_context(std::string(fused_op_name(op)) + " the team's check answer");
    std::vector<double> answer;
    if (op == FusedOp::kAgMm) {
      rt_.sync();  // this rank's shard is in `a`
      const std::vector<void*> shards = rt_.team()->all_gather(me, a);
      for (int r = 0; r < w; ++r)
        SYMM_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(full) + std::size_t(r) * fb.a, shards[std::size_t(r)], fb.a,
                                        cudaMemcpyDefault, st));
      gemm_.run(st, 0, gemm_args(full, b, c, s.m, s.n, s.k, DType(s_dtype<T>())));
      answer = download<T>(c, fb.c / sizeof(T));
    } else {
      const std::size_t kl = s.k / std::size_t(w);
      gemm_.run(st, 0, gemm_args(a, b, full, s.m, s.n, kl, DType(s_dtype<T>())));
      rt_.sync();  // this rank's partial product is in `full`
      const std::vector<void*> partials = rt_.team()->all_gather(me, full);
      const std::size_t n = rows * s.n, off = std::size_t(me) * n * sizeof(T);
      answer.assign(n, 0.0);
      std::vector<T> mine(n);
      for (int r = 0; r < w; ++r) {
        SYMM_CUDA_CHECK(cudaMemcpyAsync(mine.data(), static_cast<const char*>(partials[std::size_t(r)]) + off,
                                        n * sizeof(T), cudaMemcpyDefault, st));
        rt_.sync();
        for (std::size_t i = 0; i < n; ++i) answer[i] += double(to_float(mine[i]));
      }
    }
    rt_.barrier();  // every rank has read what it needed of the others' buffers
    return answer;
  }

  template <class T>
  static constexpr DType s_dtype() {
    return std::is_same_v<T, bf16> ? DType::kBF16 : DType::kFP16;
  }

  void sync_all(bool plan) {
    bench_step(rt_.rank(), "wait_main");
    if (plan) exec_.wait_main(o_.plan_timeout_s, rt_.context().empty() ? "fused plan" : rt_.context());
    bench_step(rt_.rank(), "sync");
    rt_.sync();
    bench_step(rt_.rank(), "synced");
  }

  template <class T>
  std::vector<double> download(const void* out, std::size_t count) {
    std::vector<T> got(count);
    SYMM_CUDA_CHECK(cudaMemcpyAsync(got.data(), out, count * sizeof(T), cudaMemcpyDeviceToHost, rt_.stream()));
    rt_.sync();
    std::vector<double> d(count);
    for (std::size_t i = 0; i < count; ++i) d[i] = double(to_float(got[i]));
    return d;
  }

  template <class T>
  std::vector<double> run_once(const std::function<void()>& one, void* out, std::size_t count) {
    SYMM_CUDA_CHECK(cudaMemsetAsync(out, 0xFF, count * sizeof(T), rt_.stream()));  // NaN in bf16 and fp16
    rt_.barrier();
    one();
    sync_all(true);
    return download<T>(out, count);
  }

  // Consumed flags must leave every replay of a one-call graph right.
  template <class T>
  std::vector<double> run_replays(const std::function<void()>& one, void* out, std::size_t count) {
    SYMM_CUDA_CHECK(cudaMemsetAsync(out, 0xFF, count * sizeof(T), rt_.stream()));
    rt_.barrier();
    // A team whose ranks share a GPU: one graph of every rank's call, replayed by rank 0 (team_graph.h).
    ReplayGraph g(rt_, one, 1);
    if (team()) rt_.barrier();  // no rank replays into a peer still instantiating its graph
    for (int i = 0; i < o_.replays; ++i) g.launch();
    g.join();
    sync_all(true);
    return download<T>(out, count);
  }

  Stats time_case(const std::function<void()>& one, bool graph, int calls, bool plan) {
    return timer_.time(one, graph, calls, o_.warmup, [&] { sync_all(plan); });
  }

  void reduce_max(double* v, int n) { timer_.reduce_max(v, n); }

  void emit(const ResultRow& r, const double* err, double flops) {
    if (rt_.rank() != 0) return;
    const double tflops = r.time_us_median > 0 ? flops / (r.time_us_median * 1e6) : 0.0;
    std::printf("%-6s %-27s %-5s %6zu %6zu %6zu %5d %10.2f %10.2f %10.2f %8.1f %9.2g %9.2g\n", r.op.c_str(),
                r.algo.c_str(), r.dtype.c_str(), r.m, r.n, r.k, int(r.graph), r.time_us_median, r.time_us_p10,
                r.time_us_p90, tflops, err[0], err[1]);
    std::fflush(stdout);
    csv_.row(csv_line(r));
  }

  const FusedBenchOptions& o_;
  Runtime& rt_;
  int skip_rank_ = -1;  // testing: this rank never launches the fused algorithms (SYMM_TEST_RANK_SKIP)
  PlanExec exec_;
  GemmRunner gemm_;  // the baselines' matmul, on the caller's stream
  SampleTimer timer_;
  std::string machine_;
  ResultsCsv csv_;
  uint64_t next_seed_ = 0;
  int failures_ = 0;
};

}  // namespace

int run_fused_bench(const FusedBenchOptions& o) {
  const RankEnv env = rank_env(process_env());
  const CommandRanks ranks = command_ranks(o.world, env.world, "bench --backend cuda");
  if (o.shapes.empty()) fail(ErrorCode::kInvalidArgument, "bench --op ag_mm/mm_rs needs --shape or --n/--k, and --m");
  check_streams(o.streams, kMinFusedStreams);
  // Every shape, dtype and algorithm is checked before a GPU is touched.
  std::vector<std::vector<const FusedAlgo*>> per_op;
  std::size_t heap = 1u << 20;
  for (FusedOp op : o.ops) {
    per_op.push_back(parse_fused_algos(op, o.algos));
    for (DType t : o.dtypes)
      for (const MatShape& s : o.shapes) {
        validate_fused(op, s, ranks.world, t);
        const FusedBuffers b = fused_buffers(op, s, ranks.world, t);
        heap = std::max(heap, fused_symmetric_layout(op, b).total);
      }
  }
  heap = (heap + (4u << 20) - 1) / (4u << 20) * (4u << 20);
  // Testing (the GPU suite's no-hang cases): SYMM_TEST_RANK_SKIP=R, rank R never launches the fused
  // algorithms (their peers' waits must end, bounded, naming what they wait for); the other overrides
  // are the collectives' bench's.
  const TestRankOverrides test = test_rank_overrides(process_env());
  if (test.algo_rank >= 0 || test.size_rank >= 0 || test.kill_rank >= 0)
    fail(ErrorCode::kInvalidArgument,
         "bench --op ag_mm/mm_rs takes only SYMM_TEST_RANK_SKIP of the SYMM_TEST_RANK_* variables");
  auto rank_main = [&](Runtime& rt) -> int {
    FusedBench b(o, rt, test.skip_rank);
    if (rt.team()) rt.barrier();  // every rank's executor and GEMM workspaces made before any launch
    b.print_header();
    for (std::size_t i = 0; i < o.ops.size(); ++i)
      for (DType t : o.dtypes)
        for (const MatShape& s : o.shapes) b.run_shape(o.ops[i], t, s, per_op[i]);
    rt.barrier();
    b.close_csv();
    if (rt.rank() == 0) std::printf("# %d check failure(s)\n", b.failures());
    return b.failures() ? 1 : 0;
  };
  // Timeout 0: the default bound (SYMM_WAIT_TIMEOUT_S) at the device clock.
  if (ranks.team) return run_in_process(ranks.world, heap, 0, rank_main);
  Runtime rt(env, heap, 0);
  try {
    return rank_main(rt);
  } catch (...) {
    bench_step(rt.rank(), "aborting");
    rt.abort();  // a peer may wait in NCCL for this rank: wait for nothing more
    bench_step(rt.rank(), "aborted");
    throw;
  }
}

}  // namespace symm::cuda
