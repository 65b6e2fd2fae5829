// The `gemm` host verb on CUDA (core/plan.h): cuBLASLt, bf16 / fp16 in, fp32 accumulation and
// scaling, the result stored in the inputs' type.
//
// Row-major operands through cuBLASLt's column-major view: a row-major m x n C is a column-major
// n x m C^T, and C^T = B^T A^T, so the call multiplies "A" = B (n x k, ld ldb) by "B" = A (k x m,
// ld lda), both untransposed.
//
// Capturable in a CUDA graph: the descriptors and the heuristic's algorithm are cached per
// (m, n, k, lda, ldb, ldc, dtype) on first use (host-only calls, no device allocation, no
// synchronization), and every stream index of a plan has its own workspace, allocated once
// when the runner is built, so concurrent GEMMs on different streams never share one.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "core/plan.h"

namespace symm::cuda {

class GemmRunner {
 public:
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;  // cuBLASLt's advice for Hopper

  // gpu_share: ranks that share this GPU (an in-process team); above 1, each GEMM is planned for
  // its share of the SMs (cuBLASLt's SM_COUNT_TARGET) and without split-K reductions, so that the
  // ranks' concurrent GEMMs fit on the GPU together instead of each sizing its grid for all of it.
  explicit GemmRunner(int streams, int gpu_share = 1);
  ~GemmRunner();
  GemmRunner(const GemmRunner&) = delete;
  GemmRunner& operator=(const GemmRunner&) = delete;

  // C = A x B on `stream`, using stream index `slot`'s workspace (0 .. streams-1).
  void run(cudaStream_t stream, int slot, const GemmArgs& g);

  // Runs g once on `stream` and waits for it, the first time its cuBLASLt configuration is seen
  // (shape, type, with or without C_in); nothing after that. cuBLASLt loads a kernel's module on
  // its first launch, and a module load waits for the whole context: on a GPU whose streams hold
  // waits for flags that this call's own later work would set (an in-process team's peers), that
  // first launch never returns (8 ranks on one H100, mm_rs ce_acc: cuLibraryLoadData blocked, the
  // other ranks' threads on cuBLASLt's lock). Priming every GEMM of a plan before any rank
  // enqueues its waits keeps module loads out of the spinning.
  void prime(cudaStream_t stream, const GemmArgs& g);

  // Number of shapes planned so far (each costs one heuristic query, the first time).
  std::size_t cached() const { return plans_.size(); }

 private:
  struct Plan;
  using Key = std::tuple<int, int, int, std::size_t, std::size_t, std::size_t, int>;
  const Plan& plan(const GemmArgs& g);
  static Key key_of(const GemmArgs& g) { return Key{g.m, g.n, g.k, g.lda, g.ldb, g.ldc, int(g.dtype)}; }

  void* handle_ = nullptr;  // cublasLtHandle_t
  int sm_target_ = 0;       // 0: the whole GPU
  std::vector<void*> workspaces_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
  std::set<std::pair<Key, bool>> primed_;  // (configuration, with C_in) already launched once
};

}  // namespace symm::cuda
