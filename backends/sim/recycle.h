// Buffer reuse across runs: big arrays (heaps, flags, transfers, kept inputs) are recycled on
// this thread. A sweep or a test suite runs thousands of simulations, and fresh pages (faults +
// zeroing) cost more than the simulation of a small collective.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/common.h"

namespace symm::sim {

template <class T>
std::vector<std::vector<T>>& recycled() {
  thread_local std::vector<std::vector<T>> cache;
  return cache;
}
// The largest one: runs of different sizes and worlds share the pool, and a small buffer
// taken for a large heap would be reallocated (fresh pages) anyway.
template <class T>
std::vector<T> take_buffer() {
  auto& c = recycled<T>();
  if (c.empty()) return {};
  auto big = std::max_element(
      c.begin(), c.end(), [](const std::vector<T>& a, const std::vector<T>& b) { return a.capacity() < b.capacity(); });
  std::vector<T> v = std::move(*big);
  *big = std::move(c.back());
  c.pop_back();
  return v;
}
template <class T>
void give_buffer(std::vector<T>&& v) {
  auto& c = recycled<T>();
  if (c.size() < std::size_t(kPadWorld) && v.capacity() * sizeof(T) <= (std::size_t(256) << 20))
    c.push_back(std::move(v));
}

}  // namespace symm::sim
