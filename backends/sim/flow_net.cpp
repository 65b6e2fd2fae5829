#include "backends/sim/flow_net.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace symm::sim {

FlowNet::FlowNet(std::vector<BytesPerPs> capacity)
    : capacity_(std::move(capacity)),
      frozen_load_(capacity_.size(), 0),
      weight_(capacity_.size(), 0),
      load_(capacity_.size(), 0),
      users_(capacity_.size(), 0),
      saturated_(capacity_.size(), 0) {}

void FlowNet::start(TimePs now, const std::vector<Use>& uses, BytesPerPs cap, double size, uint64_t token,
                    int32_t slow) {
  if (slow >= 0 && (std::size_t(slow) >= slow_k_.size() || slow_k_[std::size_t(slow)] <= 0)) slow = -1;
  key_.assign(reinterpret_cast<const char*>(&cap), sizeof cap);
  key_.append(reinterpret_cast<const char*>(&slow), sizeof slow);
  key_.append(reinterpret_cast<const char*>(uses.data()), uses.size() * sizeof(Use));
  auto [it, fresh] = by_signature_.try_emplace(key_, uint32_t(classes_.size()));
  if (fresh) {
    classes_.emplace_back();
    classes_.back().uses = uses;
    classes_.back().cap = classes_.back().limit = cap;
    classes_.back().slow = slow;
    classes_.back().last = now;
  }
  Class& c = classes_[it->second];
  advance(c, now);
  if (c.active_at < 0) {
    c.active_at = int(active_.size());
    active_.push_back(it->second);
  }
  c.members.push(Member{c.served + size, seq_++, token});
  if (track_) {
    if (token >= where_.size()) where_.resize(std::size_t(token) + 1, Where{0, 0, 0});
    where_[token] = Where{it->second, c.served + size, size};
  }
  ++flows_;
}

double FlowNet::remaining(uint64_t token, TimePs now) const {
  if (token >= where_.size() || where_[token].size <= 0) return 0;
  const Where& w = where_[token];
  const Class& c = classes_[w.cls];
  const double served = c.served + c.rate * double(now - c.last);
  return std::clamp((w.tag - served) / w.size, 0.0, 1.0);
}

TimePs FlowNet::resolve(TimePs now, std::vector<uint64_t>& done) {
  // Completions first, so the solve below sees only the flows still running. A flow due
  // within the next picosecond is done now: completion times are rounded up to whole ticks.
  for (std::size_t i = 0; i < active_.size();) {
    Class& c = classes_[active_[i]];
    advance(c, now);
    const double eps = c.rate + 1e-9 * c.served;
    while (!c.members.empty() && c.members.top().tag <= c.served + eps) {
      done.push_back(c.members.top().token);
      if (track_ && c.members.top().token < where_.size()) where_[c.members.top().token].size = 0;
      c.members.pop();
      --flows_;
    }
    if (c.members.empty()) {
      c.rate = 0;
      c.active_at = -1;
      active_[i] = active_.back();
      active_.pop_back();
      if (i < active_.size()) classes_[active_[i]].active_at = int(i);
    } else {
      ++i;
    }
  }
  solve();
  TimePs next = -1;
  for (uint32_t ci : active_) {
    const Class& c = classes_[ci];
    // Shaved by a relative 1e-12 so that 3000000.0000000005 ps is 3000000, not 3000001: an
    // event a hair early is harmless, since completion accepts anything due within 1 ps.
    const double dt = std::ceil((c.members.top().tag - c.served) / c.rate * (1 - 1e-12));
    const TimePs t = now + std::max<TimePs>(1, TimePs(std::min(dt, 4e18)));
    if (next < 0 || t < next) next = t;
  }
  return next;
}

// Max-min rates at the classes' caps; where a class slows under load (set_slowdown), once more
// with its limit at cap / (1 + k load), load its resource's at the first fill: for flows held at
// their caps, whose load scales with the rate, that is the rate at which cap (1 - k load) holds.
void FlowNet::solve() {
  bool slowed = false;
  for (uint32_t ci : active_) {
    Class& c = classes_[ci];
    c.limit = c.cap;
    slowed = slowed || c.slow >= 0;
  }
  fill();
  if (!slowed) return;
  for (uint32_t ci : active_) {
    Class& c = classes_[ci];
    if (c.slow >= 0) c.limit = c.cap / (1 + slow_k_[std::size_t(c.slow)] * load_[std::size_t(c.slow)]);
  }
  fill();
}

// Progressive filling over classes: raise every unfrozen class's rate together until a
// resource saturates or a class reaches its limit; freeze those; repeat.
void FlowNet::fill() {
  for (uint32_t r : touched_) {
    frozen_load_[r] = 0;
    weight_[r] = 0;
    users_[r] = 0;
    load_[r] = 0;
  }
  touched_.clear();
  for (uint32_t ci : active_) {
    Class& c = classes_[ci];
    c.frozen = false;
    const double n = double(c.members.size());
    for (const Use& u : c.uses) {
      if (users_[u.res] == 0 && weight_[u.res] == 0) touched_.push_back(u.res);
      weight_[u.res] += n * u.weight;
      ++users_[u.res];
    }
  }
  std::size_t unfrozen = active_.size();
  while (unfrozen) {
    double level = std::numeric_limits<double>::infinity();
    for (uint32_t r : touched_)
      if (users_[r]) level = std::min(level, std::max(0.0, capacity_[r] - frozen_load_[r]) / weight_[r]);
    for (uint32_t ci : active_)
      if (!classes_[ci].frozen) level = std::min(level, classes_[ci].limit);
    const double limit = level * (1 + 1e-9);
    for (uint32_t r : touched_)
      saturated_[r] = users_[r] && std::max(0.0, capacity_[r] - frozen_load_[r]) / weight_[r] <= limit;
    for (uint32_t ci : active_) {
      Class& c = classes_[ci];
      if (c.frozen) continue;
      bool freeze = c.limit <= limit;
      for (std::size_t k = 0; !freeze && k < c.uses.size(); ++k) freeze = saturated_[c.uses[k].res];
      if (!freeze) continue;
      c.frozen = true;
      c.rate = level;
      --unfrozen;
      const double n = double(c.members.size());
      for (const Use& u : c.uses) {
        frozen_load_[u.res] += n * u.weight * level;
        weight_[u.res] -= n * u.weight;
        --users_[u.res];
      }
    }
  }
  for (uint32_t r : touched_) load_[r] = frozen_load_[r];
}

}  // namespace symm::sim
