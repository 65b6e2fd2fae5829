#include "backends/cuda/flag_edges.h"

#include "core/common.h"
#include "core/signal_pad.h"

namespace symm::cuda {
namespace {

std::string where(int rank, uint32_t slot, std::size_t k) {
  return "rank " + std::to_string(rank) + "'s " + pad::describe_plan_slot(slot) + ", occurrence " +
         std::to_string(k + 1);
}

}  // namespace

void FlagEdges::reset() {
  std::lock_guard<std::mutex> l(m_);
  writes_.clear();
  waits_.clear();
}

void FlagEdges::add_write(int writer, int target, uint32_t slot, uint32_t value, void* node) {
  std::lock_guard<std::mutex> l(m_);
  writes_[Key{target, slot}].push_back(Op{writer, value, node});
}

void FlagEdges::add_wait(int waiter, uint32_t slot, uint32_t value, void* node) {
  std::lock_guard<std::mutex> l(m_);
  waits_[Key{waiter, slot}].push_back(Op{waiter, value, node});
}

std::size_t FlagEdges::writes() const {
  std::lock_guard<std::mutex> l(m_);
  std::size_t n = 0;
  for (const auto& [k, v] : writes_) n += v.size();
  return n;
}

std::size_t FlagEdges::waits() const {
  std::lock_guard<std::mutex> l(m_);
  std::size_t n = 0;
  for (const auto& [k, v] : waits_) n += v.size();
  return n;
}

std::vector<FlagEdges::Edge> FlagEdges::match() const {
  std::lock_guard<std::mutex> l(m_);
  std::vector<Edge> edges;
  std::vector<std::string> bad;
  constexpr std::size_t kNamed = 4;
  auto problem = [&](std::string s) {
    if (bad.size() < kNamed) bad.push_back(std::move(s));
  };
  std::size_t problems = 0;
  for (const auto& [key, wv] : waits_) {
    const auto [target, slot] = key;
    const auto it = writes_.find(key);
    const std::vector<Op> none;
    const std::vector<Op>& ww = it == writes_.end() ? none : it->second;
    for (std::size_t k = 0; k < wv.size(); ++k) {
      if (k >= ww.size()) {
        ++problems;
        problem(where(target, slot, k) + " wait (for " + std::to_string(wv[k].value) + ") has no write by any rank");
        continue;
      }
      if (ww[k].rank != ww[0].rank) {
        ++problems;
        problem(where(target, slot, k) + " is written by rank " + std::to_string(ww[0].rank) + " and by rank " +
                std::to_string(ww[k].rank));
        continue;
      }
      if (ww[k].value != wv[k].value) {
        ++problems;
        problem(where(target, slot, k) + " wait expects " + std::to_string(wv[k].value) + " but rank " +
                std::to_string(ww[k].rank) + " writes " + std::to_string(ww[k].value));
        continue;
      }
      edges.push_back(Edge{ww[k].node, wv[k].node});
    }
  }
  for (const auto& [key, ww] : writes_) {
    const auto [target, slot] = key;
    const auto it = waits_.find(key);
    const std::size_t waited = it == waits_.end() ? 0 : it->second.size();
    for (std::size_t k = waited; k < ww.size(); ++k) {
      ++problems;
      problem(where(target, slot, k) + " write by rank " + std::to_string(ww[k].rank) + " is never waited for");
    }
  }
  if (problems) {
    std::string msg = "the team graph's flags do not pair up (the ranks' captured calls disagree): ";
    for (std::size_t i = 0; i < bad.size(); ++i) msg += (i ? "; " : "") + bad[i];
    if (problems > bad.size()) msg += "; and " + std::to_string(problems - bad.size()) + " more";
    fail(ErrorCode::kInvalidArgument, msg);
  }
  return edges;
}

}  // namespace symm::cuda
