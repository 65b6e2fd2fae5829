// The host-side watchdog (backends/cuda/watchdog.h) without a GPU: a fake stream and a fake
// wait-error record stand in for cudaStreamQuery and the mapped pinned memory.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "backends/cuda/watchdog.h"

namespace symm::cuda {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

TEST(Watchdog, ReturnsWhenTheStreamIsDone) {
  std::atomic<int> polls{0};
  const Watchdog w([&] { return ++polls >= 3; }, [] { return std::optional<std::string>(); }, 5.0);
  const Watchdog::Result r = w.wait();
  EXPECT_EQ(r.outcome, Watchdog::Outcome::kDone);
  EXPECT_EQ(r.message, "");
  EXPECT_EQ(polls.load(), 3);
}

// A device report ends the wait at once, while the stream is still running: the host must not
// wait for a stream that would only finish after every later wait spun its bound.
TEST(Watchdog, DeviceReportEndsTheWaitBeforeTheStream) {
  std::atomic<bool> tripped{false};
  std::thread device([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    tripped = true;
  });
  const auto t0 = Clock::now();
  const Watchdog w([] { return false; },
                   [&]() -> std::optional<std::string> {
                     if (!tripped) return std::nullopt;
                     return std::string("rank 1 block 0 timed out waiting on slot 3");
                   },
                   10.0);
  const Watchdog::Result r = w.wait();
  device.join();
  EXPECT_EQ(r.outcome, Watchdog::Outcome::kDeviceReport);
  EXPECT_EQ(r.message, "rank 1 block 0 timed out waiting on slot 3");
  EXPECT_LT(since(t0), 1.0);
}

// A kernel that timed out drains and its stream "finishes": the report still wins.
TEST(Watchdog, ReportWinsOverAFinishedStream) {
  const Watchdog w([] { return true; }, [] { return std::optional<std::string>("expired"); }, 1.0);
  EXPECT_EQ(w.wait().outcome, Watchdog::Outcome::kDeviceReport);
}

// Nothing reported and the stream not done: after the bound, what may be stuck.
TEST(Watchdog, HostTimeoutSaysWhatMayBeStuck) {
  const Watchdog w([] { return false; }, [] { return std::optional<std::string>(); }, 0.02);
  const Watchdog::Result r = w.wait();
  EXPECT_EQ(r.outcome, Watchdog::Outcome::kHostTimeout);
  EXPECT_GE(r.waited_s, 0.02);
  EXPECT_EQ(r.message.rfind("stream not done after ", 0), 0u) << r.message;
  EXPECT_NE(r.message.find("a kernel or NCCL call did not finish"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace symm::cuda
