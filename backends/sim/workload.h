// What one run of the engine (simulator.h) runs: exactly one of three workloads, each call of
// the run on every rank.
//   device program  the host writes fresh inputs, launches one kernel (a ProgramFn over the
//                   registry entry's in / out / scratch) and waits for it (host.cpp)
//   host plan       the host writes fresh inputs, a PlanFn enqueues onto the rank's streams
//                   (copy engines, flags, events, GEMMs, kernels) and the streams run dry
//                   (streams.cpp)
//   custom          a plan over a heap the workload lays out itself, with its own inputs and
//                   check (CustomRun: the fused matmuls, fused.cpp); no registry entry
// The first two need RunSpec::algo (sizes, limits, the output check); a custom run has none.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "backends/sim/ctx.h"
#include "backends/sim/streams.h"

namespace symm::sim {

// A run whose host plan is not a collective of the registry (the fused matmuls, fused.cpp): it
// sizes each rank's symmetric heap itself, writes its own inputs into it and checks every rank's
// heap when a call has ended on all of them.
struct CustomRun {
  uint64_t heap_bytes = 0;
  // Enqueues rank h's call; `base` is the rank's heap address (symmetric: h.peer maps it).
  std::function<void(SimHost& h, char* base)> plan;
  // With data: fills the rank's heap (host memory) before each call.
  std::function<void(int rank, uint8_t* heap)> write_inputs;
  // With data: every rank's heap after a call; returns the worst relative error.
  std::function<double(const std::vector<const uint8_t*>& heaps)> check;
};

class Workload {
 public:
  enum class Kind : uint8_t { kDeviceProgram, kHostPlan, kCustom };

  static Workload program(ProgramFn fn) { return Workload(Kind::kDeviceProgram, fn, nullptr, nullptr); }
  static Workload plan(PlanFn fn) { return Workload(Kind::kHostPlan, nullptr, fn, nullptr); }
  // `run` must outlive the Simulator.
  static Workload custom(const CustomRun& run) { return Workload(Kind::kCustom, nullptr, nullptr, &run); }

  Kind kind() const { return kind_; }
  // Host plans and custom runs enqueue on streams (and reach the heap through raw pointers).
  bool on_streams() const { return kind_ != Kind::kDeviceProgram; }
  ProgramFn program() const { return fn_; }
  PlanFn plan() const { return plan_; }
  const CustomRun& custom() const { return *custom_; }

 private:
  Workload(Kind k, ProgramFn fn, PlanFn plan, const CustomRun* custom)
      : kind_(k), fn_(fn), plan_(plan), custom_(custom) {}
  Kind kind_;
  ProgramFn fn_;
  PlanFn plan_;
  const CustomRun* custom_;
};

}  // namespace symm::sim
