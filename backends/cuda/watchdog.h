// The host side of "no hang, ever": while a stream is not done, watch it and give up in seconds.
//
// A CUDA stream can stall on three kinds of waits:
//  - a device spin-wait of a core program (block_ctx.cuh): bounded on the device; the first one
//    that expires writes a WaitError into mapped pinned memory and poisons every later wait of
//    the rank, so the kernel drains at once. The host reads that record while it waits
//    (device_report below) instead of learning of it only after a synchronize returns;
//  - a stream wait of a host plan (a cuStreamWaitValue32 on a flag): nothing on the device
//    bounds it, so the host watches the flag itself (Watch: where, what value, what it means)
//    and, after the bound, names the flag that never came;
//  - anything else that never finishes (an NCCL call whose peer died): the same bound.
// Plain C++ (no CUDA): the stream and the record are reached through callables, so CI tests it
// without a GPU (tests/cuda). Runtime::sync (runtime.cpp) wires it to cudaStreamQuery.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace symm::cuda {

class Watchdog {
 public:
  // A stream wait of a host plan: done once *flag >= awaited (wrap-around compare, as
  // CU_STREAM_WAIT_VALUE_GEQ), read through a host-visible address (mapped pinned memory).
  struct Watch {
    const volatile uint32_t* flag = nullptr;
    uint32_t awaited = 0;
    std::string what;  // e.g. "all_gather chunk 3 from rank 1 (copy engine)"
  };
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

  // Host-plan waits that this stream has enqueued and may still block on.
  void add(Watch w) { watches_.push_back(std::move(w)); }
  void clear() { watches_.clear(); }
  const std::vector<Watch>& watches() const { return watches_; }

  // Blocks until the stream is done, a device wait reports, or bound_s passes. A device
  // report wins over "done" (a drained kernel after a timeout still "finishes").
  Result wait() const;

  // Whether a watch's flag has arrived (wrap-around >=, as CU_STREAM_WAIT_VALUE_GEQ).
  static bool arrived(uint32_t seen, uint32_t awaited) { return int32_t(seen - awaited) >= 0; }
  // "stream not done after 2.0 s: <what> never came (flag expected >= 7, saw 6)[; ...]", or,
  // with every watched flag arrived (or none watched), what else may be stuck.
  std::string describe_timeout(double waited_s) const;

 private:
  std::function<bool()> done_;
  std::function<std::optional<std::string>()> device_report_;
  double bound_s_, poll_s_;
  std::vector<Watch> watches_;
};

}  // namespace symm::cuda
