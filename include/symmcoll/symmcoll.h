// symmcoll as a library: collectives over symmetric memory, called from your own program.
//
//   #include <symmcoll/symmcoll.h>       // this file: the interface, "auto" selection, the simulator
//   #include <symmcoll/cuda.h>           // the CUDA backend (adopts an existing ncclComm_t)
//
//   find_package(symmcoll REQUIRED)      // CMake: symmcoll::sim, and symmcoll::cuda when built with CUDA
//   target_link_libraries(app PRIVATE symmcoll::sim)
//
// One Communicator per rank. Calls follow NCCL's conventions: counts are elements (all_reduce:
// count; reduce_scatter: recvcount, the input holds recvcount x world; all_gather: sendcount, the
// output holds sendcount x world), every rank makes the same calls in the same order, and a call
// is enqueued on `stream` (CUDA: a cudaStream_t, nullptr = the communicator's own stream; the
// simulator: ignored) and complete after synchronize(). `algo` is a registry name (`symmcoll
// list`: alias, id suffix or full id) or "auto" (choose_algo below). Errors throw symm::Error
// (core/common.h) with one line naming the bad value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/auto_select.h"
#include "core/common.h"
#include "core/registry.h"

namespace symm {

// ---- "auto" ---------------------------------------------------------------------------------
// The algorithm "auto" runs: the entry of the machine's table experiments/auto/<machine>.csv
// (installed in share/symmcoll/auto; $SYMM_AUTO_DIR overrides) for this op, world, dtype, launch
// mode and size: the fastest correct algorithm measured on that machine, or predicted by the
// simulator where nothing was measured (core/auto_select.h has the neighbour and fallback rules).
// Without a table for `machine`: the op's flagged-packet (LL) program where the registry accepts
// the call, else two_shot / pull / push (auto_rule). The communicators pass their machine (the
// simulator's machine file; CUDA: the device name and world, e.g. h200x4) and launch mode, and
// run the table's block count too (auto_choose gives it, with a line saying why).
inline const AlgoInfo& choose_algo(Op op, std::size_t bytes, int world, DType t, const std::string& machine = "",
                                   bool graph = true) {
  return *auto_choose(AutoQuery{machine, op, bytes, world, t, graph}).algo;
}

// What a call ran. The simulator also fills the prediction when the call completed the
// collective (the last rank's call; see sim_node).
struct CallInfo {
  const AlgoInfo* algo = nullptr;
  std::size_t bytes = 0;     // nccl-tests size: all_reduce buffer, reduce_scatter input, all_gather output
  bool complete = false;     // the collective has run (simulator: every rank has called)
  double predicted_us = -1;  // simulator: predicted latency of the call on the simulated node
  int blocks = 0;            // simulator: the blocks the call ran (0: not known)
  double max_rel_err = -1;   // simulator: error of the simulated run vs the float64 reference (-1: timing-only)
  double err_bound = 0;      // simulator: the bound max_rel_err is held to (inputs in [-1, 1]; see sim_node)
  std::string trace_path;    // simulator with SimOptions::trace_dir: the call's timeline (Perfetto JSON)
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world() const = 0;
  virtual const char* backend() const = 0;  // "sim" or "cuda"

  // `bytes` of symmetric memory (CUDA: device memory inside this communicator's NCCL window, at
  // the same offset on every rank: every rank allocates in the same order). Collectives whose
  // `in` and `out` lie in it run in place; other buffers are staged through the communicator's
  // own symmetric buffers (two extra device copies). Freed by free() or with the communicator.
  virtual void* alloc(std::size_t bytes) = 0;
  virtual void free(void* p) = 0;

  virtual CallInfo all_reduce(const void* in, void* out, std::size_t count, DType t, ReduceOp op = ReduceOp::kSum,
                              void* stream = nullptr, const std::string& algo = "auto") = 0;
  virtual CallInfo reduce_scatter(const void* in, void* out, std::size_t recvcount, DType t,
                                  ReduceOp op = ReduceOp::kSum, void* stream = nullptr,
                                  const std::string& algo = "auto") = 0;
  virtual CallInfo all_gather(const void* in, void* out, std::size_t sendcount, DType t, void* stream = nullptr,
                              const std::string& algo = "auto") = 0;
  // Waits for every call enqueued so far (CUDA: the whole device, cudaDeviceSynchronize; throws
  // kTimeout naming rank, block and slot when a wait inside a collective expired).
  virtual void synchronize() = 0;
};

// ---- the simulator -----------------------------------------------------------------------
// A simulated node in this process: one Communicator per rank, called in turn from one thread
// (rank 0's call, then rank 1's, ...) or from one thread per rank. A collective runs when the
// last rank has called: the chosen algorithm runs on the simulated node and gives the predicted
// latency. Up to `check_up_to` bytes it runs with your data: the simulated program reads your
// `in` buffers and what it writes is copied into your `out` buffers (in place: `in` == `out`),
// then checked against the float64 reference of your inputs (core/reference.h): CallInfo says the
// error, and a call whose inputs all lie in [-1, 1] throws kInternal beyond err_bound (larger or
// non-finite inputs may cancel or overflow in fp32: reported, not enforced). Above check_up_to
// the call runs timing-only (no data) and `out` gets that reference rounded to the dtype
// (CallInfo::max_rel_err = -1 says so). Buffers are host memory (alloc() or any host pointer).
struct SimOptions {
  std::string machine = "h200x4";  // machine file name or path (symmcoll run --machine)
  int world = 0;                   // 0: the machine's GPU count
  bool graph = true;               // launch latency of a CUDA-graph replay (else eager)
  std::size_t check_up_to = std::size_t(16) << 20;
  std::uint64_t seed = 1;
  // Non-empty: every collective writes its timeline (Chrome trace-event JSON: open it in
  // ui.perfetto.dev) as <trace_dir>/call<N>_<algorithm id>.json, N counting from 0; CallInfo
  // names it. The directory must exist.
  std::string trace_dir;
};
std::vector<std::unique_ptr<Communicator>> sim_node(const SimOptions& options = {});

}  // namespace symm
