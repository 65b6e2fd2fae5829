// The collective bench's buffers and calls (bench_impl.h): where a case's input and output live
// (plain buffers for NCCL's `nccl` baseline, the symmetric heap for the others), what one call of
// a case enqueues (our device programs and host plans, NCCL's collectives), and NCCL's
// copy-engine all-gather on a communicator split off with CTA policy ZERO.
#include <nccl.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "apps/harness/cuda/bench_common.h"
#include "apps/harness/cuda/bench_impl.h"
#include "backends/cuda/check.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/nvtx.h"
#include "backends/cuda/plan_exec.h"
#include "core/coll_args.h"
#include "core/heap_layout.h"
#include "core/registry.h"

namespace symm::cuda::coll_bench {
namespace {

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::kSum ? ncclSum : op == ReduceOp::kMax ? ncclMax : ncclMin; }

}  // namespace

Bench::Bench(const BenchOptions& o, Runtime& rt, const TestRankOverrides& test)
    : o_(o), rt_(rt), test_(test), timer_(rt, o.iters) {
  machine_ = o.machine.empty() ? rt.machine() : o.machine;
  csv_.open(rt, o.csv, csv_header());
  // Made now, before any rank launches: its allocations (pinned, device) may wait for the
  // device, which in an in-process team holds the other ranks' spinning kernels.
  plan_exec();
}

Bench::~Bench() {
  if (rt_.aborted()) {  // a free would wait for the device: the process is exiting
    plain_in_.forget();
    plain_out_.forget();
    return;
  }
  if (ce_.win) ncclCommWindowDeregister(ce_.comm, ce_.win);
  if (ce_.comm) ncclCommDestroy(ce_.comm);
}

void Bench::alloc_plain(std::size_t in_bytes, std::size_t out_bytes) {
  if (!o_.nccl) return;  // only the `nccl` baseline runs on plain buffers
  plain_in_ = PlainBuffer(in_bytes, rt_.comm());
  plain_out_ = PlainBuffer(out_bytes, rt_.comm());
}

Bench::Buffers Bench::buffers(const Case& c, Op op, std::size_t bytes) {
  if (!c.info && !c.symm) return Buffers{plain_in_.get(), plain_out_.get(), nullptr};
  if (c.plan()) {
    const HeapLayout l = heap_layout(*c.info, bytes, rt_.world());
    return Buffers{rt_.heap() + l.in, rt_.heap() + l.out, rt_.heap() + l.scratch};
  }
  const AlgoInfo& a =
      c.info ? *c.info
             : *std::find_if(algorithms().begin(), algorithms().end(), [&](const AlgoInfo& x) { return x.op == op; });
  const HeapLayout l = heap_layout(a, bytes, rt_.world());
  return Buffers{rt_.heap() + l.in, rt_.heap() + l.out, rt_.heap() + l.scratch};
}

std::function<void()> Bench::enqueue(const Case& c, Op op, DType t, std::size_t bytes, std::size_t count,
                                     const LaunchPlan* plan) {
  const Buffers b = buffers(c, op, bytes);
  cudaStream_t s = rt_.stream();
  // One NVTX range per call (nsys shows it), labelled once per case.
  const auto label = std::make_shared<const std::string>("symmcoll " + describe(c, op, t, bytes));
  if (c.plan()) {
    PlanArgs pa;
    pa.coll.in = b.in;
    pa.coll.out = b.out;
    pa.coll.scratch = b.scratch;
    pa.coll.count = count;
    pa.coll.op = o_.rop;
    pa.chunk_bytes = o_.chunk_bytes;
    pa.sm_percent = o_.sm_percent;
    pa.blocks = plan->blocks;
    PlanExec* x = &plan_exec();
    const AlgoInfo* k = c.info;
    if (test_.skip_rank == rt_.rank()) return [=]() { NvtxRange r(label->c_str()); };  // testing: never calls
    return [=]() {
      NvtxRange r(label->c_str());
      x->enqueue(*k, t, pa);
    };
  }
  if (c.info) {
    CollArgs a;
    a.in = b.in;
    a.out = b.out;
    a.scratch = b.scratch;
    a.count = count;
    a.op = o_.rop;
    if (rt_.heap_mc()) a.out_mc = rt_.heap_mc() + (static_cast<char*>(b.out) - rt_.heap());
    const DeviceHandle* h = &rt_.handle();
    const VerbTraceBuf* trace = &rt_.verb_trace();  // set only while a call is traced (trace_out.h)
    const AlgoInfo* info = c.info;
    const LaunchPlan p = *plan;
    if (test_.skip_rank == rt_.rank()) return [=]() { NvtxRange r(label->c_str()); };  // testing: never calls
    return [=]() {
      NvtxRange r(label->c_str());
      launch_program(*info, t, *h, a, p.blocks, p.threads, s, *trace);
    };
  }
  ncclComm_t comm = c.ce ? ce_.comm : rt_.comm();
  const ncclDataType_t nt = nccl_type(t);
  const ncclRedOp_t nop = nccl_op(o_.rop);
  switch (op) {
    case Op::kAllReduce:
      return [=]() {
        NvtxRange r(label->c_str());
        SYMM_CUDA_CHECK(ncclAllReduce(b.in, b.out, count, nt, nop, comm, s));
      };
    case Op::kReduceScatter:
      return [=]() {
        NvtxRange r(label->c_str());
        SYMM_CUDA_CHECK(ncclReduceScatter(b.in, b.out, count, nt, nop, comm, s));
      };
    case Op::kAllGather:
      return [=]() {
        NvtxRange r(label->c_str());
        SYMM_CUDA_CHECK(ncclAllGather(b.in, b.out, count, nt, comm, s));
      };
    default: fail(ErrorCode::kInternal, "no NCCL baseline for this op");
  }
}

void Bench::settle(const Case& c, std::size_t bytes) {
  if (c.plan()) plan_exec().wait_main(o_.plan_timeout_s, c.info->id + " bytes=" + std::to_string(bytes));
}

PlanExec& Bench::plan_exec() {
  if (!plan_exec_) {
    plan_exec_ = std::make_unique<PlanExec>(rt_.handle(), rt_.stream(), o_.streams, kDefaultThreads);
    plan_exec_->release_on_failure(!rt_.team());  // before the NCCL abort, which would wait for them
    set_team_lockstep(rt_, *plan_exec_);
  }
  return *plan_exec_;
}

bool Bench::nccl_ce() {
  if (ce_.tried) return ce_.comm != nullptr;
  ce_.tried = true;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.CTAPolicy = NCCL_CTA_POLICY_ZERO;
  ncclComm_t comm = nullptr;
  if (ncclCommSplit(rt_.comm(), 0, rt_.rank(), &comm, &cfg) != ncclSuccess || !comm) {
    note("nccl_ce skipped: ncclCommSplit with CTA policy ZERO failed");
    return false;
  }
  if (ncclCommWindowRegister(comm, rt_.heap(), rt_.heap_bytes(), &ce_.win, NCCL_WIN_COLL_SYMMETRIC) != ncclSuccess) {
    note("nccl_ce skipped: registering the heap as a symmetric window failed");
    ncclCommDestroy(comm);
    return false;
  }
  ce_.comm = comm;
  return true;
}

}  // namespace symm::cuda::coll_bench
