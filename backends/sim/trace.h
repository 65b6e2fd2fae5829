// Chrome trace-event JSON (Perfetto opens it): a pid per rank, a tid per block / stream /
// host / link, "X" slices for verbs, "s"/"f" flow arrows from a signal to the wait it
// releases, "C" counters for link load. Timestamps are printed from integer picoseconds,
// so the same run gives a byte-identical file.
#pragma once

#include <cstdio>
#include <string>

#include "backends/sim/event_queue.h"

namespace symm::sim {

class Trace {
 public:
  // Thread ids that are not blocks (blocks use their index, < kPadBlocks).
  static constexpr int kStreamTid = 1000;
  static constexpr int kHostTid = 1001;
  static constexpr int kCopyEngineTid = 1100;  // + engine index
  static constexpr int kLinkTid = 1200;

  // Opens (and truncates) `path` now, so an unwritable path fails before the run.
  explicit Trace(const std::string& path);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  void process_name(int pid, const std::string& name);
  void thread_name(int pid, int tid, const std::string& name);
  void slice(int pid, int tid, const char* name, TimePs begin, TimePs end, const std::string& args = {});
  void flow_begin(int pid, int tid, uint64_t id, TimePs t);
  void flow_end(int pid, int tid, uint64_t id, TimePs t);
  void counter(int pid, const char* name, TimePs t, double egress_GBps, double ingress_GBps);
  // Writes the closing bracket and flushes; throws kIo if the file could not be written.
  void finish();

 private:
  void flow(const char* phase, int pid, int tid, uint64_t id, TimePs t);
  void begin_event();
  std::string path_;
  std::FILE* f_ = nullptr;
  std::string buf_;
  bool first_ = true;
};

}  // namespace symm::sim
