#include "backends/sim/trace.h"

#include <cinttypes>

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

Trace::Trace(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) fail(ErrorCode::kIo, "cannot write trace file '" + path + "'");
  buf_ = "{\"traceEvents\":[\n";
}

Trace::~Trace() {
  if (f_) std::fclose(f_);
}

void Trace::begin_event() {
  if (!first_) buf_ += ",\n";
  first_ = false;
  if (buf_.size() > (1u << 20)) {
    std::fwrite(buf_.data(), 1, buf_.size(), f_);
    buf_.clear();
  }
}

void Trace::process_name(int pid, const std::string& name) {
  begin_event();
  buf_ += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
          ",\"tid\":0,\"args\":{\"name\":\"" + name + "\"}}";
}

void Trace::thread_name(int pid, int tid, const std::string& name) {
  begin_event();
  buf_ += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
          ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":\"" + name + "\"}}";
}

void Trace::slice(int pid, int tid, const char* name, TimePs begin, TimePs end, const std::string& args) {
  begin_event();
  buf_ += "{\"name\":\"";
  buf_ += name;
  buf_ += "\",\"ph\":\"X\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
  append_us(buf_, begin);
  buf_ += ",\"dur\":";
  append_us(buf_, end - begin);
  if (!args.empty()) buf_ += ",\"args\":{" + args + "}";
  buf_ += "}";
}

// One end of a flow arrow: "s" at the signal (or put_ll), "f" bound to the enclosing slice
// ("bp":"e") at the wait it releases.
void Trace::flow(const char* phase, int pid, int tid, uint64_t id, TimePs t) {
  begin_event();
  buf_ += std::string("{\"name\":\"flag\",\"cat\":\"flag\",\"ph\":\"") + phase + "\"" +
          (phase[0] == 'f' ? ",\"bp\":\"e\"" : "") + ",\"id\":" + std::to_string(id) +
          ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
  append_us(buf_, t);
  buf_ += "}";
}

void Trace::flow_begin(int pid, int tid, uint64_t id, TimePs t) { flow("s", pid, tid, id, t); }
void Trace::flow_end(int pid, int tid, uint64_t id, TimePs t) { flow("f", pid, tid, id, t); }

void Trace::counter(int pid, const char* name, TimePs t, double egress_GBps, double ingress_GBps) {
  begin_event();
  char b[96];
  buf_ += "{\"name\":\"";
  buf_ += name;
  buf_ += "\",\"ph\":\"C\",\"pid\":" + std::to_string(pid) + ",\"ts\":";
  append_us(buf_, t);
  std::snprintf(b, sizeof b, ",\"args\":{\"egress\":%.3f,\"ingress\":%.3f}}", egress_GBps, ingress_GBps);
  buf_ += b;
}

void Trace::finish() {
  buf_ += "\n],\"displayTimeUnit\":\"ns\"}\n";
  const bool ok = std::fwrite(buf_.data(), 1, buf_.size(), f_) == buf_.size();
  const bool closed = std::fclose(f_) == 0;
  f_ = nullptr;
  if (!ok || !closed) fail(ErrorCode::kIo, "could not write trace file '" + path_ + "'");
}

}  // namespace symm::sim
