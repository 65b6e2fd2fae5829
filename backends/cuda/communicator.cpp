// symm::cuda_communicator (include/symmcoll/cuda.h): the library interface on CUDA, on an NCCL
// communicator the caller already has. Sets up what backends/cuda/runtime.cpp sets up for the
// bench (a symmetric heap and a signal pad, each an NCCL_WIN_COLL_SYMMETRIC window, the peer
// tables, the wait-error area) on the adopted communicator, and launches the core programs
// through launch_program (kernels.h) with launch_plan's blocks and threads.
//
// Heap of each rank: [ programs' fixed scratch | staging (in, out, scratch of one call) | alloc() arena ].
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <map>
#include <memory>

#include "backends/cuda/check.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/plan_exec.h"
#include "core/coll_args.h"
#include "core/signal_pad.h"
#include "symmcoll/cuda.h"

namespace symm {
namespace {

using cuda::DeviceHandle;
using cuda::WaitError;

std::size_t up(std::size_t x) { return (x + kHeapAlign - 1) / kHeapAlign * kHeapAlign; }

class CudaCommunicator final : public Communicator {
 public:
  CudaCommunicator(ncclComm_t comm, const CudaOptions& o) : comm_(comm), options_(o) {
    int rank = 0, world = 0, dev = 0, current = 0;
    SYMM_CUDA_CHECK(ncclCommUserRank(comm, &rank));
    SYMM_CUDA_CHECK(ncclCommCount(comm, &world));
    SYMM_CUDA_CHECK(ncclCommCuDevice(comm, &dev));
    SYMM_CUDA_CHECK(cudaGetDevice(&current));
    if (current != dev)
      fail(ErrorCode::kInvalidArgument, "cuda_communicator: the current device is " + std::to_string(current) +
                                            " but the NCCL communicator's is " + std::to_string(dev) +
                                            " (cudaSetDevice first)");
    if (world < 2 || world > cuda::kNodeWorld)
      fail(ErrorCode::kUnsupported, "cuda_communicator: world " + std::to_string(world) + " is outside 2.." +
                                        std::to_string(cuda::kNodeWorld) + " (the GPUs of one NVLink node)");
    cudaDeviceProp prop{};
    SYMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    machine_ = cuda::machine_name(prop.name, world);  // the "auto" table's name, e.g. h200x4
    fixed_ = fixed_scratch_bytes(world);
    arena_ = fixed_ + up(o.staging_bytes);
    if (o.heap_bytes < arena_)
      fail(ErrorCode::kInvalidArgument, "cuda_communicator: heap_bytes " + std::to_string(o.heap_bytes) +
                                            " is below the fixed scratch plus staging (" + std::to_string(arena_) +
                                            " bytes)");
    heap_bytes_ = o.heap_bytes;
    SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    void* heap = nullptr;
    SYMM_CUDA_CHECK(ncclMemAlloc(&heap, heap_bytes_));
    h_.heap_base = static_cast<char*>(heap);
    SYMM_CUDA_CHECK(ncclCommWindowRegister(comm, heap, heap_bytes_, &heap_win_, NCCL_WIN_COLL_SYMMETRIC));
    SYMM_CUDA_CHECK(cudaMemsetAsync(heap, 0, heap_bytes_, stream_));  // packet scratch: no epoch yet
    SYMM_CUDA_CHECK(ncclMemAlloc(&pad_, pad::kPadBytes));
    SYMM_CUDA_CHECK(ncclCommWindowRegister(comm, pad_, pad::kPadBytes, &pad_win_, NCCL_WIN_COLL_SYMMETRIC));
    SYMM_CUDA_CHECK(cudaMemsetAsync(pad_, 0, pad::kPadBytes, stream_));  // epochs only grow
    h_.rank = rank;
    h_.world = world;
    h_.pad_local = static_cast<uint32_t*>(pad_);
    int device = 0, clock_khz = 0;
    SYMM_CUDA_CHECK(cudaGetDevice(&device));
    SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    h_.timeout_cycles =
        o.wait_timeout_cycles ? o.wait_timeout_cycles : cuda::wait_timeout_cycles(cuda::process_env(), clock_khz);
    // The rank's poison word: the first wait that times out sets it, later waits return at once.
    SYMM_CUDA_CHECK(cudaMalloc(&h_.poison, sizeof(uint32_t)));
    SYMM_CUDA_CHECK(cudaMemsetAsync(h_.poison, 0, sizeof(uint32_t), stream_));
    const auto heaps = bases(heap_win_), pads = bases(pad_win_);
    for (int r = 0; r < world; ++r) {
      h_.heap_peer[r] = heaps[std::size_t(r)];
      h_.pad_peer[r] = reinterpret_cast<uint32_t*>(pads[std::size_t(r)]);
    }
    SYMM_CUDA_CHECK(cudaHostAlloc(&error_host_, sizeof(WaitError), cudaHostAllocMapped));
    *error_host_ = WaitError{};
    void* dev_err = nullptr;
    SYMM_CUDA_CHECK(cudaHostGetDevicePointer(&dev_err, error_host_, 0));
    h_.error = static_cast<WaitError*>(dev_err);
    // No rank signals into a pad a peer has not zeroed yet.
    float* one = nullptr;
    SYMM_CUDA_CHECK(cudaMalloc(&one, sizeof(float)));
    SYMM_CUDA_CHECK(ncclAllReduce(one, one, 1, ncclFloat, ncclSum, comm, stream_));
    SYMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    SYMM_CUDA_CHECK(cudaFree(one));
  }

  ~CudaCommunicator() override {
    // Best effort: a destructor must not throw.
    cudaDeviceSynchronize();
    if (heap_win_) ncclCommWindowDeregister(comm_, heap_win_);
    if (pad_win_) ncclCommWindowDeregister(comm_, pad_win_);
    if (h_.heap_base) ncclMemFree(h_.heap_base);
    if (pad_) ncclMemFree(pad_);
    if (error_host_) cudaFreeHost(error_host_);
    if (h_.poison) cudaFree(h_.poison);
    if (stream_) cudaStreamDestroy(stream_);
  }

  int rank() const override { return h_.rank; }
  int world() const override { return h_.world; }
  const char* backend() const override { return "cuda"; }

  // First fit in the arena; every rank allocates in the same order, so offsets agree.
  void* alloc(std::size_t bytes) override {
    const std::size_t need = up(std::max<std::size_t>(bytes, 1));
    std::size_t at = arena_;
    for (const auto& [off, size] : used_) {
      if (off - at >= need) break;
      at = off + size;
    }
    if (at + need > heap_bytes_)
      fail(ErrorCode::kInvalidArgument, "alloc: " + std::to_string(bytes) + " bytes do not fit the symmetric heap (" +
                                            std::to_string(heap_bytes_) + " bytes; CudaOptions::heap_bytes)");
    used_[at] = need;
    return h_.heap_base + at;
  }
  void free(void* p) override {
    const auto it = used_.find(std::size_t(static_cast<char*>(p) - h_.heap_base));
    if (p < h_.heap_base || it == used_.end())
      fail(ErrorCode::kInvalidArgument, "free: pointer was not returned by this communicator's alloc");
    used_.erase(it);
  }

  CallInfo all_reduce(const void* in, void* out, std::size_t count, DType t, ReduceOp op, void* stream,
                      const std::string& algo) override {
    return collective(Op::kAllReduce, in, out, count * dtype_size(t), t, op, stream, algo);
  }
  CallInfo reduce_scatter(const void* in, void* out, std::size_t recvcount, DType t, ReduceOp op, void* stream,
                          const std::string& algo) override {
    return collective(Op::kReduceScatter, in, out, recvcount * dtype_size(t) * std::size_t(world()), t, op, stream,
                      algo);
  }
  CallInfo all_gather(const void* in, void* out, std::size_t sendcount, DType t, void* stream,
                      const std::string& algo) override {
    return collective(Op::kAllGather, in, out, sendcount * dtype_size(t) * std::size_t(world()), t, ReduceOp::kSum,
                      stream, algo);
  }

  void synchronize() override {
    const cudaError_t e = cudaDeviceSynchronize();
    check_waits();  // a timeout explains a later failure better than the failure itself
    SYMM_CUDA_CHECK(e);
  }

 private:
  std::vector<char*> bases(ncclWindow_t win) {
    void** dev = nullptr;
    const int world = h_.world;
    SYMM_CUDA_CHECK(cudaMalloc(&dev, sizeof(void*) * std::size_t(world + 1)));
    cuda::gather_window_bases(win, world, dev, stream_);
    std::vector<void*> host(std::size_t(world) + 1);
    SYMM_CUDA_CHECK(cudaMemcpyAsync(host.data(), dev, sizeof(void*) * host.size(), cudaMemcpyDeviceToHost, stream_));
    SYMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    SYMM_CUDA_CHECK(cudaFree(dev));
    if (host[std::size_t(h_.rank)] != host[std::size_t(world)])
      fail(ErrorCode::kUnsupported, "NCCL's LSA team does not map world rank " + std::to_string(h_.rank) +
                                        " to the same LSA rank (all ranks must be on one NVLink node)");
    std::vector<char*> out;
    for (int r = 0; r < world; ++r) out.push_back(static_cast<char*>(host[std::size_t(r)]));
    return out;
  }

  void check_waits() {
    volatile WaitError* e = error_host_;
    if (!e->tripped) return;
    WaitError copy;
    copy.tripped = e->tripped;
    copy.rank = e->rank;
    copy.block = e->block;
    copy.slot = e->slot;
    copy.expected = e->expected;
    copy.seen = e->seen;
    copy.kind = e->kind;
    copy.packet = e->packet;
    copy.offset = e->offset;
    e->tripped = 0;
    fail(ErrorCode::kTimeout, cuda::describe_wait_timeout(copy));
  }

  bool in_arena(const void* p, std::size_t bytes) const {
    const char* c = static_cast<const char*>(p);
    return c >= h_.heap_base + arena_ && c + bytes <= h_.heap_base + heap_bytes_;
  }

  CallInfo collective(Op op, const void* in, void* out, std::size_t bytes, DType t, ReduceOp rop, void* stream,
                      const std::string& algo) {
    const int world = h_.world;
    cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : stream_;
    // "auto": the machine's table entry for the launch mode the call is in (a stream being
    // captured into a CUDA graph: graph; else eager), with the table's block count.
    AutoChoice choice;
    if (algo == "auto") {
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      SYMM_CUDA_CHECK(cudaStreamIsCapturing(s, &capture));
      choice = auto_choose(AutoQuery{machine_, op, bytes, world, t, capture == cudaStreamCaptureStatusActive});
    }
    const AlgoInfo& a = algo == "auto" ? *choice.algo : find_algo(op, algo);
    if (auto why = cuda::multicast_refusal(a, cuda::process_env(), false)) fail(ErrorCode::kUnsupported, *why);
    const cuda::LaunchPlan plan = cuda::plan_launch(a, t, bytes, world, choice.blocks, 0);  // runs check_args
    const std::size_t in_b = a.in_bytes(bytes, world), out_b = a.out_bytes(bytes, world);
    const char* ic = static_cast<const char*>(in);
    const char* oc = static_cast<const char*>(out);
    if (ic < oc + out_b && oc < ic + in_b)
      fail(ErrorCode::kInvalidArgument,
           a.id + ": in and out overlap (the programs read peers' in while peers write out)");
    // Staging: the call's own symmetric in/out when the caller's are elsewhere, and the
    // program's scratch (programs on fixed per-block regions use theirs from heap_layout).
    std::size_t at = fixed_;
    const bool stage_in = !in_arena(in, in_b), stage_out = !in_arena(out, out_b);
    const std::size_t in_off = stage_in ? at : 0;
    at += stage_in ? up(in_b) : 0;
    const std::size_t out_off = stage_out ? at : 0;
    at += stage_out ? up(out_b) : 0;
    std::size_t scratch_off = at;
    if (a.piece_bytes)
      scratch_off = heap_layout(a, bytes, world).scratch;
    else
      at += up(a.scratch_bytes(bytes, world));
    if (at > arena_)
      fail(ErrorCode::kInvalidArgument,
           a.id + " at " + std::to_string(bytes) + " bytes needs " + std::to_string(at - fixed_) +
               " bytes of staging; CudaOptions::staging_bytes is " + std::to_string(options_.staging_bytes) +
               " (or pass buffers from alloc(), which need none)");
    CollArgs args;
    args.in = stage_in ? h_.heap_base + in_off : in;
    args.out = stage_out ? h_.heap_base + out_off : out;
    args.scratch = h_.heap_base + scratch_off;
    args.count = a.count(bytes, t, world);
    args.op = rop;
    if (stage_in) SYMM_CUDA_CHECK(cudaMemcpyAsync(const_cast<void*>(args.in), in, in_b, cudaMemcpyDefault, s));
    if (a.plan) {  // a host plan: copy engines and stream flags, forked from and joined into s
      std::unique_ptr<cuda::PlanExec>& x = plans_[s];
      if (!x) x = std::make_unique<cuda::PlanExec>(h_, s, 3, cuda::kDefaultThreads);
      PlanArgs pa;
      pa.coll = args;
      pa.blocks = plan.blocks;
      x->enqueue(a, t, pa);
    } else {
      cuda::launch_program(a, t, h_, args, plan.blocks, plan.threads, s);
    }
    if (stage_out) SYMM_CUDA_CHECK(cudaMemcpyAsync(out, args.out, out_b, cudaMemcpyDefault, s));
    CallInfo info;
    info.algo = &a;
    info.bytes = bytes;
    return info;
  }

  std::map<cudaStream_t, std::unique_ptr<cuda::PlanExec>> plans_;  // host plans' side streams, per caller stream
  ncclComm_t comm_;
  CudaOptions options_;
  DeviceHandle h_;
  cudaStream_t stream_ = nullptr;
  std::string machine_;
  ncclWindow_t heap_win_ = nullptr, pad_win_ = nullptr;
  void* pad_ = nullptr;
  WaitError* error_host_ = nullptr;
  std::size_t heap_bytes_ = 0, fixed_ = 0, arena_ = 0;
  std::map<std::size_t, std::size_t> used_;  // arena offset -> bytes
};

}  // namespace

std::unique_ptr<Communicator> cuda_communicator(ncclComm_t comm, const CudaOptions& options) {
  return std::make_unique<CudaCommunicator>(comm, options);
}

}  // namespace symm
