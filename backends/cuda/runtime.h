// One rank's CUDA runtime (host owner): device, stream, its symmetric memory (rank_memory.h: heap,
// signal pad, peer tables, wait-error record) and how it meets its team. Two kinds of team:
//  - one process per GPU: an NCCL communicator; memory from RankMemory::nccl_windows; meetings
//    are NCCL all-reduces;
//  - a rank of an in-process team (team.h), in its own host thread: memory made for the whole
//    team by RankMemory::in_process; meetings through the Team; no NCCL (comm() is nullptr).
// Everything above this class (device programs, host plans, fused plans, the benches) is the same
// for both.
//
// Bootstrap: rank 0 creates the NCCL unique id and publishes it as the file
// $SYMM_RUN_DIR/nccl_id (written to a temporary, then renamed); the other ranks poll for it
// for at most SYMM_BOOTSTRAP_TIMEOUT_S seconds (default 120). `symmcoll launch` creates a
// fresh private directory with mkdtemp and removes it afterwards; under torchrun / mpirun set
// SYMM_RUN_DIR to a fresh directory on this host yourself.
//
// No hang: sync() never blocks in cudaStreamSynchronize. It polls the stream and the mapped
// wait-error record (Watchdog, watchdog.h) and throws kTimeout, naming the wait and the call
// (set_context), as soon as a device wait expires, or when the stream has not finished after
// the stream bound. The caller then abort()s: NCCL's communicator is aborted (ncclCommAbort),
// nothing waits for the device again, and the process exits non-zero; `symmcoll launch` stops
// the other ranks.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "backends/cuda/device_handle.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/rank_memory.h"
#include "backends/cuda/verb_trace.h"

namespace symm::cuda {

class Team;

class Runtime {
 public:
  // timeout_cycles: the device wait bound (0: SYMM_WAIT_TIMEOUT_CYCLES, or SYMM_WAIT_TIMEOUT_S
  // seconds at this device's clock). multicast: the run needs a multicast address of the heap
  // (asked of NCCL only where no safety variable forbids it; heap_mc() says what came back).
  Runtime(const RankEnv& env, std::size_t heap_bytes, unsigned long long timeout_cycles, bool multicast = false);
  // Rank mem.handle().rank of an in-process team, built in that rank's own thread (it makes
  // mem.device() current for the thread). `mem` stays the team owner's (run_team's caller).
  Runtime(Team& team, const RankMemory& mem, unsigned long long timeout_cycles);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int rank() const { return h_.rank; }
  int world() const { return h_.world; }
  ncclComm_t comm() const { return comm_; }  // nullptr in an in-process team
  Team* team() const { return team_; }       // nullptr with one process per GPU
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  char* heap() const { return h_.heap_base; }
  std::size_t heap_bytes() const { return heap_bytes_; }
  const DeviceHandle& handle() const { return h_; }
  const std::string& device_name() const { return device_name_; }
  // The machine column of this run's rows: "h200x4" with one process per GPU (device, world), an
  // in-process team's by device and GPU count ("h200x1"; team_machine_name, team.h).
  const std::string& machine() const { return machine_; }
  void set_timeout_cycles(unsigned long long c) { h_.timeout_cycles = c; }
  unsigned long long timeout_cycles() const { return h_.timeout_cycles; }
  double stream_timeout_s() const { return stream_timeout_s_; }
  // The device waits' bound in force (timeout_cycles at the device's clock), in seconds.
  double wait_timeout_s() const { return double(h_.timeout_cycles) / (double(clock_khz_) * 1e3); }
  // A traced call (verb_trace.h): the device programs launched with verb_trace() from now on
  // stamp their verbs into `stamps` (cap per block); nullptr: untraced (the default).
  void set_verb_trace(VerbStamp* stamps, uint32_t cap) { verb_trace_ = VerbTraceBuf{stamps, stamps ? cap : 0}; }
  const VerbTraceBuf& verb_trace() const { return verb_trace_; }
  // Multicast address of heap offset 0 (NVLS set up by NCCL), or nullptr.
  char* heap_mc() const { return heap_mc_; }

  // What the stream is doing, for error messages ("all_reduce one_shot bf16 65536 B, graph of
  // 100 calls"); sync() appends it to a timeout.
  void set_context(std::string what) { context_ = std::move(what); }
  const std::string& context() const { return context_; }

  // Waits for the stream (Watchdog: polls it and the wait-error record). Throws kTimeout the
  // moment a device wait of this rank has expired, or when the stream is not done after
  // stream_timeout_s(); throws kCuda if the stream failed. A host plan's stream waits are bounded
  // and named by PlanExec::wait_main (plan_exec.h), which its caller runs before this.
  void sync();
  // After a reported device timeout that the caller survives (the error-path probes only):
  // waits until the poisoned kernels have drained, then clears the record and the poison.
  void recover();
  // After any failure: aborts the NCCL communicator so no rank blocks in NCCL for a peer that
  // will not come, and makes the destructor skip every call that could wait for the device.
  void abort() noexcept;
  bool aborted() const { return aborted_; }
  // All ranks meet, each with its stream drained (NCCL: a one-element all-reduce, synchronised;
  // a team: sync(), then the team's barrier).
  void barrier();
  // Element-wise maximum over ranks of v[0..n), n <= 8, in place (NCCL: an all-reduce on the
  // stream, synchronised; a team: on the host). Every rank calls it alike.
  void reduce_max(double* v, int n);

 private:
  // What both kinds of team do once the memory is there: the device's name and clock, the bounds.
  void finish_setup(unsigned long long timeout_cycles);

  DeviceHandle h_;
  VerbTraceBuf verb_trace_;
  ncclComm_t comm_ = nullptr;
  Team* team_ = nullptr;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<RankMemory> own_mem_;  // one process per GPU; a team's belongs to its owner
  const RankMemory* mem_ = nullptr;
  std::size_t heap_bytes_ = 0;
  float* one_ = nullptr;
  double* stat_buf_ = nullptr;  // reduce_max's device buffer (NCCL)
  std::string device_name_, machine_;
  std::string context_;
  double stream_timeout_s_ = 0;
  int clock_khz_ = 1;  // the device's clock (cudaDevAttrClockRate), for wait_timeout_s
  char* heap_mc_ = nullptr;
  void* devcomm_ = nullptr;  // NCCL device communicator holding the multicast team, when asked
  bool aborted_ = false;

  std::optional<std::string> device_report() const;
};

}  // namespace symm::cuda
