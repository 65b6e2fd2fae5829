// Host plans on CUDA: the CudaHost context (core/plan.h's verbs on CUDA streams) and the
// instantiation of every plan x element type (nvcc: plans launch device programs). The
// executor's host-only parts (stream memory operations, events, watchdog) are in plan_exec.cpp.
#include <cstdlib>
#include <string>
#include <type_traits>

#include "backends/cuda/check.h"
#include "backends/cuda/plan_exec.h"
#include "backends/cuda/program_kernel.cuh"
#include "backends/cuda/residency.h"
#include "backends/cuda/tile_fused.h"
#include "core/algos/local_reduce_ring.h"
#include "core/dispatch.h"

namespace symm::cuda {
namespace plans_detail {  // named: nvcc warns of unreferenced instantiations of internal-linkage templates

// Diagnosis only (timing runs; wrong results): SYMM_DEBUG_AGMM_GEMM=cublaslt runs, in place of
// ag_mm's tile program, one cuBLASLt GEMM over the whole gathered A without a wait (its peers'
// rows read before they land): the matmul alone beside the copy engines' pushes, the floor under
// any ag_mm whose all-gather is those pushes (tile_fused.cpp has the other modes).
bool debug_agmm_cublaslt() {
  static const bool on = [] {
    const char* e = std::getenv("SYMM_DEBUG_AGMM_GEMM");
    return e && std::string(e) == "cublaslt";
  }();
  return on;
}
GemmArgs agmm_whole_gemm(const MatArgs& m, DType t) { return gemm_args(m.a2, m.b, m.c, m.m, m.n, m.k, t); }

// What every host of a plan on this rank knows: rank, world, streams, and peers' addresses.
class RankView {
 public:
  explicit RankView(PlanExec& x) : x_(x), h_(x.handle()) {}
  int rank() const { return h_.rank; }
  int world() const { return h_.world; }
  int streams() const { return x_.streams(); }
  template <class T>
  T* peer(T* p, int r) const {
    if (r == h_.rank) return p;
    const std::size_t off = reinterpret_cast<const char*>(p) - h_.heap_base;
    return reinterpret_cast<T*>(h_.heap_peer[r] + off);
  }

 protected:
  PlanExec& x_;
  const DeviceHandle& h_;
};

// core/plan.h's host verbs on this rank's streams.
class CudaHost : public RankView {
 public:
  using RankView::RankView;
  template <class Program, class T>
  void launch(int s, const CollArgs& a, int blocks) {
    x_.flush();  // the pending flag operations first (plan_exec.h)
    const PlanExec::HostTimer c(x_, PlanExec::kHostLaunch);
    traced(
        s, "launch", [&] { return "\"blocks\":" + std::to_string(blocks); },
        [&] { launch_untraced<Program, T>(s, a, blocks); });
    x_.step(/*meets=*/true);
  }
  void copy_engine(int s, void* dst, const void* src, std::size_t bytes) {
    x_.flush();
    const PlanExec::HostTimer c(x_, PlanExec::kHostCopy);
    traced(
        s, "copy_engine",
        [&] {
          return "\"bytes\":" + std::to_string(bytes) + ",\"from\":" + std::to_string(owner(src)) +
                 ",\"to\":" + std::to_string(owner(dst));
        },
        [&] { copy_untraced(s, dst, src, bytes); });
    x_.step();
  }
  void write_flag(int s, int peer, uint32_t slot, uint32_t value) {
    const PlanExec::HostTimer c(x_, PlanExec::kHostFlag);
    traced(
        s, "write_flag", [&] { return flag_args(slot, value) + ",\"peer\":" + std::to_string(peer); },
        [&] { x_.write_flag(s, peer, slot, value); });
    x_.step(/*meets=*/true);
  }
  void wait_flag(int s, uint32_t slot, uint32_t value) {
    const PlanExec::HostTimer c(x_, PlanExec::kHostFlag);
    traced(
        s, "wait_flag", [&] { return flag_args(slot, value); }, [&] { x_.wait_flag(s, slot, value); });
    x_.step();
  }
  void record(int s, int e) {
    x_.flush();
    const PlanExec::HostTimer c(x_, PlanExec::kHostEvent);
    SYMM_CUDA_CHECK(cudaEventRecord(x_.event(e), x_.stream(s)));
    x_.step();
  }
  void wait_event(int s, int e) {
    x_.flush();
    const PlanExec::HostTimer c(x_, PlanExec::kHostEvent);
    SYMM_CUDA_CHECK(cudaStreamWaitEvent(x_.stream(s), x_.event(e), 0));
    x_.step();
  }
  void gemm(int s, const GemmArgs& g) {
    x_.flush();
    const PlanExec::HostTimer c(x_, PlanExec::kHostGemm);
    traced(
        s, "gemm",
        [&] {
          return "\"m\":" + std::to_string(g.m) + ",\"n\":" + std::to_string(g.n) + ",\"k\":" + std::to_string(g.k);
        },
        [&] { x_.gemm(s, g); });  // no meeting: a GEMM waits for no peer, and ranks may skip an empty one
  }

 private:
  // Runs `enqueue`; while the executor traces a call (plan_trace.h), between two events on stream
  // s, named `name` with the JSON members `args()` makes (made only then).
  template <class Args, class Enqueue>
  void traced(int s, const char* name, Args&& args, Enqueue&& enqueue) {
    PlanTracer* t = x_.tracer();
    if (!t) return enqueue();
    const std::size_t span = t->open(x_.stream(s), s, name, args());
    enqueue();
    t->close(span, x_.stream(s));
  }
  static std::string flag_args(uint32_t slot, uint32_t value) {
    return "\"slot\":" + std::to_string(slot) + ",\"value\":" + std::to_string(value);
  }
  // The rank whose symmetric heap holds p (-1: not in a heap).
  int owner(const void* p) const {
    const char* c = static_cast<const char*>(p);
    for (int r = 0; r < h_.world; ++r)
      if (c >= h_.heap_peer[r] && c < h_.heap_peer[r] + h_.heap_bytes) return r;
    return -1;
  }
  template <class Program, class T>
  void launch_untraced(int s, const CollArgs& a, int blocks) {
    // The tile programs (issue 24) run on the wgmma kernel, which walks the same tiles with the
    // same flags (tile_fused.h); every other program on the generic program kernel.
    if constexpr (kTileProgramOf<Program> == TileProgram::kAgMm) {
      if (debug_agmm_cublaslt()) return x_.gemm(s, agmm_whole_gemm(a.mat, DTypeOf<T>::value));
    }
    if constexpr (kTileProgramOf<Program> != TileProgram::kNone) {
      launch_tile_program(kTileProgramOf<Program>, DTypeOf<T>::value, h_, a.mat, blocks, x_.stream(s));
    } else {
      static_assert(!has_side_lane<Program>(), "a program with a side lane runs in its own kernel (tile_fused.h)");
      // A kernel that waits for peers needs every rank's blocks resident (in-process teams); the
      // plans' local kernels wait for no one (their inputs arrived behind stream waits).
      if constexpr (!std::is_same_v<Program, LocalReduceRing> && !std::is_same_v<Program, SumPeerSlots> &&
                    !std::is_same_v<Program, PushToPeers> && !std::is_same_v<Program, CopyLocal>)
        check_residency(reinterpret_cast<const void*>(&program_kernel<Program, T>), h_, blocks, x_.threads(),
                        "a host plan's device program");
      launch_program_kernel<Program, T>(h_, a, blocks, x_.threads(), x_.stream(s), /*pdl=*/false);
    }
  }
  void copy_untraced(int s, void* dst, const void* src, std::size_t bytes) {
    // Diagnosis only (timing runs, wrong results): SYMM_DEBUG_PLAN_COPIES=none drops every plan
    // copy, what the copies cost a plan (experiments/results/h100x2/knobs_plan_copies; eager batch
    // copies, cudaMemcpyBatchAsync preferring a copy engine, were tried there and changed nothing).
    static const bool drop = [] {
      const char* e = std::getenv("SYMM_DEBUG_PLAN_COPIES");
      return e && std::string(e) == "none";
    }();
    if (drop) return;
    SYMM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, x_.stream(s)));
  }
};
static_assert(HostCtx<CudaHost>);

// The same verbs, where only the GEMMs run, each configuration once (PlanExec::prime_fused).
class GemmPrimeHost : public RankView {
 public:
  using RankView::RankView;
  template <class Program, class T>
  void launch(int, const CollArgs& a, int) {
    if constexpr (kTileProgramOf<Program> == TileProgram::kAgMm)
      if (debug_agmm_cublaslt()) x_.prime_gemm(agmm_whole_gemm(a.mat, DTypeOf<T>::value));
  }
  void copy_engine(int, void*, const void*, std::size_t) {}
  void write_flag(int, int, uint32_t, uint32_t) {}
  void wait_flag(int, uint32_t, uint32_t) {}
  void record(int, int) {}
  void wait_event(int, int) {}
  void gemm(int, const GemmArgs& g) { x_.prime_gemm(g); }
};
static_assert(HostCtx<GemmPrimeHost>);

// Runs fused plan `algo` on `host` (bf16 or fp16); kInternal where the registry has no such plan.
template <class Host>
void run_fused_plan(Host& host, const FusedAlgo& algo, const FusedArgs& a) {
  with_fused_plan(algo, [&]<class P>() {
    switch (a.dtype) {
      case DType::kBF16: return P::template run<bf16>(host, a);
      case DType::kFP16: return P::template run<fp16>(host, a);
      default:
#if !defined(__CUDA_ARCH__)
        fail(ErrorCode::kInvalidArgument, std::string(algo.id) + " runs bf16 and fp16 only");
#endif
        return;
    }
  });
}

}  // namespace plans_detail
using plans_detail::CudaHost;

void preload_plan_programs() {
  for (DType t : {DType::kBF16, DType::kFP16, DType::kFP32})
    with_type(t, [&]<class T>() {
      cudaFuncAttributes attr;
      SYMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, &program_kernel<AllGatherSt, T>));
      SYMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, &program_kernel<LocalReduceRing, T>));
      SYMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, &program_kernel<SumPeerSlots, T>));
      SYMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, &program_kernel<PushToPeers, T>));
      SYMM_CUDA_CHECK(cudaFuncGetAttributes(&attr, &program_kernel<CopyLocal, T>));
    });
}

void PlanExec::enqueue_fused(const FusedAlgo& algo, const FusedArgs& a) {
  begin_call();
  // A kernel that spins on the peers' copies: this call's flag waits stay stream memory operations
  // (plan_exec.h says why); begin_call's next call clears it.
  call_stream_waits_ = algo.kernel_spins_on_copies;
  CudaHost host(*this);
  CheckedHost<CudaHost> checked(host);  // the host verbs' contract (core/plan.h)
  plans_detail::run_fused_plan(checked, algo, a);
  checked.end_call();  // every side stream joined (core/plan.h, "the end of a call")
  end_call();
}

void PlanExec::prime_fused(const FusedAlgo& algo, const FusedArgs& a) {
  plans_detail::GemmPrimeHost host(*this);
  CheckedHost<plans_detail::GemmPrimeHost> checked(host);
  plans_detail::run_fused_plan(checked, algo, a);
}

void PlanExec::enqueue(const AlgoInfo& a, DType t, const PlanArgs& args) {
  begin_call();
  CudaHost host(*this);
  CheckedHost<CudaHost> checked(host);  // the host verbs' contract (core/plan.h)
  with_plan(a, [&]<class P>() { with_type(t, [&]<class T>() { P::template run<T>(checked, args); }); });
  checked.end_call();  // every side stream joined (core/plan.h, "the end of a call")
  end_call();
}

}  // namespace symm::cuda
