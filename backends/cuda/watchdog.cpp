#include "backends/cuda/watchdog.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace symm::cuda {

Watchdog::Watchdog(std::function<bool()> done, std::function<std::optional<std::string>()> device_report,
                   double bound_s, double poll_s)
    : done_(std::move(done)), device_report_(std::move(device_report)), bound_s_(bound_s), poll_s_(poll_s) {}

Watchdog::Result Watchdog::wait() const {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  for (;;) {
    // Read the record before asking the stream: a kernel that timed out drains quickly, and
    // its report must not be lost to a stream that has meanwhile finished.
    if (auto r = device_report_()) return Result{Outcome::kDeviceReport, *r, elapsed()};
    if (done_()) {
      if (auto r = device_report_()) return Result{Outcome::kDeviceReport, *r, elapsed()};
      return Result{Outcome::kDone, "", elapsed()};
    }
    const double t = elapsed();
    if (t > bound_s_) return Result{Outcome::kHostTimeout, describe_timeout(t), t};
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_s_));
  }
}

std::string Watchdog::describe_timeout(double waited_s) const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", waited_s);
  return std::string("stream not done after ") + buf +
         " s: a kernel or NCCL call did not finish and no device wait reported (a peer rank died or never called?)";
}

}  // namespace symm::cuda
