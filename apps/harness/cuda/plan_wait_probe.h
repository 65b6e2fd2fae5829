// The host plan watchdog's probe on the hardware (calibrate's plan_wait_timeout row, bench
// --probe-timeout): a call whose main stream waits for a flag nobody writes must end in the
// watchdog's kTimeout report; then the flag is written from another stream and the stuck stream
// drains, so the world stays usable.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "backends/cuda/plan_exec.h"
#include "backends/cuda/runtime.h"

namespace symm::cuda {

struct PlanWaitReport {
  std::string report;  // the kTimeout error's text
  double took_s = 0;   // from the wait's start to the report
};

// Runs `enqueue` (one call on x: begin_call .. end_call, whose main stream ends up waiting for
// rank-local plan slot `stuck` to hold `value`, which nothing writes), waits for x's watchdog with
// bound `bound_s` and returns its report (an error other than kTimeout, or none, is an error);
// then releases the stream (`value` written into `stuck` from another stream) and waits for it to
// drain. An in-process team's ranks all report before any releases. Every rank calls it.
PlanWaitReport probe_stuck_plan_wait(PlanExec& x, Runtime& rt, const std::function<void()>& enqueue, uint32_t stuck,
                                     uint32_t value, double bound_s, const std::string& what);

}  // namespace symm::cuda
