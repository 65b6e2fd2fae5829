// Chrome trace-event JSON (Perfetto opens it). A process per rank (pid = rank + 1) and, in it,
// a track per block (tid = block + 1), one for the stream (the kernel of each call) and one for
// the host (each call, and the launch within it): Perfetto treats pid / tid 0 as "none", so
// ids start at 1. Verbs are "X" slices; an enclosing slice (a block, a call) is written before
// what it encloses, and a track's slices are written in time order. An arrow (a signal to the
// wait it released, a put_ll to the reduce_ll its packets woke) is bound to its two slices
// explicitly: "bind_id" with "flow_out" on the first and "flow_in" on the second, so it cannot
// attach to another slice that shares a timestamp. A slice carries at most one arrow each way
// (a signal seen by several waits draws its arrow to the first). Link use is a counter track
// per GPU and direction ("nvlink egress", "nvlink ingress", "hbm", in GB/s). Only tracks and
// processes with events are named. Timestamps are printed from integer picoseconds, so the
// same run gives a byte-identical file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/sim/event_queue.h"
#include "core/output_file.h"

namespace symm::sim {

class Trace {
 public:
  // Track ids that are not blocks (blocks use block_tid(), < kPadBlocks + 1).
  static constexpr int kStreamTid = 1000;
  static constexpr int kHostTid = 999;         // below the streams (kStreamTid + s): stream 1 is 1001
  static constexpr int kCopyEngineTid = 1100;  // + engine index (host plans)
  static int pid(int rank) { return rank + 1; }
  static int block_tid(int block) { return block + 1; }

  // Opens `path` now (an OutputFile, core/output_file.h), so an unwritable path fails before
  // the run; a trace that is not finished leaves no file.
  explicit Trace(const std::string& path);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // Names, written (at finish) only for processes / tracks that got events.
  void process_name(int pid, const std::string& name);
  void thread_name(int pid, int tid, const std::string& name);
  // A slice; `encloses`: it contains the other slices of its track that start with it (a block,
  // a call), so it is written first. Returns a handle for arrow().
  uint32_t slice(int pid, int tid, const char* name, TimePs begin, TimePs end, const std::string& args = {},
                 bool encloses = false);
  // An arrow from slice `from` to slice `to` (handles from slice()); dropped if either already
  // carries an arrow that way.
  void arrow(uint32_t from, uint32_t to);
  void counter(int pid, const char* name, TimePs t, double GBps);
  // Writes everything and commits the file; throws kIo (the file and the reason) if it could not
  // be written.
  void finish();

 private:
  struct Event {
    char ph;  // 'X' or 'C'
    bool encloses;
    uint8_t flow;  // 1: flow_out, 2: flow_in
    int pid, tid;
    TimePs ts, dur;
    const char* name;
    uint64_t bind;
    double value;
    std::string args;
  };
  std::unique_ptr<OutputFile> out_;
  std::vector<Event> events_;
  std::map<int, std::string> process_names_;
  std::map<std::pair<int, int>, std::string> thread_names_;
};

}  // namespace symm::sim
