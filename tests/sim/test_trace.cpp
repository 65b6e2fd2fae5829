// The simulator's trace, checked against the rules Perfetto needs to draw it right:
//   - ids: every pid and tid >= 1 (Perfetto treats 0 as "no process / no thread");
//   - slices: on each track (pid, tid) the "X" slices appear in time order and nest, a parent
//     before its children at equal timestamps (else Perfetto stacks them wrongly);
//   - flows: every arrow has exactly one start and one end, each bound to exactly one slice
//     (bind_id with flow_out / flow_in on the slice itself, or a "s"/"f" event whose timestamp
//     lies in exactly one innermost slice of its track); a signal's arrow ends at a wait (or
//     its "flag seen" mark) of the signalled rank on the signalled slot, a put_ll's at a
//     reduce_ll (or its "packets seen" mark); an arrow's end is written after its start (Perfetto
//     binds in file order and drops an end that comes first);
//   - tracks: every named thread carries slices, every named process carries events;
//   - counters: one counter track per link direction per GPU ("nvlink egress" / "nvlink
//     ingress", args {"GB/s": x}), in time order per track.
// The validator is tested on hand-made traces that break each rule, then run on real traces.
#include <gtest/gtest.h>

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "backends/sim/testing.h"

namespace symm::sim {
namespace {

namespace pt = boost::property_tree;

// "12.345678" microseconds -> picoseconds, exactly (the writer prints integers of ps).
int64_t to_ps(const std::string& s) {
  const std::size_t dot = s.find('.');
  int64_t us = std::stoll(s.substr(0, dot)), ps = 0;
  if (dot != std::string::npos) {
    std::string frac = s.substr(dot + 1);
    frac.resize(6, '0');
    ps = std::stoll(frac);
  }
  return us * 1000000 + ps;
}

struct Slice {
  int pid, tid;
  std::string name;
  int64_t ts, end;
  std::size_t index;  // in the file
  const pt::ptree* ev;
};

using Track = std::pair<int, int>;

std::string track_name(const Track& t) {
  return "track (pid " + std::to_string(t.first) + ", tid " + std::to_string(t.second) + ")";
}

// Every rule the trace breaks, one line each (empty: the trace is fine).
std::vector<std::string> validate(const std::string& json, bool want_link_counters = true) {
  std::vector<std::string> bad;
  pt::ptree root;
  try {
    std::istringstream in(json);
    pt::read_json(in, root);
  } catch (const std::exception& e) {
    return {std::string("not JSON: ") + e.what()};
  }
  const auto events = root.get_child_optional("traceEvents");
  if (!events) return {"no traceEvents"};

  std::map<Track, std::vector<Slice>> slices;
  std::map<int, int> events_of_pid;
  std::set<Track> named_threads;
  std::set<int> named_processes;
  std::map<std::pair<int, std::string>, int64_t> counter_last;  // (pid, name) -> last ts
  std::map<int, std::set<std::string>> counters_of_pid;
  struct FlowEnd {
    Track track;
    int64_t ts;
    std::size_t pos = SIZE_MAX;    // v2: the slice carrying it, in slices[track]
    const Slice* bound = nullptr;  // v1: the slice found below
  };
  std::map<std::string, std::vector<FlowEnd>> flow_out, flow_in;  // by id
  std::vector<std::pair<std::string, FlowEnd>> v1_out, v1_in;
  std::size_t index = 0;
  for (const auto& kv : *events) {
    const pt::ptree& e = kv.second;
    ++index;
    const std::string ph = e.get<std::string>("ph", "");
    const int pid = e.get<int>("pid", -1);
    const auto tid_opt = e.get_optional<int>("tid");
    if (pid < 1) bad.push_back("event " + std::to_string(index) + " (" + ph + "): pid " + std::to_string(pid) + " < 1");
    if (tid_opt && *tid_opt < 1)
      bad.push_back("event " + std::to_string(index) + " (" + ph + "): tid " + std::to_string(*tid_opt) + " < 1");
    const int tid = tid_opt ? *tid_opt : 0;
    if (ph == "M") {
      const std::string what = e.get<std::string>("name", "");
      if (what == "thread_name") named_threads.insert({pid, tid});
      if (what == "process_name") named_processes.insert(pid);
      continue;
    }
    ++events_of_pid[pid];
    if (ph == "X") {
      const int64_t ts = to_ps(e.get<std::string>("ts")), dur = to_ps(e.get<std::string>("dur"));
      std::vector<Slice>& v = slices[{pid, tid}];
      v.push_back(Slice{pid, tid, e.get<std::string>("name", ""), ts, ts + dur, index, &e});
      if (const auto id = e.get_optional<std::string>("bind_id")) {
        if (e.get<bool>("flow_out", false)) flow_out[*id].push_back({{pid, tid}, ts, v.size() - 1});
        if (e.get<bool>("flow_in", false)) flow_in[*id].push_back({{pid, tid}, ts, v.size() - 1});
      }
    } else if (ph == "s" || ph == "f") {
      const std::string id = e.get<std::string>("id", "");
      (ph == "s" ? v1_out : v1_in).push_back({id, FlowEnd{{pid, tid}, to_ps(e.get<std::string>("ts"))}});
    } else if (ph == "C") {
      const std::string name = e.get<std::string>("name", "");
      const int64_t ts = to_ps(e.get<std::string>("ts"));
      auto [it, fresh] = counter_last.try_emplace({pid, name}, ts);
      if (!fresh && ts < it->second)
        bad.push_back("counter '" + name + "' of pid " + std::to_string(pid) + " goes back in time");
      it->second = ts;
      counters_of_pid[pid].insert(name);
      if (!e.get_optional<double>("args.GB/s"))
        bad.push_back("counter '" + name + "' of pid " + std::to_string(pid) + " has no GB/s value");
    }
  }

  // Slices: time order and nesting per track (a parent before its children at equal ts).
  for (const auto& [track, v] : slices) {
    std::vector<const Slice*> open;
    int64_t last_ts = INT64_MIN;
    const Slice* prev = nullptr;
    for (const Slice& s : v) {
      if (s.ts < last_ts)
        bad.push_back(track_name(track) + ": slice '" + s.name + "' (event " + std::to_string(s.index) +
                      ") starts before the one written before it");
      if (prev && prev->ts == s.ts && prev->end > prev->ts && s.end > prev->end)
        bad.push_back(track_name(track) + ": slice '" + s.name + "' (event " + std::to_string(s.index) +
                      ") encloses '" + prev->name + "' at the same ts but is written after it (parent after child)");
      last_ts = s.ts;
      prev = &s;
      while (!open.empty() && open.back()->end <= s.ts) open.pop_back();
      if (!open.empty() && s.end > open.back()->end)
        bad.push_back(track_name(track) + ": slice '" + s.name + "' (event " + std::to_string(s.index) +
                      ") is not nested in '" + open.back()->name + "' (event " + std::to_string(open.back()->index) +
                      "), which it overlaps: written after a child, or overlapping");
      open.push_back(&s);
    }
  }

  // Tracks with a name carry data.
  for (const Track& t : named_threads)
    if (!slices.count(t)) bad.push_back(track_name(t) + " is named but has no slices");
  for (int p : named_processes)
    if (!events_of_pid.count(p)) bad.push_back("process " + std::to_string(p) + " is named but has no events");

  // Flows. v1 events bind to the one innermost slice of their track containing their ts.
  auto bind_v1 = [&](FlowEnd& f, const std::string& id, const char* what) {
    const auto it = slices.find(f.track);
    std::vector<const Slice*> in;
    if (it != slices.end())
      for (const Slice& s : it->second)
        if (s.ts <= f.ts && f.ts <= s.end) in.push_back(&s);
    // Innermost: those containing no other candidate.
    std::vector<const Slice*> inner;
    for (const Slice* a : in) {
      bool encloses = false;
      for (const Slice* b : in)
        if (a != b && a->ts <= b->ts && b->end <= a->end) encloses = true;
      if (!encloses) inner.push_back(a);
    }
    if (inner.size() != 1) {
      bad.push_back("flow " + id + ": its " + what + " at " + track_name(f.track) + " is in " +
                    std::to_string(inner.size()) + " innermost slices (must be exactly 1: none, or ambiguous)");
      return;
    }
    f.bound = inner[0];
  };
  for (auto& [id, f] : v1_out) {
    bind_v1(f, id, "start");
    flow_out[id].push_back(f);
  }
  for (auto& [id, f] : v1_in) {
    bind_v1(f, id, "end");
    flow_in[id].push_back(f);
  }
  auto bound_slice = [&](const FlowEnd& f) -> const Slice* {
    if (f.bound) return f.bound;
    if (f.pos == SIZE_MAX) return nullptr;
    return &slices[f.track][f.pos];
  };

  std::set<std::string> ids;
  for (const auto& [id, v] : flow_out) ids.insert(id);
  for (const auto& [id, v] : flow_in) ids.insert(id);
  for (const std::string& id : ids) {
    const auto& outs = flow_out[id];
    const auto& ins = flow_in[id];
    if (outs.size() != 1 || ins.size() != 1) {
      bad.push_back("flow " + id + ": " + std::to_string(outs.size()) + " starts and " + std::to_string(ins.size()) +
                    " ends (must be 1 and 1)");
      continue;
    }
    const Slice* from = bound_slice(outs[0]);
    const Slice* to = bound_slice(ins[0]);
    if (!from || !to) continue;  // reported above
    const bool from_signal = from->name.rfind("signal", 0) == 0, from_put = from->name == "put_ll",
               from_stream = from->name == "write_flag";
    if (!from_signal && !from_put && !from_stream)
      bad.push_back("flow " + id + " starts at a '" + from->name + "' slice (want signal / put_ll / write_flag)");
    if (from_signal) {
      const int peer = from->ev->get<int>("args.peer", -1);
      if ((to->name.rfind("wait", 0) != 0 && to->name != "flag seen") || to->pid != peer + 1 ||
          to->ev->get<int>("args.slot", -1) != from->ev->get<int>("args.slot", -2))
        bad.push_back("flow " + id + ": a signal to rank " + std::to_string(peer) + " slot " +
                      from->ev->get<std::string>("args.slot", "?") + " ends at '" + to->name + "' of pid " +
                      std::to_string(to->pid) + " slot " + to->ev->get<std::string>("args.slot", "?"));
    }
    if (from_put && to->name != "reduce_ll" && to->name != "packets seen")
      bad.push_back("flow " + id + ": a put_ll's arrow ends at '" + to->name + "' (want reduce_ll / packets seen)");
    // Perfetto binds arrow ends in file (time) order: an end before its start is dropped.
    if (to->index < from->index)
      bad.push_back("flow " + id + ": its end ('" + to->name + "', event " + std::to_string(to->index) +
                    ") is written before its start ('" + from->name + "', event " + std::to_string(from->index) + ")");
  }

  // Link counters: one track per direction per GPU that has slices.
  if (want_link_counters) {
    for (int p : named_processes) {
      const auto& c = counters_of_pid[p];
      for (const char* name : {"nvlink egress", "nvlink ingress"})
        if (!c.count(name))
          bad.push_back("process " + std::to_string(p) + " has no '" + std::string(name) + "' counter track");
    }
  }
  return bad;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

bool any_has(const std::vector<std::string>& v, const std::string& what) {
  for (const auto& x : v)
    if (x.find(what) != std::string::npos) return true;
  return false;
}

// A well-formed trace, then one change per rule: each must be caught.
std::string trace_of(const std::string& events) { return "{\"traceEvents\":[" + events + "]}"; }
const std::string kMeta = R"({"name":"process_name","ph":"M","pid":1,"tid":1,"args":{"name":"rank 0"}},)"
                          R"({"name":"process_name","ph":"M","pid":2,"tid":1,"args":{"name":"rank 1"}},)"
                          R"({"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"block 0"}},)"
                          R"({"name":"thread_name","ph":"M","pid":2,"tid":1,"args":{"name":"block 0"}},)";
const std::string kCounters = R"({"name":"nvlink egress","ph":"C","pid":1,"ts":0.000000,"args":{"GB/s":1.0}},)"
                              R"({"name":"nvlink ingress","ph":"C","pid":1,"ts":0.000000,"args":{"GB/s":1.0}},)"
                              R"({"name":"nvlink egress","ph":"C","pid":2,"ts":0.000000,"args":{"GB/s":1.0}},)"
                              R"({"name":"nvlink ingress","ph":"C","pid":2,"ts":0.000000,"args":{"GB/s":1.0}},)";
const std::string kBlock0 = R"({"name":"block","ph":"X","pid":1,"tid":1,"ts":1.000000,"dur":5.000000},)";
const std::string kSignal =
    R"({"name":"signal","ph":"X","pid":1,"tid":1,"ts":1.000000,"dur":0.000000,"args":{"peer":1,"slot":3},"bind_id":7,"flow_out":true},)";
const std::string kBlock1 = R"({"name":"block","ph":"X","pid":2,"tid":1,"ts":1.000000,"dur":5.000000},)";
const std::string kWait =
    R"({"name":"wait","ph":"X","pid":2,"tid":1,"ts":1.000000,"dur":2.000000,"args":{"slot":3},"bind_id":7,"flow_in":true})";

TEST(TraceValidator, AcceptsAWellFormedTrace) {
  const auto bad = validate(trace_of(kMeta + kCounters + kBlock0 + kSignal + kBlock1 + kWait));
  EXPECT_TRUE(bad.empty()) << joined(bad);
}

TEST(TraceValidator, CatchesEachRule) {
  auto check = [](const std::string& json, const std::string& what) {
    const auto bad = validate(json);
    EXPECT_TRUE(any_has(bad, what)) << "wanted '" << what << "', got:\n" << joined(bad);
  };
  std::string s = kMeta + kCounters + kBlock0 + kSignal + kBlock1 + kWait;
  // pid 0 / tid 0.
  std::string zero = s;
  zero.replace(zero.find(R"("pid":2,"tid":1,"ts":1.000000,"dur":2)"), 15, R"("pid":2,"tid":0)");
  check(trace_of(zero), "tid 0 < 1");
  check(trace_of(R"({"name":"x","ph":"X","pid":0,"tid":1,"ts":0.0,"dur":0.0})"), "pid 0 < 1");
  // Child written before its parent at the same ts.
  check(trace_of(kMeta + kCounters + kBlock0 + kSignal + kWait + "," + kBlock1.substr(0, kBlock1.size() - 1)),
        "parent after child");
  check(
      trace_of(
          kMeta + kCounters + kBlock0 + kSignal + kBlock1 +
          R"({"name":"wait","ph":"X","pid":2,"tid":1,"ts":1.0,"dur":2.0,"args":{"slot":3},"bind_id":7,"flow_in":true},)" +
          R"({"name":"copy","ph":"X","pid":2,"tid":1,"ts":2.0,"dur":2.0})"),
      "is not nested");
  // An arrow whose end is written before its start (Perfetto drops it).
  check(trace_of(kMeta + kCounters + kBlock1 + kWait + "," + kBlock0 + kSignal.substr(0, kSignal.size() - 1)),
        "is written before its start");
  // A named thread with nothing on it.
  check(trace_of(kMeta + R"({"name":"thread_name","ph":"M","pid":1,"tid":9,"args":{"name":"host"}},)" + kCounters +
                 kBlock0 + kSignal + kBlock1 + kWait),
        "is named but has no slices");
  // A flow with no end; a flow ending at the wrong rank; a v1 end on a boundary shared by two slices.
  std::string no_end = s;
  no_end.replace(no_end.find(R"("bind_id":7,"flow_in")"), 11, R"("bind_id":8)");
  check(trace_of(no_end), "1 starts and 0 ends");
  std::string wrong_rank = kMeta + kCounters + kBlock0 + kSignal + kBlock1 + kWait;
  wrong_rank.replace(wrong_rank.find(R"("peer":1)"), 8, R"("peer":0)");
  check(trace_of(wrong_rank), "a signal to rank 0");
  const std::string shared_boundary =
      kMeta + kCounters + kBlock0 + R"({"name":"signal","ph":"X","pid":1,"tid":1,"ts":1.0,"dur":0.0},)" +
      R"({"name":"s","cat":"flag","ph":"s","id":5,"pid":1,"tid":1,"ts":1.0},)" + kBlock1 +
      R"({"name":"wait","ph":"X","pid":2,"tid":1,"ts":1.0,"dur":2.0,"args":{"slot":3}},)" +
      R"({"name":"copy","ph":"X","pid":2,"tid":1,"ts":3.0,"dur":1.0},)" +
      R"({"name":"f","cat":"flag","ph":"f","bp":"e","id":5,"pid":2,"tid":1,"ts":3.0})";
  check(trace_of(shared_boundary), "innermost slices (must be exactly 1");
  // Counters: one per rank instead of one per link direction; time going back.
  check(trace_of(kMeta + R"({"name":"nvlink GB/s","ph":"C","pid":1,"ts":0.0,"args":{"egress":1,"ingress":1}},)" +
                 kBlock0 + kSignal + kBlock1 + kWait),
        "has no 'nvlink egress' counter track");
  check(trace_of(kMeta + kCounters + R"({"name":"nvlink egress","ph":"C","pid":1,"ts":0.0,"args":{"GB/s":1.0}},)" +
                 R"({"name":"nvlink egress","ph":"C","pid":1,"ts":-1.0,"args":{"GB/s":1.0}},)" + kBlock0 + kSignal +
                 kBlock1 + kWait),
        "goes back in time");
}

RunSpec spec(const char* machine, int world, const char* algo, std::size_t bytes, int calls = 1) {
  RunSpec s;
  s.machine = Machine::by_name(machine);
  s.world = world;
  s.algo = &find_algo(algo);
  s.bytes = bytes;
  s.calls = calls;
  return s;
}

struct Case {
  const char* name;
  RunSpec spec;
};

class RealTrace : public ::testing::TestWithParam<int> {};

std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"one_shot", spec("h200x4", 4, "all_reduce.one_shot", 1 << 20)});
  c.push_back({"two_shot_2calls", spec("h200x4", 4, "all_reduce.two_shot", 4 << 20, 2)});
  c.push_back({"one_shot_ll_3calls", spec("h200x8", 8, "all_reduce.one_shot_ll", 256 << 10, 3)});
  c.push_back({"rs_push_ll", spec("h200x4", 4, "reduce_scatter.push_ll", 512 << 10, 2)});
  c.push_back({"multimem", spec("h200x8", 8, "all_reduce.multimem", 2 << 20)});
  c.push_back({"barrier", spec("h200x4", 4, "barrier.acq_rel", 0, 2)});
  RunSpec t = spec("h200x8", 16, "all_reduce.two_shot", 64 << 20);
  t.timing_only = true;
  c.push_back({"two_shot_timing_16", t});
  // Host plans: stream and copy-engine tracks, arrows from a stream's write_flag to its wait.
  RunSpec p = spec("h200x4", 4, "reduce_scatter.ce_overlap", 4 << 20, 2);
  p.chunk_bytes = 256 << 10;
  c.push_back({"rs_ce_overlap_2calls", p});
  c.push_back({"ag_ce", spec("h200x2", 2, "all_gather.ce", 16 << 20)});
  return c;
}

TEST_P(RealTrace, FollowsTheRules) {
  Case c = cases()[std::size_t(GetParam())];
  const std::string path = ::testing::TempDir() + "/sim_trace_rules_" + c.name + ".json";
  c.spec.trace_path = path;
  run(c.spec);
  // A barrier moves no bytes: it has no link traffic to draw.
  const bool moves_bytes = c.spec.algo->op != Op::kBarrier;
  const auto bad = validate(slurp(path), moves_bytes);
  // One example of each kind of problem (the message with its numbers taken out).
  std::map<std::string, std::pair<int, std::string>> kinds;
  for (const std::string& b : bad) {
    std::string k;
    for (char ch : b) k += std::isdigit(static_cast<unsigned char>(ch)) ? '#' : ch;
    auto& [n, first] = kinds[k];
    if (n++ == 0) first = b;
  }
  std::string report;
  for (const auto& [k, v] : kinds) report += "  " + std::to_string(v.first) + " x  " + v.second + "\n";
  EXPECT_TRUE(bad.empty()) << c.name << ": " << bad.size() << " problems:\n" << report;
}

INSTANTIATE_TEST_SUITE_P(Sim, RealTrace, ::testing::Range(0, 9), [](const ::testing::TestParamInfo<int>& i) {
  return std::string(cases()[std::size_t(i.param)].name);
});

}  // namespace
}  // namespace symm::sim
