// symm::cuda_communicator and symm::cuda_node (include/symmcoll/cuda.h): the library interface on
// CUDA, on an NCCL communicator the caller already has (one process per GPU), or as N ranks of
// one process. A rank's memory is set up as the bench's is (rank_memory.h: NCCL windows, or the
// in-process team's allocations), and the core programs launch through launch_program
// (kernels.h) with launch_plan's blocks and threads.
//
// Heap of each rank: [ programs' fixed scratch | staging (in, out, scratch of one call) | alloc() arena ].
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/plan_exec.h"
#include "backends/cuda/rank_memory.h"
#include "backends/cuda/team.h"
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
  // One process per GPU: memory as NCCL windows on the caller's communicator.
  CudaCommunicator(ncclComm_t comm, const CudaOptions& o) : options_(o) {
    int world = 0, dev = 0, current = 0;
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
    size_heap(world);
    SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    mem_ = cuda::RankMemory::nccl_windows(comm, heap_bytes_, stream_);
    finish_setup();
    // No rank signals into a pad a peer has not zeroed yet.
    float* one = nullptr;
    SYMM_CUDA_CHECK(cudaMalloc(&one, sizeof(float)));
    SYMM_CUDA_CHECK(ncclAllReduce(one, one, 1, ncclFloat, ncclSum, comm, stream_));
    SYMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    SYMM_CUDA_CHECK(cudaFree(one));
  }

  // A rank of an in-process team (cuda_node): its memory was made with every other rank's, zeroed.
  CudaCommunicator(std::unique_ptr<cuda::RankMemory> mem, const std::string& machine, const CudaOptions& o)
      : options_(o), machine_(machine), mem_(std::move(mem)) {
    heap_bytes_ = mem_->heap_bytes();
    fixed_ = fixed_scratch_bytes(mem_->handle().world);
    arena_ = fixed_ + up(o.staging_bytes);
    const Device on(mem_->device());
    SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    finish_setup();
    // The host-plan executor of the communicator's own stream, made now while no rank runs: made
    // later, its pinned and device allocations could wait for a peer's kernel that waits for us.
    plans_[stream_] = std::make_unique<cuda::PlanExec>(h_, stream_, 3, cuda::kDefaultThreads);
  }

  ~CudaCommunicator() override {
    // Best effort: a destructor must not throw.
    const Device on(mem_ ? mem_->device() : 0);
    cudaDeviceSynchronize();
    plans_.clear();
    mem_.reset();  // deregisters its windows (NCCL), or frees the team's allocations
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
    const Device on(mem_->device());
    const cudaError_t e = cudaDeviceSynchronize();
    check_waits();  // a timeout explains a later failure better than the failure itself
    SYMM_CUDA_CHECK(e);
  }

 private:
  // Sets the current device for a call and restores the caller's (a team may span GPUs, and one
  // host thread may drive every rank).
  struct Device {
    int saved = -1;
    explicit Device(int dev) {
      if (cudaGetDevice(&saved) == cudaSuccess && saved != dev) cudaSetDevice(dev);
    }
    ~Device() {
      int now = 0;
      if (saved >= 0 && cudaGetDevice(&now) == cudaSuccess && now != saved) cudaSetDevice(saved);
    }
  };

  void size_heap(int world) {
    fixed_ = fixed_scratch_bytes(world);
    arena_ = fixed_ + up(options_.staging_bytes);
    if (options_.heap_bytes < arena_)
      fail(ErrorCode::kInvalidArgument, "cuda_communicator: heap_bytes " + std::to_string(options_.heap_bytes) +
                                            " is below the fixed scratch plus staging (" + std::to_string(arena_) +
                                            " bytes)");
    heap_bytes_ = options_.heap_bytes;
  }

  void finish_setup() {
    h_ = mem_->handle();
    int clock_khz = 0;
    SYMM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, mem_->device()));
    h_.timeout_cycles = options_.wait_timeout_cycles ? options_.wait_timeout_cycles
                                                     : cuda::wait_timeout_cycles(cuda::process_env(), clock_khz);
  }

  void check_waits() {
    const std::optional<WaitError> e = mem_->report();
    if (!e) return;
    mem_->clear_report();
    fail(ErrorCode::kTimeout, cuda::describe_wait_timeout(*e));
  }

  bool in_arena(const void* p, std::size_t bytes) const {
    const char* c = static_cast<const char*>(p);
    return c >= h_.heap_base + arena_ && c + bytes <= h_.heap_base + heap_bytes_;
  }

  CallInfo collective(Op op, const void* in, void* out, std::size_t bytes, DType t, ReduceOp rop, void* stream,
                      const std::string& algo) {
    const int world = h_.world;
    const Device on(mem_->device());
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
    // Runs check_args; in a team, the default block count is capped so every rank's blocks fit.
    const cuda::LaunchPlan plan = cuda::plan_launch_resident(a, t, bytes, world, choice.blocks, 0, h_);
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

  CudaOptions options_;
  std::string machine_;
  std::unique_ptr<cuda::RankMemory> mem_;
  std::map<cudaStream_t, std::unique_ptr<cuda::PlanExec>> plans_;  // host plans' side streams, per caller stream
  DeviceHandle h_;                                                 // mem_'s, with this communicator's wait bound
  cudaStream_t stream_ = nullptr;
  std::size_t heap_bytes_ = 0, fixed_ = 0, arena_ = 0;
  std::map<std::size_t, std::size_t> used_;  // arena offset -> bytes
};

}  // namespace

std::unique_ptr<Communicator> cuda_communicator(ncclComm_t comm, const CudaOptions& options) {
  return std::make_unique<CudaCommunicator>(comm, options);
}

std::vector<std::unique_ptr<Communicator>> cuda_node(const CudaNodeOptions& options) {
  if (auto why = cuda::team_world_refusal(options.world)) fail(ErrorCode::kInvalidArgument, "cuda_node: " + *why);
  // No programmatic dependent launch for a team's ranks (team_run.cpp says why). A hardware queue
  // per stream (apps/cmd_cuda.cpp says why): read when the process creates its CUDA context, so
  // this helps only if none exists yet (cuda.h asks callers to set it themselves).
  cuda::set_programmatic_launch(false);
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", /*overwrite=*/0);
  int gpus = 0;
  const cudaError_t e = cudaGetDeviceCount(&gpus);
  if (e != cudaSuccess || gpus == 0)
    fail(ErrorCode::kUnsupported, std::string("cuda_node: no CUDA device (") +
                                      (e != cudaSuccess ? cudaGetErrorString(e) : "the CUDA runtime sees none") + ")");
  if (options.gpus > 0) gpus = std::min(gpus, options.gpus);
  const std::size_t staging = up(options.cuda.staging_bytes);
  const std::size_t need = fixed_scratch_bytes(options.world) + staging;
  if (options.cuda.heap_bytes < need)
    fail(ErrorCode::kInvalidArgument, "cuda_node: heap_bytes " + std::to_string(options.cuda.heap_bytes) +
                                          " is below the fixed scratch plus staging (" + std::to_string(need) +
                                          " bytes)");
  int saved = 0;
  SYMM_CUDA_CHECK(cudaGetDevice(&saved));
  // Every kernel loaded now, while no rank runs (a module loaded lazily may synchronize the context).
  for (int g = 0; g < cuda::team_gpus_used(options.world, gpus); ++g) {
    SYMM_CUDA_CHECK(cudaSetDevice(g));
    cuda::preload_programs();
  }
  SYMM_CUDA_CHECK(cudaSetDevice(saved));
  std::vector<std::unique_ptr<cuda::RankMemory>> mem =
      cuda::RankMemory::in_process(options.world, gpus, options.cuda.heap_bytes);
  cudaDeviceProp prop{};
  SYMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const std::string machine = cuda::team_machine_name(prop.name, cuda::team_gpus_used(options.world, gpus));
  std::vector<std::unique_ptr<Communicator>> out;
  for (auto& m : mem) out.push_back(std::make_unique<CudaCommunicator>(std::move(m), machine, options.cuda));
  return out;
}

}  // namespace symm
