// The collective bench's error-path probes (bench_impl.h; --probe-timeout): a device wait nobody
// will ever satisfy, run under a short spin bound, must end in the kTimeout message that
// describe_wait_timeout promises (rank, block, slot or packet, expected and seen value), and
// leave the world usable; the same for a host plan's stream wait (the watchdog's report).
#include <cuda_runtime.h>

#include <cstdio>
#include <functional>
#include <string>

#include "apps/harness/cuda/bench_impl.h"
#include "apps/harness/cuda/plan_wait_probe.h"
#include "backends/cuda/check.h"
#include "backends/cuda/kernels.h"
#include "core/signal_pad.h"

namespace symm::cuda::coll_bench {

void Bench::probe_timeout() {
  const int from = (rt_.rank() + 1) % rt_.world();
  const uint32_t slot = pad::flag(pad::kChannels - 1, 0, from);
  expect_probe("probe-timeout",
               timeout_message([&] { launch_wait_probe(rt_.handle(), slot, 0xFFFFFFF0u, rt_.stream()); }),
               "rank " + std::to_string(rt_.rank()) + " block 0 timed out waiting on slot " + std::to_string(slot) +
                   " (channel " + std::to_string(pad::kChannels - 1) + ", from rank " + std::to_string(from) +
                   "): expected >= 4294967280, saw 0");
  // The flagged-packet wait: reduce_ll on a zeroed packet buffer nobody writes.
  const std::size_t off = 64 << 10;
  expect_probe("probe-timeout-ll", timeout_message([&] {
                 SYMM_CUDA_CHECK(cudaMemsetAsync(rt_.heap() + off, 0, 4096, rt_.stream()));
                 launch_ll_probe(rt_.handle(), rt_.heap() + off, rt_.heap() + off + 2048, 0xFFFFFFF0u, rt_.stream());
               }),
               "rank " + std::to_string(rt_.rank()) + " block 0 timed out waiting for packets at heap offset " +
                   std::to_string(off) + " (packet 0 of that buffer): expected epoch 4294967280, saw 0");
  probe_plan_wait();
  rt_.barrier();  // the world is still usable after a reported timeout
}

// A host plan's stream waits, batched (plan_exec.h): [write flag A to myself, wait A, wait B] on
// the main stream with B never written: the watchdog must name B, not A (the two waits share the
// batch's event), then the stuck stream is released (B written from another stream) and drains.
void Bench::probe_plan_wait() {
  PlanExec& x = plan_exec();
  const int me = rt_.rank();
  const uint32_t a = pad::plan_flag(pad::kPlanData, 0, me), b = pad::plan_flag(pad::kPlanData, 1, me);
  const PlanWaitReport r = probe_stuck_plan_wait(
      x, rt_,
      [&] {
        x.begin_call();
        x.write_flag(0, me, a, 1);
        x.wait_flag(0, a, 1);
        x.wait_flag(0, b, 7);
        x.end_call();
      },
      b, 7, 0.5, "probe");
  const std::string msg = r.report.substr(0, r.report.find(" [probe"));
  expect_probe("probe-timeout-plan", msg,
               "rank " + std::to_string(me) + " stream 0 timed out waiting on " + pad::describe_plan_slot(b) +
                   ": expected 7, saw 0 (wait 2 of the 2 enqueued since the last drain)");
}

std::string Bench::timeout_message(const std::function<void()>& launch) {
  struct Restore {
    Runtime& rt;
    unsigned long long cycles;
    ~Restore() { rt.set_timeout_cycles(cycles); }
  } restore{rt_, rt_.handle().timeout_cycles};
  rt_.set_timeout_cycles(2'000'000);  // ~1 ms
  rt_.set_context("");
  launch();
  try {
    rt_.sync();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kTimeout) throw;
    rt_.recover();  // the poisoned probe has drained: clear the record for the next one
    return e.what();
  }
  return "";
}

void Bench::expect_probe(const char* what, const std::string& msg, const std::string& want) {
  if (msg != want) {
    ++failures_;
    std::fprintf(stderr, "FAIL %s rank %d: got '%s', want '%s'\n", what, rt_.rank(), msg.c_str(), want.c_str());
  } else {
    std::printf("%s rank %d ok: %s\n", what, rt_.rank(), msg.c_str());
  }
  std::fflush(stdout);
}

}  // namespace symm::cuda::coll_bench
