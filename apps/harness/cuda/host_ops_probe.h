// calibrate's host_* rows: what the host spends enqueuing one item of an eager host plan, by kind
// (beside the simulator's host chain: sim.h host_launch_us). No peer needed: every world, one GPU too.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "backends/cuda/runtime.h"

namespace symm::cuda {

struct HostOpRow {
  const char* bench;  // host_launch, host_copy, host_record, host_wait_event, host_flag_write, ...
  double us;          // host time per item: the median over the samples
};

// Items per sample (the rows' x): far below a stream's queue, so the host never waits for room.
inline constexpr int kHostOps = 200;

// Each kind of item enqueued kHostOps times back to back onto rt.stream() while a flag wait at its
// head holds it (so no item meets an idle stream and none waits for the GPU), the host's clock
// around them; then the flag is written from a side stream and rt.sync() (bounded) drains it.
// launch_empty enqueues one empty kernel on rt.stream() (calibrate's kEmpty, as plans launch).
std::vector<HostOpRow> probe_host_ops(Runtime& rt, const std::function<void()>& launch_empty, int samples);

}  // namespace symm::cuda
