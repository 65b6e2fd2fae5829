// symmcoll calibrate --backend cuda (calibrate.h): every microbenchmark on this host's GPUs.
// Each row's time is per call, as the bench measures collectives: a CUDA graph of `calls`
// back-to-back calls (or `calls` eager launches) between two events, the median of kIters such
// samples, the maximum over ranks. Every rank runs the same sequence; waits are bounded by the
// runtime's timeout (SYMM_WAIT_TIMEOUT_S), which Runtime::sync reports as an error.
#include "backends/cuda/calibrate.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/runtime.h"
#include "core/calib_plan.h"
#include "core/result.h"

namespace symm::cuda {
namespace {

constexpr int kIters = 7, kWarmup = 2;

class Calibrator {
 public:
  Calibrator(Runtime& rt, std::size_t half) : rt_(rt), half_(half) {
    SYMM_CUDA_CHECK(cudaMalloc(&stat_, sizeof(double)));
    events_.resize(2 * kIters);
    for (cudaEvent_t& e : events_) SYMM_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~Calibrator() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    cudaFree(stat_);
  }

  // One row (rank 0 keeps it): the per-call time of `one`, repeated `calls` times.
  void row(const char* bench, int blocks, bool graph, double x, const std::function<void()>& one, int calls) {
    const double t = time_per_call(one, calls, graph);
    if (rt_.rank() == 0) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s,%d,%d,%d,%.17g,%.6f\n", bench, rt_.world(), blocks, int(graph), x, t);
      out_ += buf;
      std::printf("%s", buf);
      std::fflush(stdout);
    }
  }
  void device_row(const char* bench, int value) {
    if (rt_.rank() == 0)
      out_ += std::string(bench) + "," + std::to_string(rt_.world()) + ",0,1," + std::to_string(value) + ",1.000000\n";
  }

  // A calibration program on `blocks` blocks over `bytes` of in (heap[0, half)) and out.
  std::function<void()> program(CalibProgram p, std::size_t bytes, int blocks) {
    CollArgs a;
    a.in = rt_.heap();
    a.out = rt_.heap() + half_;
    a.count = bytes / sizeof(bf16);
    const DeviceHandle h = rt_.handle();
    cudaStream_t s = rt_.stream();
    return [=]() { launch_calib(p, h, a, blocks, s); };
  }

  const std::string& rows() const { return out_; }

 private:
  double time_per_call(const std::function<void()>& one, int calls, bool graph) {
    cudaStream_t s = rt_.stream();
    cudaGraphExec_t exec = nullptr;
    if (graph) {
      cudaGraph_t g;
      SYMM_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int i = 0; i < calls; ++i) one();
      SYMM_CUDA_CHECK(cudaStreamEndCapture(s, &g));
      SYMM_CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
      SYMM_CUDA_CHECK(cudaGraphDestroy(g));
    }
    auto sample = [&]() {
      if (graph)
        SYMM_CUDA_CHECK(cudaGraphLaunch(exec, s));
      else
        for (int i = 0; i < calls; ++i) one();
    };
    for (int i = 0; i < kWarmup; ++i) sample();
    rt_.sync();
    rt_.barrier();
    for (int i = 0; i < kIters; ++i) {
      SYMM_CUDA_CHECK(cudaEventRecord(events_[std::size_t(2 * i)], s));
      sample();
      SYMM_CUDA_CHECK(cudaEventRecord(events_[std::size_t(2 * i + 1)], s));
    }
    rt_.sync();
    if (exec) SYMM_CUDA_CHECK(cudaGraphExecDestroy(exec));
    std::vector<double> us;
    for (int i = 0; i < kIters; ++i) {
      float ms = 0;
      SYMM_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[std::size_t(2 * i)], events_[std::size_t(2 * i + 1)]));
      us.push_back(double(ms) * 1e3 / calls);
    }
    std::sort(us.begin(), us.end());
    double v = us[us.size() / 2];
    SYMM_CUDA_CHECK(cudaMemcpyAsync(stat_, &v, sizeof v, cudaMemcpyHostToDevice, s));
    SYMM_CUDA_CHECK(ncclAllReduce(stat_, stat_, 1, ncclFloat64, ncclMax, rt_.comm(), s));
    SYMM_CUDA_CHECK(cudaMemcpyAsync(&v, stat_, sizeof v, cudaMemcpyDeviceToHost, s));
    rt_.sync();
    return v;
  }

  Runtime& rt_;
  std::size_t half_;
  double* stat_ = nullptr;
  std::vector<cudaEvent_t> events_;
  std::string out_;
};

int calls_for(double bytes) { return bytes <= (1 << 20) ? 50 : bytes <= (16 << 20) ? 10 : 3; }

}  // namespace

int calibrate_main(const std::string& csv, const std::string& command) {
  const RankEnv env = rank_env(process_env());
  if (env.world < 2)
    fail(ErrorCode::kInvalidArgument,
         "calibrate --backend cuda needs at least 2 ranks (WORLD_SIZE=" + std::to_string(env.world) +
             "): start it with 'symmcoll launch -n N -- symmcoll calibrate --backend cuda "
             "--csv FILE'");
  if (env.rank == 0) {
    std::ofstream probe(csv);
    if (!probe) fail(ErrorCode::kIo, "--csv: cannot write '" + csv + "'");
  }
  const calib::CalibPlan plan;
  const double biggest = std::max(*std::max_element(plan.big_bytes.begin(), plan.big_bytes.end()),
                                  *std::max_element(plan.small_bytes.begin(), plan.small_bytes.end()));
  const std::size_t half = std::size_t(biggest) + (4u << 20);
  // Timeout 0: the runtime converts SYMM_WAIT_TIMEOUT_S (or its default) at the device clock.
  Runtime rt(env, 2 * half, 0);
  const int me = rt.rank(), world = rt.world();
  Calibrator c(rt, half);
  using P = CalibProgram;

  int gpus = 0, sms = 0, engines = 0, dev = 0;
  SYMM_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  SYMM_CUDA_CHECK(cudaGetDevice(&dev));
  SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&engines, cudaDevAttrAsyncEngineCount, dev));
  c.device_row("device_gpus", gpus);
  c.device_row("device_sms", sms);
  c.device_row("device_copy_engines", engines);
  const int all = std::min(sms, kResidentBlocks);  // every block of a program resident

  for (bool graph : {true, false}) c.row("launch", 1, graph, 0, c.program(P::kEmpty, kVecBytes, 1), 200);
  for (int n : plan.rounds) {
    const std::size_t b = std::size_t(n) * kVecBytes;
    c.row("pingpong_relaxed", 1, true, n, c.program(P::kPingPongRelaxed, b, 1), 20);
    c.row("pingpong_acqrel", 1, true, n, c.program(P::kPingPongAcqRel, b, 1), 20);
    c.row("pingpong_store", 1, true, n, c.program(P::kPingPongStore, b, 1), 20);
    c.row("load_chain", 1, true, n, c.program(P::kLoadChain, b, 1), 20);
  }
  for (int blocks : plan.peer_blocks) {
    if (blocks > all) continue;
    for (double b : plan.small_bytes)
      c.row("copy_peer", blocks, true, b, c.program(P::kCopyPeer, std::size_t(b), blocks), calls_for(b));
  }
  for (double b : plan.big_bytes) {
    const std::size_t slice = std::size_t(b) / std::size_t(world - 1) / kVecBytes * kVecBytes;
    const double crossing = double(slice) * (world - 1);
    c.row("copy_scatter", all, true, crossing, c.program(P::kCopyScatter, std::size_t(b), all), calls_for(b));
    c.row("copy_incast", all, true, crossing, c.program(P::kCopyIncast, std::size_t(b), all), calls_for(b));
    c.row("copy_local", all, true, b, c.program(P::kCopyLocal, std::size_t(b), all), calls_for(b));
  }
  // Copy engine: every rank copies into the next rank's heap (cudaMemcpyAsync on peer addresses
  // of the symmetric heap, as host plans do), all at once.
  for (double b : plan.small_bytes) {
    char* dst = rt.handle().heap_peer[(me + 1) % world] + half;
    const char* src = rt.heap();
    cudaStream_t s = rt.stream();
    const std::size_t n = std::size_t(b);
    c.row(
        "ce_copy", 0, true, b, [=]() { SYMM_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s)); },
        calls_for(b));
  }
  // GEMM (cuBLASLt bf16, fp32 accumulation) on square shapes, buffers outside the heap.
  {
    const int biggest_n = *std::max_element(plan.gemm_sizes.begin(), plan.gemm_sizes.end());
    const std::size_t elems = std::size_t(biggest_n) * std::size_t(biggest_n);
    void *a = nullptr, *bm = nullptr, *cm = nullptr;
    SYMM_CUDA_CHECK(cudaMalloc(&a, elems * 2));
    SYMM_CUDA_CHECK(cudaMalloc(&bm, elems * 2));
    SYMM_CUDA_CHECK(cudaMalloc(&cm, elems * 2));
    SYMM_CUDA_CHECK(cudaMemset(a, 0, elems * 2));
    SYMM_CUDA_CHECK(cudaMemset(bm, 0, elems * 2));
    GemmRunner g(1);
    cudaStream_t s = rt.stream();
    for (int n : plan.gemm_sizes) {
      GemmArgs ga;
      ga.a = a;
      ga.b = bm;
      ga.c = cm;
      ga.m = ga.n = ga.k = n;
      ga.lda = ga.ldb = ga.ldc = std::size_t(n);
      ga.dtype = DType::kBF16;
      g.run(s, 0, ga);  // plans the shape outside the capture
      rt.sync();
      c.row(
          "gemm", 0, true, 2.0 * n * double(n) * n, [&g, s, ga]() { g.run(s, 0, ga); }, n >= 8192 ? 3 : 10);
    }
    cudaFree(a);
    cudaFree(bm);
    cudaFree(cm);
  }
  rt.barrier();
  if (me == 0) {
    std::ofstream f(csv);
    f << "#" << command << "\n# device " << rt.device_name() << ", git " << git_sha() << "\n";
    f << "bench,world,blocks,graph,x,time_us\n" << c.rows();
    if (!f) fail(ErrorCode::kIo, "writing '" + csv + "' failed");
    std::printf("# calibrate: rows -> %s\n", csv.c_str());
  }
  return 0;
}

}  // namespace symm::cuda
