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

VerbTrace verb_spans(const std::vector<VerbStamp>& stamps, int calls, int blocks, uint32_t cap, double sm_ghz) {
  if (calls < 1 || blocks < 1 || cap < 2 || stamps.size() != std::size_t(calls) * blocks * cap || !(sm_ghz > 0))
    fail(ErrorCode::kInternal, "verb trace: " + std::to_string(stamps.size()) + " stamps for " + std::to_string(calls) +
                                   " calls of " + std::to_string(blocks) + " blocks");
  VerbTrace out;
  struct Placed {
    std::vector<double> t_ns;  // each stamp's time on the global timer's scale
    const VerbStamp* s;
    std::size_t n;
  };
  std::vector<Placed> placed;
  double zero = 0;
  bool any = false;
  // Times are kept as integers from a base until they are small: the global timer counts
  // nanoseconds since 1970 (~1.8e18), where a double's steps are 256 ns.
  unsigned long long base = ~0ull;
  for (int c = 0; c < calls; ++c)
    for (int b = 0; b < blocks; ++b) base = std::min(base, stamps[(std::size_t(c) * blocks + b) * cap].gt);
  for (int c = 0; c < calls; ++c)
    for (int b = 0; b < blocks; ++b) {
      const VerbStamp* s = stamps.data() + (std::size_t(c) * blocks + b) * cap;
      std::size_t n = 0;
      while (n < cap && s[n].verb != uint32_t(VerbId::kNone)) ++n;
      if (n < 2 || s[0].verb != uint32_t(VerbId::kStart) || s[n - 1].verb != uint32_t(VerbId::kEnd))
        fail(ErrorCode::kInternal, "verb trace: call " + std::to_string(c) + ", block " + std::to_string(b) +
                                       " left no start and end stamps (did its kernel run traced?)");
      if (s[n - 1].arg > n) out.lost += s[n - 1].arg - n;
      // Nanoseconds from `base` (global timer) and cycles from the block's start (its SM's counter).
      auto gt = [&](std::size_t i) { return double(static_cast<long long>(s[i].gt - base)); };
      auto cyc = [&](std::size_t i) { return double(static_cast<long long>(s[i].clk - s[0].clk)) / sm_ghz; };
      double offset = 0;
      for (std::size_t i = 0; i < n; ++i) offset += gt(i) - cyc(i);
      offset /= double(n);
      Placed p{std::vector<double>(n), s, n};
      for (std::size_t i = 0; i < n; ++i) {
        p.t_ns[i] = offset + cyc(i);
        if (i && s[i].gt > s[i - 1].gt) {
          const double step = double(s[i].gt - s[i - 1].gt);
          if (out.tick_ns == 0 || step < out.tick_ns) out.tick_ns = step;
        }
      }
      if (!any || p.t_ns[0] < zero) zero = p.t_ns[0];
      any = true;
      placed.push_back(std::move(p));
    }
  auto us = [&](double ns) { return (ns - zero) / 1000.0; };
  for (int c = 0; c < calls; ++c) {
    const std::string call = "\"call\":" + std::to_string(c);
    double begin = 0, end = 0;
    for (int b = 0; b < blocks; ++b) {
      const Placed& p = placed[std::size_t(c) * blocks + b];
      begin = b ? std::min(begin, p.t_ns.front()) : p.t_ns.front();
      end = b ? std::max(end, p.t_ns.back()) : p.t_ns.back();
    }
    out.spans.push_back({c, -1, "call", call + ",\"blocks\":" + std::to_string(blocks), us(begin), us(end)});
    for (int b = 0; b < blocks; ++b) {
      const Placed& p = placed[std::size_t(c) * blocks + b];
      out.spans.push_back({c, b, "block", call, us(p.t_ns.front()), us(p.t_ns.back())});
      // Verb i lasts from its stamp to the next; where stamps were lost, the last kept verb runs
      // to the end (its args say so).
      for (std::size_t i = 1; i + 1 < p.n; ++i) {
        const VerbId v = VerbId(p.s[i].verb);
        const uint32_t arg = p.s[i].arg;
        std::string args = call;
        switch (v) {
          case VerbId::kCopy:
          case VerbId::kReduce:
            args += ",\"bytes\":" + std::to_string(arg & kStampBytesMax) +
                    ",\"remote\":" + std::to_string(arg >> kStampRemoteShift);
            break;
          case VerbId::kMultimemReduce:
          case VerbId::kPutLl:
          case VerbId::kReduceLl: args += ",\"bytes\":" + std::to_string(arg); break;
          case VerbId::kSignal: args += ",\"peer\":" + std::to_string(arg & 0xFFFF); break;
          case VerbId::kSignalRelease:
            args += ",\"peer\":" + std::to_string(arg & 0xFFFF) + ",\"fence\":" + ((arg & kFenced) ? "1" : "0");
            break;
          case VerbId::kWait:
          case VerbId::kWaitAcquire:
          case VerbId::kAdvance: args += ",\"slot\":" + std::to_string(arg); break;
          case VerbId::kMmaTile:
            args += ",\"m\":" + std::to_string(arg >> 16) + ",\"n\":" + std::to_string(arg & 0xFFFF);
            break;
          default: break;
        }
        if (i + 2 == p.n && p.s[p.n - 1].arg > p.n) args += ",\"stamps_lost_after\":1";
        out.spans.push_back({c, b, verb_name(v), args, us(p.t_ns[i]), us(p.t_ns[i + 1])});
      }
    }
  }
  return out;
}

void write_stamps_csv(const std::string& path, const std::vector<VerbStamp>& stamps, int calls, int blocks,
                      uint32_t cap, double sm_ghz) {
  std::string text = "# SM clock " + std::to_string(sm_ghz) + " GHz\ncall,block,index,verb,arg,clk,gt_ns\n";
  for (int c = 0; c < calls; ++c)
    for (int b = 0; b < blocks; ++b)
      for (uint32_t i = 0; i < cap; ++i) {
        const VerbStamp& s = stamps[(std::size_t(c) * blocks + b) * cap + i];
        if (s.verb == uint32_t(VerbId::kNone)) break;
        text += std::to_string(c) + "," + std::to_string(b) + "," + std::to_string(i) + "," +
                verb_name(VerbId(s.verb)) + "," + std::to_string(s.arg) + "," + std::to_string(s.clk) + "," +
                std::to_string(s.gt) + "\n";
      }
  OutputFile out(path);
  out.write(text);
  out.commit();
}

void write_block_trace(const std::string& part, int rank, int device, const VerbTrace& vt) {
  sim::Trace t(part);
  const int pid = sim::Trace::pid(rank);
  t.process_name(pid, "rank " + std::to_string(rank) + " (GPU " + std::to_string(device) + ", measured)");
  t.thread_name(pid, sim::Trace::kHostTid, "calls (GPU)");
  for (const VerbSpan& s : vt.spans) {
    const bool call = s.block < 0;
    const int tid = call ? sim::Trace::kHostTid : sim::Trace::block_tid(s.block);
    if (!call) t.thread_name(pid, tid, "block " + std::to_string(s.block));
    const bool encloses = call || std::string(s.name) == "block";
    t.slice(pid, tid, s.name, ps(s.begin_us), ps(std::max(s.end_us, s.begin_us)), s.args, encloses);
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
