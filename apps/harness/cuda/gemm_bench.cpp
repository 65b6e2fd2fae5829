// gemm-bench (gemm_bench.h): our tile GEMM against cuBLASLt on one GPU.
#include "apps/harness/cuda/gemm_bench.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

#include "backends/cuda/check.h"
#include "backends/cuda/gemm.h"
#include "backends/cuda/host_logic.h"
#include "core/output_file.h"
#include "core/reference.h"
#include "core/result.h"

namespace symm::cuda {
namespace {

struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(std::size_t bytes) { SYMM_CUDA_CHECK(cudaMalloc(&p, bytes)); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

double to_double(DType t, uint16_t bits) {
  return t == DType::kBF16 ? double(to_float(bf16{bits})) : double(to_float(fp16{bits}));
}

std::vector<uint16_t> download(const void* p, std::size_t count) {
  std::vector<uint16_t> h(count);
  SYMM_CUDA_CHECK(cudaMemcpy(h.data(), p, count * 2, cudaMemcpyDeviceToHost));
  return h;
}

struct Stats {
  double median = 0, p10 = 0, p90 = 0;
};
Stats stats(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return double(v[std::size_t(q * double(v.size() - 1) + 0.5)]); };
  return {at(0.5), at(0.1), at(0.9)};
}

// The sampled entries of C: rows and columns spread over the matrix, the last of each included.
std::vector<int> spread(int extent, int count) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(int((long long)(extent - 1) * i / std::max(1, count - 1)));
  v.push_back(extent - 1);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

struct Checked {
  double err_tile = -1, err_lt = -1, err_tile_vs_lt = -1, err_c_in = -1;
  bool ok = true;
  std::string why;
};

// One product of one shape and type, both implementations, checked as gemm_bench.h says.
Checked check_shape(GemmRunner& lt, const TileGemmOptions& topt, int m, int n, int k, DType t, uint64_t seed,
                    int samples) {
  const std::size_t mk = std::size_t(m) * k, kn = std::size_t(k) * n, mn = std::size_t(m) * n;
  DevBuf a(mk * 2), b(kn * 2), c(mn * 2), c2(mn * 2), cin(mn * 2);
  fill_uniform(nullptr, a.p, mk, t, seed * 3 + 1);
  fill_uniform(nullptr, b.p, kn, t, seed * 3 + 2);
  fill_uniform(nullptr, cin.p, mn, t, seed * 3 + 3);
  fill_bits16(nullptr, c.p, mn, 0xFFFF);  // NaN in bf16 and fp16: an unwritten element shows
  fill_bits16(nullptr, c2.p, mn, 0xFFFF);
  GemmArgs g = gemm_args(a.p, b.p, c.p, std::size_t(m), std::size_t(n), std::size_t(k), t);
  tile_gemm(nullptr, g, topt);
  GemmArgs gl = g;
  gl.c = c2.p;
  lt.run(nullptr, 0, gl);
  SYMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint16_t> hc = download(c.p, mn), hl = download(c2.p, mn), hb = download(b.p, kn);
  // C_in: the same product plus C_in, into a freshly poisoned C.
  fill_bits16(nullptr, c.p, mn, 0xFFFF);
  GemmArgs gi = g;
  gi.c_in = cin.p;
  tile_gemm(nullptr, gi, topt);
  SYMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint16_t> hci = download(c.p, mn), hcin = download(cin.p, mn);

  Checked r;
  auto fail_with = [&](const std::string& w) {
    if (r.ok) r.why = w;
    r.ok = false;
  };
  // Every element of ours written, and ours against cuBLASLt's whole C (row-relative).
  double worst = 0;
  for (int i = 0; i < m; ++i) {
    double row_max = 0, row_err = 0;
    for (int j = 0; j < n; ++j) {
      const std::size_t o = std::size_t(i) * n + j;
      const double x = to_double(t, hc[o]), y = to_double(t, hl[o]);
      if (!std::isfinite(x)) {
        fail_with("tile C[" + std::to_string(i) + "," + std::to_string(j) + "] not written or not finite");
        row_err = INFINITY;
        break;
      }
      row_max = std::max(row_max, std::fabs(y));
      row_err = std::max(row_err, std::fabs(x - y));
    }
    worst = std::max(worst, row_err / std::max(row_max, 1e-6));
  }
  r.err_tile_vs_lt = worst;
  // Sampled entries against float64.
  const std::vector<int> rows = spread(m, samples), cols = spread(n, samples);
  std::vector<double> bcol(std::size_t(k) * cols.size());
  for (std::size_t jj = 0; jj < cols.size(); ++jj)
    for (int kk = 0; kk < k; ++kk) bcol[jj * k + kk] = to_double(t, hb[std::size_t(kk) * n + cols[jj]]);
  std::vector<uint16_t> arow(k);
  double e_tile = 0, e_lt = 0, e_in = 0;
  for (int i : rows) {
    SYMM_CUDA_CHECK(cudaMemcpy(arow.data(), static_cast<const uint16_t*>(a.p) + std::size_t(i) * k, std::size_t(k) * 2,
                               cudaMemcpyDeviceToHost));
    std::vector<double> ad(k);
    for (int kk = 0; kk < k; ++kk) ad[kk] = to_double(t, arow[kk]);
    std::vector<double> ref(cols.size()), refi(cols.size());
    double row_max = 1e-6, row_max_i = 1e-6;
    for (std::size_t jj = 0; jj < cols.size(); ++jj) {
      double s = 0;
      const double* bc = &bcol[jj * k];
      for (int kk = 0; kk < k; ++kk) s += ad[kk] * bc[kk];
      ref[jj] = s;
      refi[jj] = s + to_double(t, hcin[std::size_t(i) * n + cols[jj]]);
      row_max = std::max(row_max, std::fabs(s));
      row_max_i = std::max(row_max_i, std::fabs(refi[jj]));
    }
    for (std::size_t jj = 0; jj < cols.size(); ++jj) {
      const std::size_t o = std::size_t(i) * n + cols[jj];
      const double x = to_double(t, hc[o]), y = to_double(t, hl[o]), z = to_double(t, hci[o]);
      e_tile = std::max(e_tile, std::isfinite(x) ? std::fabs(x - ref[jj]) / row_max : INFINITY);
      e_lt = std::max(e_lt, std::isfinite(y) ? std::fabs(y - ref[jj]) / row_max : INFINITY);
      e_in = std::max(e_in, std::isfinite(z) ? std::fabs(z - refi[jj]) / row_max_i : INFINITY);
    }
  }
  r.err_tile = e_tile, r.err_lt = e_lt, r.err_c_in = e_in;
  const double bound = matmul_err_bound(t, 1, false);
  if (!(e_tile <= bound))
    fail_with("tile vs float64: max rel err " + std::to_string(e_tile) + " > bound " + std::to_string(bound));
  if (!(e_in <= bound))
    fail_with("tile with C_in vs float64: max rel err " + std::to_string(e_in) + " > bound " + std::to_string(bound));
  if (!(worst <= 2 * bound))
    fail_with("tile vs cuBLASLt: max row-rel err " + std::to_string(worst) + " > 2 x bound " +
              std::to_string(2 * bound));
  return r;
}

}  // namespace

std::vector<std::array<int, 3>> parse_gemm_shapes(const std::string& spec) {
  if (spec == "fused") {
    std::vector<std::array<int, 3>> v;
    for (int m : {4096, 8192, 16384})
      for (auto nk : {std::array<int, 2>{1792, 4096}, {1792, 2048}, {3584, 8192}, {3584, 4096}})
        v.push_back({m, nk[0], nk[1]});
    return v;
  }
  std::vector<std::array<int, 3>> v;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ';')) {
    if (item.empty()) continue;
    std::array<int, 3> s{};
    char c1 = 0, c2 = 0;
    std::stringstream is(item);
    if (!(is >> s[0] >> c1 >> s[1] >> c2 >> s[2]) || c1 != ',' || c2 != ',' || !is.eof() || s[0] <= 0 || s[1] <= 0 ||
        s[2] <= 0)
      fail(ErrorCode::kInvalidArgument, "--shapes: '" + item + "' is not M,N,K with positive integers");
    v.push_back(s);
  }
  if (v.empty()) fail(ErrorCode::kInvalidArgument, "--shapes: no shape in '" + spec + "'");
  return v;
}

int run_gemm_bench(const GemmBenchOptions& o) {
  int dev = 0;
  SYMM_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  SYMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  const std::string machine = o.machine.empty() ? machine_name(prop.name, 1) : o.machine;
  std::printf("# gemm-bench on %s (%s, %d SMs, L2 %d MB), git %s, schedule %s\n", machine.c_str(), prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, git_sha(), tile::schedule_name(o.tile.schedule));
  std::unique_ptr<OutputFile> out;
  if (!o.csv.empty()) {
    out = std::make_unique<OutputFile>(o.csv);
    out->stream() << "backend,machine,op,impl,dtype,M,N,K,graph,time_us_median,time_us_p10,time_us_p90,tflops,"
                     "max_rel_err,git_sha\n";
  }
  GemmRunner lt(1);
  cudaStream_t stream;
  SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int failures = 0;
  std::printf("%-6s %6s %6s %6s %-5s %-34s %10s %10s %7s %9s %9s %9s\n", "dtype", "M", "N", "K", "mode", "tile",
              "tile_us", "cublas_us", "ratio", "err_tile", "err_lt", "tile~lt");
  for (const auto& s : o.shapes)
    for (DType t : o.dtypes) {
      const int m = s[0], n = s[1], k = s[2];
      GemmArgs probe = gemm_args(reinterpret_cast<void*>(256), reinterpret_cast<void*>(256),
                                 reinterpret_cast<void*>(256), std::size_t(m), std::size_t(n), std::size_t(k), t);
      const TileGemmShape ts = tile_gemm_shape(probe, o.tile);
      Checked ck;
      if (o.check) {
        ck = check_shape(lt, o.tile, m, n, k, t, o.seed + std::size_t(m) * 131 + std::size_t(n) * 7 + std::size_t(k),
                         o.samples);
        if (!ck.ok) {
          ++failures;
          std::printf("FAIL %s M %d N %d K %d: %s\n", dtype_name(t), m, n, k, ck.why.c_str());
        }
      }
      if (!o.timing) {
        std::printf("%-6s %6d %6d %6d %-5s %-34s %10s %10s %7s %9.2e %9.2e %9.2e  (C_in %.2e)\n", dtype_name(t), m, n,
                    k, "check", ts.str().c_str(), "-", "-", "-", ck.err_tile, ck.err_lt, ck.err_tile_vs_lt,
                    ck.err_c_in);
        continue;
      }
      // Input sets: enough that one pass over them outgrows L2 three times (at most 8), and at
      // least two: every call takes the next set in turn, so no call finds in L2 the inputs the
      // call before it just read (v1 and v2 gave cuBLASLt, which ran second on the same set, a
      // warm L2 at the small shapes).
      const std::size_t mk = std::size_t(m) * k, kn = std::size_t(k) * n, mn = std::size_t(m) * n;
      const std::size_t set_bytes = (mk + kn) * 2;
      const int sets =
          int(std::clamp<std::size_t>((3 * std::size_t(prop.l2CacheSize) + set_bytes - 1) / set_bytes, 2, 8));
      std::vector<std::unique_ptr<DevBuf>> as, bs;
      for (int i = 0; i < sets; ++i) {
        as.push_back(std::make_unique<DevBuf>(mk * 2));
        bs.push_back(std::make_unique<DevBuf>(kn * 2));
        fill_uniform(stream, as.back()->p, mk, t, o.seed * 977 + 2 * i);
        fill_uniform(stream, bs.back()->p, kn, t, o.seed * 977 + 2 * i + 1);
      }
      DevBuf c(mn * 2), cin(mn * 2);
      fill_uniform(stream, cin.p, mn, t, o.seed * 977 + 99);
      auto args = [&](int i) {
        GemmArgs g = gemm_args(as[i]->p, bs[i]->p, c.p, std::size_t(m), std::size_t(n), std::size_t(k), t);
        if (o.time_c_in) g.c_in = cin.p;
        return g;
      };
      for (int i = 0; i < sets; ++i) lt.prime(stream, args(i));
      std::vector<std::function<void(int)>> calls;
      for (const auto& impl : o.impls) {
        if (impl == "tile")
          calls.push_back([&](int i) { tile_gemm(stream, args(i), o.tile); });
        else
          calls.push_back([&](int i) { lt.run(stream, 0, args(i)); });
      }
      for (bool graph : o.modes) {
        std::vector<std::vector<cudaGraphExec_t>> execs(calls.size());
        if (graph)
          for (std::size_t ci = 0; ci < calls.size(); ++ci)
            for (int i = 0; i < sets; ++i) {
              cudaGraph_t gr;
              SYMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
              calls[ci](i);
              SYMM_CUDA_CHECK(cudaStreamEndCapture(stream, &gr));
              cudaGraphExec_t ex;
              SYMM_CUDA_CHECK(cudaGraphInstantiate(&ex, gr, 0));
              SYMM_CUDA_CHECK(cudaGraphDestroy(gr));
              execs[ci].push_back(ex);
            }
        const int total = o.warmup + o.iters;
        std::vector<std::vector<cudaEvent_t>> ev(calls.size(), std::vector<cudaEvent_t>(std::size_t(2 * o.iters)));
        for (auto& v : ev)
          for (auto& e : v) SYMM_CUDA_CHECK(cudaEventCreate(&e));
        // Samples alternate between the implementations, so a drift of the clocks hits both.
        for (int it = 0; it < total; ++it)
          for (std::size_t ci = 0; ci < calls.size(); ++ci) {
            const int set = int((std::size_t(it) * calls.size() + ci) % std::size_t(sets));
            const bool timed = it >= o.warmup;
            if (timed) SYMM_CUDA_CHECK(cudaEventRecord(ev[ci][2 * (it - o.warmup)], stream));
            if (graph)
              SYMM_CUDA_CHECK(cudaGraphLaunch(execs[ci][set], stream));
            else
              calls[ci](set);
            if (timed) SYMM_CUDA_CHECK(cudaEventRecord(ev[ci][2 * (it - o.warmup) + 1], stream));
          }
        SYMM_CUDA_CHECK(cudaStreamSynchronize(stream));
        SYMM_CUDA_CHECK(cudaGetLastError());
        std::vector<Stats> st;
        for (std::size_t ci = 0; ci < calls.size(); ++ci) {
          std::vector<float> us;
          for (int i = 0; i < o.iters; ++i) {
            float ms = 0;
            SYMM_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[ci][2 * i], ev[ci][2 * i + 1]));
            us.push_back(ms * 1000.0f);
          }
          st.push_back(stats(us));
          const double tflops = 2.0 * m * double(n) * k / (st.back().median * 1e-6) / 1e12;
          const double err = !o.check ? -1 : o.impls[ci] == "tile" ? ck.err_tile : ck.err_lt;
          if (out)
            out->stream() << "cuda," << machine << ",gemm" << (o.time_c_in ? "_c_in" : "") << "," << o.impls[ci] << ","
                          << dtype_name(t) << "," << m << "," << n << "," << k << "," << (graph ? 1 : 0) << ","
                          << st.back().median << "," << st.back().p10 << "," << st.back().p90 << "," << tflops << ","
                          << err << "," << git_sha() << "\n";
        }
        for (auto& v : ev)
          for (auto& e : v) cudaEventDestroy(e);
        for (auto& v : execs)
          for (auto& e : v) cudaGraphExecDestroy(e);
        const double t_tile = st.size() > 0 && o.impls[0] == "tile" ? st[0].median : -1;
        const double t_lt = st.size() > 1 ? st[1].median : (o.impls[0] == "cublaslt" ? st[0].median : -1);
        std::printf("%-6s %6d %6d %6d %-5s %-34s %10.1f %10.1f %7.3f %9.2e %9.2e %9.2e\n", dtype_name(t), m, n, k,
                    graph ? "graph" : "eager", ts.str().c_str(), t_tile, t_lt,
                    t_tile > 0 && t_lt > 0 ? t_lt / t_tile : -1.0, ck.err_tile, ck.err_lt, ck.err_tile_vs_lt);
        std::fflush(stdout);
      }
    }
  SYMM_CUDA_CHECK(cudaStreamDestroy(stream));
  if (out) out->commit();
  if (failures) std::printf("FAIL: %d shape(s) failed their check\n", failures);
  return failures ? 1 : 0;
}

}  // namespace symm::cuda
