// Fiber stacks for the engine's fibers (one per block and one per rank's host), pooled per
// thread: a 64-rank run starts thousands of fibers, and a sweep runs thousands of simulations.
#pragma once

#include <boost/context/fiber.hpp>
#include <cstdlib>
#include <new>
#include <vector>

namespace symm::sim {

namespace bc = boost::context;

class StackPool {
 public:
  static constexpr std::size_t kSize = 64 << 10;
  ~StackPool() {
    for (void* p : free_) std::free(p);
  }
  void* take() {
    if (free_.empty()) {
      void* p = std::malloc(kSize);
      if (!p) throw std::bad_alloc();
      return p;
    }
    void* p = free_.back();
    free_.pop_back();
    return p;
  }
  void give(void* p) { free_.push_back(p); }

 private:
  std::vector<void*> free_;
};
inline StackPool& stack_pool() {
  thread_local StackPool pool;
  return pool;
}
struct PooledStack {
  bc::stack_context allocate() {
    bc::stack_context s;
    s.size = StackPool::kSize;
    s.sp = static_cast<char*>(stack_pool().take()) + StackPool::kSize;
    return s;
  }
  void deallocate(bc::stack_context& s) noexcept { stack_pool().give(static_cast<char*>(s.sp) - s.size); }
};

}  // namespace symm::sim
