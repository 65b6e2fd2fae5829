// The host side of "no hang, ever": while a stream is not done, watch it and give up in seconds.
//
// A CUDA stream can stall on three kinds of waits:
//  - a device spin-wait of a core program (block_ctx.cuh): bounded on the device; the first one
//    that expires writes a WaitError into mapped pinned memory and poisons every later wait of
//    the rank, so the kernel drains at once. The host reads that record while it waits
//    (device_report below) instead of learning of it only after a synchronize returns;
//  - a stream wait of a host plan (a cuStreamWaitValue32 on a flag in device memory): nothing on
//    the device bounds it; PlanExec::wait_main (plan_exec.h) bounds the call and names the flag
//    that never came (it knows each wait it enqueued, and reads the flag through a probe stream);
//  - anything else that never finishes (a kernel or an NCCL call whose peer died): the bound here.
// Plain C++ (no CUDA): the stream and the record are reached through callables, so CI tests it
// without a GPU (tests/cuda). Runtime::sync (runtime.cpp) wires it to cudaStreamQuery.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace symm::cuda {

class Watchdog {
 public:
  enum class Outcome { kDone, kDeviceReport, kHostTimeout };
  struct Result {
    Outcome outcome = Outcome::kDone;
    std::string message;  // empty when kDone
    double waited_s = 0;
  };

  // done(): the stream has finished (all of its work, successfully or not);
  // device_report(): the first expired device wait, described, or nullopt;
  // bound_s: give up after this many seconds with nothing reported; poll_s: sleep between looks.
  Watchdog(std::function<bool()> done, std::function<std::optional<std::string>()> device_report, double bound_s,
           double poll_s = 0.0005);

  // Blocks until the stream is done, a device wait reports, or bound_s passes. A device
  // report wins over "done" (a drained kernel after a timeout still "finishes").
  Result wait() const;

  // "stream not done after 2.0 s: a kernel or NCCL call did not finish and no device wait
  // reported (...)".
  std::string describe_timeout(double waited_s) const;

 private:
  std::function<bool()> done_;
  std::function<std::optional<std::string>()> device_report_;
  double bound_s_, poll_s_;
};

}  // namespace symm::cuda
