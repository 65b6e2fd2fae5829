// Buffer reuse across runs: big arrays (heaps, flags, transfers, kept inputs) are recycled on
// this thread. A sweep or a test suite runs thousands of simulations, and fresh pages (faults +
// zeroing) cost more than the simulation of a small collective.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
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

// n zeroed words, from the pool (cleared) or fresh from calloc: fresh ones cost no page until
// written (the flags of a 64-rank run are 16 MiB, of which a run writes a few pages).
class ZeroedWords {
 public:
  ZeroedWords() = default;
  ZeroedWords(ZeroedWords&&) noexcept = default;
  ZeroedWords& operator=(ZeroedWords&&) noexcept = default;
  ~ZeroedWords() { release(); }
  void reset(std::size_t n) {
    auto& pool = pool_();
    if (cap_ < n && !pool.empty() && pool.back().cap >= n) {
      release();
      own_ = std::move(pool.back().p);
      cap_ = pool.back().cap;
      pool.pop_back();
    }
    if (cap_ >= n) {
      std::fill(own_.get(), own_.get() + n, 0u);
    } else {
      release();
      own_.reset(static_cast<uint32_t*>(std::calloc(n, sizeof(uint32_t))));
      if (!own_) throw std::bad_alloc();
      cap_ = n;
    }
  }
  void release() {
    if (!own_) return;
    auto& pool = pool_();
    if (pool.empty()) pool.push_back({std::move(own_), cap_});  // one is enough: one run per thread
    own_.reset();
    cap_ = 0;
  }
  uint32_t& operator[](std::size_t i) { return own_.get()[i]; }
  uint32_t operator[](std::size_t i) const { return own_.get()[i]; }

 private:
  struct Free {
    void operator()(uint32_t* p) const { std::free(p); }
  };
  struct Kept {
    std::unique_ptr<uint32_t, Free> p;
    std::size_t cap = 0;
  };
  static std::vector<Kept>& pool_() {
    thread_local std::vector<Kept> pool;
    return pool;
  }
  std::unique_ptr<uint32_t, Free> own_;
  std::size_t cap_ = 0;
};

}  // namespace symm::sim
