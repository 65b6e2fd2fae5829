// Placeholder device context: every verb is a no-op; instantiates every program x dtype.
#include "core/dispatch.h"
namespace {
struct NullCtx {
  __device__ int rank() const { return 0; }
  __device__ int world() const { return 2; }
  __device__ int block() const { return blockIdx.x; }
  __device__ int blocks() const { return gridDim.x; }
  template <class T> __device__ T* peer(T* p, int) { return p; }
  __device__ void copy(void*, const void*, std::size_t) {}
  template <class T> __device__ void reduce(T*, const T* const*, int, std::size_t, symm::ReduceOp) {}
  template <class T> __device__ void multimem_reduce(T*, std::size_t, symm::ReduceOp) {}
  __device__ void signal(int, uint32_t, uint32_t, symm::MemOrder) {}
  __device__ void wait(uint32_t, uint32_t, symm::MemOrder) {}
  __device__ uint32_t advance(uint32_t) { return 1; }
  __device__ void sync() { __syncthreads(); }
};
static_assert(symm::BlockCtx<NullCtx>);
template <class P, class T>
__global__ void k(symm::CollArgs a) { NullCtx c; P::template run<T>(c, a); }
}  // namespace
void instantiate_all() {
  for (const auto& info : symm::algorithms())
    symm::with_program(info.kind, [&]<class P>() {
      symm::with_type(symm::DType::kBF16, [&]<class T>() { k<P, T><<<1, 32>>>(symm::CollArgs{}); });
    });
}
