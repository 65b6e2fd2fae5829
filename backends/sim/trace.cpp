#include "backends/sim/trace.h"

#include <algorithm>
#include <cinttypes>
#include <set>

#include "core/common.h"

namespace symm::sim {
namespace {

// "12.345678": microseconds with picosecond digits, from integers (no float formatting).
void append_us(std::string& s, TimePs t) {
  char b[40];
  std::snprintf(b, sizeof b, "%" PRId64 ".%06" PRId64, t / kPsPerUs, t % kPsPerUs);
  s += b;
}

}  // namespace

Trace::Trace(const std::string& path) : out_(std::make_unique<OutputFile>(path)) {}

Trace::~Trace() = default;

void Trace::process_name(int pid, const std::string& name) { process_names_[pid] = name; }

void Trace::thread_name(int pid, int tid, const std::string& name) { thread_names_[{pid, tid}] = name; }

uint32_t Trace::slice(int pid, int tid, const char* name, TimePs begin, TimePs end, const std::string& args,
                      bool encloses) {
  events_.push_back(Event{'X', encloses, 0, pid, tid, begin, end - begin, name, 0, 0, args});
  return uint32_t(events_.size() - 1);
}

void Trace::arrow(uint32_t from, uint32_t to) {
  Event &a = events_[from], &b = events_[to];
  if (a.flow || b.flow) return;
  a.flow = 1, b.flow = 2;
  a.bind = b.bind = uint64_t(from) + 1;
}

void Trace::counter(int pid, const char* name, TimePs t, double GBps) {
  events_.push_back(Event{'C', false, 0, pid, 0, t, 0, name, 0, GBps, {}});
}

void Trace::finish() {
  // Time order; at equal ts an enclosing slice first; otherwise the order of recording (a
  // block's verbs are recorded in program order, so zero-length ones keep theirs, and an
  // arrow's end is recorded after its start).
  std::vector<uint32_t> order(events_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    const Event &a = events_[x], &b = events_[y];
    if (a.ts != b.ts) return a.ts < b.ts;
    return a.encloses && !b.encloses;
  });
  std::set<int> pids;
  std::set<std::pair<int, int>> tracks;
  for (const Event& e : events_) {
    pids.insert(e.pid);
    if (e.ph == 'X') tracks.insert({e.pid, e.tid});
  }
  std::string buf = "{\"traceEvents\":[\n";
  bool first = true;
  auto next = [&] {
    if (!first) buf += ",\n";
    first = false;
    if (buf.size() > (1u << 20)) {
      out_->write(buf);
      buf.clear();
    }
  };
  for (const auto& [pid, name] : process_names_) {
    if (!pids.count(pid)) continue;
    next();
    buf += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"args\":{\"name\":\"" + name +
           "\"}}";
  }
  for (const auto& [track, name] : thread_names_) {
    if (!tracks.count(track)) continue;
    next();
    buf += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(track.first) +
           ",\"tid\":" + std::to_string(track.second) + ",\"args\":{\"name\":\"" + name + "\"}}";
  }
  for (uint32_t i : order) {
    const Event& e = events_[i];
    next();
    buf += "{\"name\":\"";
    buf += e.name;
    if (e.ph == 'X') {
      buf += "\",\"ph\":\"X\",\"pid\":" + std::to_string(e.pid) + ",\"tid\":" + std::to_string(e.tid) + ",\"ts\":";
      append_us(buf, e.ts);
      buf += ",\"dur\":";
      append_us(buf, e.dur);
      if (!e.args.empty()) buf += ",\"args\":{" + e.args + "}";
      if (e.flow)
        buf += ",\"bind_id\":" + std::to_string(e.bind) + (e.flow == 1 ? ",\"flow_out\":true" : ",\"flow_in\":true");
      buf += "}";
    } else {
      char b[64];
      buf += "\",\"ph\":\"C\",\"pid\":" + std::to_string(e.pid) + ",\"ts\":";
      append_us(buf, e.ts);
      std::snprintf(b, sizeof b, ",\"args\":{\"GB/s\":%.3f}}", e.value);
      buf += b;
    }
  }
  buf += "\n],\"displayTimeUnit\":\"ns\"}\n";
  out_->write(buf);
  out_->commit();
}

}  // namespace symm::sim
