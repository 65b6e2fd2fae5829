// GemmRunner (gemm.h): cuBLASLt behind the `gemm` host verb.
#include "backends/cuda/gemm.h"

#include <cublasLt.h>

#include <algorithm>
#include <exception>
#include <string>

#include "backends/cuda/check.h"

namespace symm::cuda {
namespace {

void check_lt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail(ErrorCode::kCuda, std::string(what) + " failed: cublasStatus " + std::to_string(int(s)));
}
#define SYMM_LT_CHECK(call) check_lt((call), #call)

cudaDataType_t lt_type(DType t) {
  switch (t) {
    case DType::kBF16: return CUDA_R_16BF;
    case DType::kFP16: return CUDA_R_16F;
    case DType::kFP32: return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

}  // namespace

struct GemmRunner::Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLASLt's A (= our B), B (= our A), C
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

GemmRunner::GemmRunner(int streams, int gpu_share) {
  if (gpu_share > 1) {
    int dev = 0, sms = 0;
    SYMM_CUDA_CHECK(cudaGetDevice(&dev));
    SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    sm_target_ = std::max(1, sms / gpu_share);
  }
  cublasLtHandle_t h = nullptr;
  SYMM_LT_CHECK(cublasLtCreate(&h));
  handle_ = h;
  workspaces_.assign(std::size_t(streams > 0 ? streams : 1), nullptr);
  for (void*& w : workspaces_) SYMM_CUDA_CHECK(cudaMalloc(&w, kWorkspaceBytes));
}

GemmRunner::~GemmRunner() {
  plans_.clear();
  // Destroyed while an error unwinds (a failed rank): cudaFree synchronizes the device and could
  // wait forever behind a stream stuck on a flag (ours, or an in-process team peer's); the process
  // is ending on that error, so the workspaces are left to the driver.
  if (std::uncaught_exceptions() > 0) return;
  for (void* w : workspaces_) cudaFree(w);
  if (handle_) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

const GemmRunner::Plan& GemmRunner::plan(const GemmArgs& g) {
  const Key key = key_of(g);
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.lda < std::size_t(g.k) || g.ldb < std::size_t(g.n) ||
      g.ldc < std::size_t(g.n))
    fail(ErrorCode::kInternal,
         "gemm: bad shape m " + std::to_string(g.m) + " n " + std::to_string(g.n) + " k " + std::to_string(g.k));
  auto p = std::make_unique<Plan>();
  const cudaDataType_t t = lt_type(g.dtype);
  SYMM_LT_CHECK(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t no = CUBLAS_OP_N;
  SYMM_LT_CHECK(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &no, sizeof no));
  SYMM_LT_CHECK(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof no));
  if (sm_target_ > 0) {
    const int32_t target = sm_target_;
    SYMM_LT_CHECK(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &target, sizeof target));
  }
  // Column-major view: "A" = B^T (n x k, ld ldb), "B" = A^T (k x m, ld lda), C^T (n x m, ld ldc).
  SYMM_LT_CHECK(cublasLtMatrixLayoutCreate(&p->a, t, uint64_t(g.n), uint64_t(g.k), int64_t(g.ldb)));
  SYMM_LT_CHECK(cublasLtMatrixLayoutCreate(&p->b, t, uint64_t(g.k), uint64_t(g.m), int64_t(g.lda)));
  SYMM_LT_CHECK(cublasLtMatrixLayoutCreate(&p->c, t, uint64_t(g.n), uint64_t(g.m), int64_t(g.ldc)));

  cublasLtMatmulPreference_t pref = nullptr;
  SYMM_LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = kWorkspaceBytes;
  const uint32_t align = 16;  // chunk offsets are whole 16-byte vectors, not more
  SYMM_LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    SYMM_LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof align));
  if (sm_target_ > 0) {
    const uint32_t none = CUBLASLT_REDUCTION_SCHEME_NONE;
    SYMM_LT_CHECK(
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &none, sizeof none));
  }
  cublasLtMatmulHeuristicResult_t res{};
  int found = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(handle_), p->op, p->a, p->b,
                                                          p->c, p->c, pref, 1, &res, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  check_lt(s, "cublasLtMatmulAlgoGetHeuristic");
  if (found < 1)
    fail(ErrorCode::kUnsupported, "cuBLASLt has no algorithm for m " + std::to_string(g.m) + " n " +
                                      std::to_string(g.n) + " k " + std::to_string(g.k));
  p->algo = res.algo;
  return *plans_.emplace(key, std::move(p)).first->second;
}

void GemmRunner::run(cudaStream_t stream, int slot, const GemmArgs& g) {
  if (slot < 0 || std::size_t(slot) >= workspaces_.size())
    fail(ErrorCode::kInternal, "gemm: stream " + std::to_string(slot) + " has no workspace");
  for (const void* ptr : {g.a, g.b, static_cast<const void*>(g.c), g.c_in ? g.c_in : g.a})
    if (reinterpret_cast<std::uintptr_t>(ptr) % 16)
      fail(ErrorCode::kInternal, "gemm: an operand is not 16-byte aligned");
  const Plan& p = plan(g);
  // C_in (core/plan.h) is cuBLASLt's C with beta 1; its D is our C (same layout).
  const float alpha = 1.0f, beta = g.c_in ? 1.0f : 0.0f;
  const void* c_in = g.c_in ? g.c_in : g.c;
  // cuBLASLt's A is our B and its B is our A (gemm.h).
  SYMM_LT_CHECK(cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), p.op, &alpha, g.b, p.a, g.a, p.b, &beta, c_in,
                               p.c, g.c, p.c, &p.algo, workspaces_[std::size_t(slot)], kWorkspaceBytes, stream));
}

void GemmRunner::prime(cudaStream_t stream, const GemmArgs& g) {
  const std::pair<Key, bool> key{key_of(g), g.c_in != nullptr};
  if (primed_.count(key)) return;
  run(stream, 0, g);
  SYMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  primed_.insert(key);
}

}  // namespace symm::cuda
