// Flow-level network: concurrent transfers share resources (each GPU's NVLink egress and
// ingress, its HBM, its NVSwitch multicast/reduction throughput) max-min fairly.
//
// Speed matters more than generality here (64 ranks x 132 blocks of flows), so flows are
// grouped into *classes*: flows with the same resource-weight signature and per-flow cap
// get the same max-min rate, so the solver works on classes (a few per rank) instead of
// flows (hundreds per rank). Within a class every flow advances at the class rate; a
// class keeps `served` (bytes every member has received since the class was created) and
// a min-heap of its members' finish tags, so finding the next completion is O(classes)
// (GPS virtual time, per class).
//
// Units: a flow's size and rate are in bytes of *its own* progress (e.g. bytes per source
// for a reduce); weights say how many bytes each unit puts on a resource.
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/sim/event_queue.h"

namespace symm::sim {

struct Use {
  uint32_t res;
  float weight;
};

class FlowNet {
 public:
  explicit FlowNet(std::vector<BytesPerPs> capacity);

  // Starts a flow of `size` units at `now`, at most `cap` units/ps, putting weight * rate on
  // each resource of `uses` (no resource twice). `token` comes back when it completes.
  // The caller must call resolve(now) before time advances (the engine batches this).
  // `slow` >= 0: the flow's cap shrinks with the load on that resource (set_slowdown).
  void start(TimePs now, const std::vector<Use>& uses, BytesPerPs cap, double size, uint64_t token, int32_t slow = -1);

  // A latency-bound flow under load (the engine's block transfers: machine key load_slowdown): a
  // flow started with `slow` = res runs at most cap / (1 + k x load(res)), load(res) the load the
  // first, unslowed solve puts on resource res (units/ps), so that at its cap it runs at
  // cap x (1 - k x the load realised). By default every resource's k is 0: no slowdown.
  void set_slowdown(uint32_t res, double k) {
    slow_k_.resize(capacity_.size(), 0.0);
    slow_k_[res] = k;
  }

  // Completes every flow that has finished by `now` (appending tokens to `done`, in a
  // deterministic order), re-solves the rates, and returns the time of the next completion
  // (-1: no flows left).
  TimePs resolve(TimePs now, std::vector<uint64_t>& done);

  // Flows started from now on keep their place (remaining); off by default (a lookup per flow).
  void track_progress() { track_ = true; }
  // The share (0..1) of a tracked running flow's size still to come at `now` (0: not running).
  double remaining(uint64_t token, TimePs now) const;

  // Load (bytes/ps) on each resource as of the last resolve.
  const std::vector<double>& load() const { return load_; }
  std::size_t flows() const { return flows_; }

 private:
  struct Member {
    double tag;
    uint64_t seq;
    uint64_t token;
    bool operator>(const Member& o) const { return tag != o.tag ? tag > o.tag : seq > o.seq; }
  };
  struct Class {
    std::vector<Use> uses;
    BytesPerPs cap = 0;
    BytesPerPs limit = 0;  // cap, slowed under load (set_slowdown): what the solve raises rates to
    int32_t slow = -1;
    double served = 0;
    TimePs last = 0;
    BytesPerPs rate = 0;
    int active_at = -1;  // index in active_, -1 when it has no members
    bool frozen = false;
    std::priority_queue<Member, std::vector<Member>, std::greater<Member>> members;
  };

  void advance(Class& c, TimePs now) {
    c.served += c.rate * double(now - c.last);
    c.last = now;
  }
  void solve();
  void fill();  // progressive filling with the classes' limits
  std::vector<double> slow_k_;

  std::vector<BytesPerPs> capacity_;
  std::vector<Class> classes_;
  std::vector<uint32_t> active_;  // classes with members
  std::unordered_map<std::string, uint32_t> by_signature_;
  std::string key_;  // scratch for the signature
  uint64_t seq_ = 0;
  std::size_t flows_ = 0;
  struct Where {
    uint32_t cls;
    double tag, size;  // size 0: not running
  };
  bool track_ = false;
  std::vector<Where> where_;  // tracked running flows by token (the callers' tokens are dense indices)
  // Solver scratch, per resource.
  std::vector<double> frozen_load_, weight_, load_;
  std::vector<int> users_;
  std::vector<uint32_t> touched_;
  std::vector<char> saturated_;
};

}  // namespace symm::sim
