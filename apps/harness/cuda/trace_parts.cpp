// The files of `bench --backend cuda --trace` (trace_parts.h): no CUDA call in here.
#include "apps/harness/cuda/trace_parts.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/sim/trace.h"
#include "core/output_file.h"

namespace symm::cuda {
namespace {

// Never before the zero (the trace format prints unsigned picoseconds).
sim::TimePs ps(double us) { return sim::TimePs(std::llround(std::max(us, 0.0) * 1e6)); }

}  // namespace

std::string trace_part(const std::string& path, int rank) { return path + ".rank" + std::to_string(rank); }

void write_rank_trace(const std::string& path, int rank, int device, const std::vector<PlanSpan>& spans,
                      const std::vector<HostSpan>& host) {
  sim::Trace t(path);
  const int pid = sim::Trace::pid(rank);
  t.process_name(pid, "rank " + std::to_string(rank) + " (GPU " + std::to_string(device) + ", measured)");
  t.thread_name(pid, kEnqueueTid, "host: enqueue (host clock)");
  for (const HostSpan& h : host)
    t.slice(pid, kEnqueueTid, "enqueue", ps(h.begin_us), ps(std::max(h.end_us, h.begin_us)));
  t.thread_name(pid, sim::Trace::kHostTid, "calls (GPU)");
  for (const PlanSpan& s : spans) {
    const bool call = std::string(s.name) == "call";
    const int tid = call ? sim::Trace::kHostTid : sim::Trace::kStreamTid + s.stream;
    if (!call) t.thread_name(pid, tid, "stream " + std::to_string(s.stream));
    t.slice(pid, tid, s.name, ps(s.begin_us), ps(std::max(s.end_us, s.begin_us)), s.args, call);
  }
  t.finish();
}

namespace {

// The events of one part: what lies between its "traceEvents":[ and its closing ].
std::string events_of(const std::string& part) {
  std::ifstream f(part);
  if (!f) fail(ErrorCode::kIo, "cannot read trace part '" + part + "'");
  std::ostringstream text;
  text << f.rdbuf();
  const std::string s = text.str();
  const std::string head = "{\"traceEvents\":[\n";
  const std::size_t end = s.rfind("\n],");
  if (s.compare(0, head.size(), head) != 0 || end == std::string::npos || end < head.size())
    fail(ErrorCode::kIo, "trace part '" + part + "' is not a trace this program wrote");
  return s.substr(head.size(), end - head.size());
}

}  // namespace

void merge_rank_traces(const std::string& path, int world) {
  std::string all = "{\"traceEvents\":[\n";
  for (int r = 0; r < world; ++r) {
    const std::string ev = events_of(trace_part(path, r));
    if (ev.empty()) continue;
    if (all.back() != '\n') all += ",\n";
    all += ev;
  }
  all += "\n],\"displayTimeUnit\":\"ns\"}\n";
  OutputFile out(path);
  out.write(all);
  out.commit();
  for (int r = 0; r < world; ++r) std::filesystem::remove(trace_part(path, r));
}

void prepare_trace_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    fail(ErrorCode::kIo, "--trace " + dir + ": cannot make that folder" + (ec ? ": " + ec.message() : std::string()));
}

std::string trace_file(const std::string& dir, const std::string& op, const std::string& algo, const std::string& dtype,
                       const std::string& what) {
  std::string name = op + "." + algo + "." + dtype + "." + what + ".json";
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  return (std::filesystem::path(dir) / name).string();
}

}  // namespace symm::cuda
