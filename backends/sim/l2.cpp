// The L2 residency model (l2.h).
#include "backends/sim/l2.h"

#include <algorithm>

namespace symm::sim {

uint64_t L2::held(uint64_t b, uint64_t e, uint32_t token, const std::function<double(uint32_t)>& remaining) const {
  if (b >= e) return 0;
  uint64_t resident = 0;  // segs_ never overlap: their clipped lengths add up
  auto it = segs_.upper_bound(b);
  if (it != segs_.begin()) --it;
  for (; it != segs_.end() && it->first < e; ++it)
    if (it->second.end > b) resident += std::min(it->second.end, e) - std::max(it->first, b);
  double streaming = 0;
  for (auto a = active_.lower_bound(b > longest_ ? b - longest_ : 0); a != active_.end() && a->first < e; ++a)
    if (a->second.token != token && a->second.e > b)
      streaming =
          std::max(streaming, double(std::min(a->second.e, e) - std::max(a->first, b)) * remaining(a->second.token));
  return std::max(resident, uint64_t(streaming));
}

void L2::drop_age(uint64_t stamp, uint64_t begin) {
  auto [lo, hi] = age_.equal_range(stamp);
  for (auto a = lo; a != hi; ++a)
    if (a->second == begin) {
      age_.erase(a);
      return;
    }
}

void L2::erase_range(uint64_t b, uint64_t e) {
  auto it = segs_.upper_bound(b);
  if (it != segs_.begin()) --it;
  while (it != segs_.end() && it->first < e) {
    const uint64_t sb = it->first, se = it->second.end, stamp = it->second.stamp;
    if (se <= b) {
      ++it;
      continue;
    }
    // The part before b stays under its key (and age entry); the part after e gets its own.
    const uint64_t cut_b = std::max(sb, b), cut_e = std::min(se, e);
    bytes_ -= cut_e - cut_b;
    if (se > e) {
      segs_.emplace(e, Seg{se, stamp});
      age_.emplace(stamp, e);
    }
    if (sb < b) {
      it->second.end = b;
      ++it;
    } else {
      drop_age(stamp, sb);
      it = segs_.erase(it);
    }
  }
}

void L2::evict() {
  while (bytes_ > cap_ && !age_.empty()) {
    auto a = age_.begin();
    auto s = segs_.find(a->second);
    const uint64_t len = s->second.end - s->first, excess = bytes_ - cap_;
    if (len <= excess) {
      bytes_ -= len;
      segs_.erase(s);
      age_.erase(a);
    } else {  // the oldest range's first bytes go
      const Seg rest = s->second;
      const uint64_t nb = s->first + excess;
      segs_.erase(s);
      segs_.emplace(nb, rest);
      a->second = nb;
      bytes_ -= excess;
    }
  }
}

void L2::touch(uint64_t b, uint64_t e) {
  if (cap_ == 0 || b >= e) return;
  erase_range(b, e);
  if (e - b > cap_) b = e - cap_;  // only the range's last capacity bytes stay
  const uint64_t stamp = next_stamp_++;
  segs_.emplace(b, Seg{e, stamp});
  age_.emplace(stamp, b);
  bytes_ += e - b;
  evict();
}

void L2::begin_read(uint32_t token, uint64_t b, uint64_t e) {
  longest_ = std::max(longest_, e - b);
  if (token >= by_token_.size()) by_token_.resize(std::size_t(token) + 1);
  by_token_[token].push_back(active_.emplace(b, Active{e, token}));
}

void L2::end_reads(uint32_t token) {
  if (token >= by_token_.size()) return;
  for (const ActiveMap::iterator& a : by_token_[token]) active_.erase(a);
  by_token_[token].clear();  // keeps its capacity for the token's next transfer
}

}  // namespace symm::sim
