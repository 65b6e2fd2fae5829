// The simulator's block context: the verbs of core/verbs.h on a (rank, block) fiber.
//
// What each verb costs and when its bytes become visible is written next to its
// implementation: copy, reduce, multimem_reduce, signal, wait, advance in verbs.cpp (with the
// end of a block and of a call); put_ll, reduce_ll in packets.cpp; how transfers share the
// links in transfers.cpp; the race check in memory.cpp.
#pragma once

#include <cstdint>

#include "core/coll_args.h"
#include "core/common.h"
#include "core/verbs.h"

namespace symm::sim {

class Simulator;
struct Block;

class BlockCtx {
 public:
  static constexpr int kWorldLimit = symm::kPadWorld;  // timing-only runs scale to 64 ranks

  BlockCtx(Simulator* sim, Block* blk) : sim_(sim), blk_(blk) {}

  int rank() const;
  int world() const;
  int block() const;
  int blocks() const;  // of the current call (a test may vary it between calls)
  int lane() const;    // 0, or 1 in a block's side lane (a fiber of its own: Simulator::start_blocks)
  int lanes() const;   // 2 where this kernel runs side lanes (its program's kSideLane, RunSpec::lanes)

  template <class T>
  T* peer(T* p, int r) const {
    return reinterpret_cast<T*>(peer_addr(reinterpret_cast<uintptr_t>(p), r));
  }
  void copy(void* dst, const void* src, std::size_t bytes);
  template <class T>
  void reduce(T* dst, const T* const* srcs, int nsrc, std::size_t count, ReduceOp op) {
    reduce_impl(DTypeOf<T>::value, dst, reinterpret_cast<const void* const*>(srcs), nsrc, count, op);
  }
  template <class T>
  void multimem_reduce(T* mc, std::size_t count, ReduceOp op) {
    multimem_impl(DTypeOf<T>::value, mc, count, op);
  }
  void signal(int peer, uint32_t slot, uint32_t value, MemOrder order);
  void wait(uint32_t slot, uint32_t value, MemOrder order);
  uint32_t advance(uint32_t slot);
  void put_ll(void* const* dsts, const void* const* srcs, int n, std::size_t bytes, uint32_t epoch);
  template <class T>
  void reduce_ll(T* dst, const void* const* srcs, int nsrc, std::size_t count, uint32_t epoch, ReduceOp op,
                 int plain = -1) {
    reduce_ll_impl(DTypeOf<T>::value, dst, srcs, nsrc, count, epoch, op, plain);
  }
  // Matrix tiles: timing and data in tiles.cpp.
  template <class T>
  void mma_tile(T* c, std::size_t ldc, const T* a, std::size_t lda, const T* b, std::size_t ldb, int m, int n, int k,
                const T* c_in = nullptr, int n_in = 0, std::size_t in_stride = 0) {
    mma_tile_impl(DTypeOf<T>::value, c, ldc, a, lda, b, ldb, m, n, k, c_in, n_in, in_stride);
  }

 private:
  uintptr_t peer_addr(uintptr_t p, int r) const;
  [[noreturn]] void bad_order(const char* verb, MemOrder order, const char* allowed) const;
  // A verb other than signal and wait: it ends the block's run of them (Block::run_kind), then, with
  // `settle`, waits for the block's overlapped remote loads (every such verb but copy, which decides).
  void other_verb(bool settle = true);
  void reduce_impl(DType t, void* dst, const void* const* srcs, int nsrc, std::size_t count, ReduceOp op);
  void multimem_impl(DType t, void* mc, std::size_t count, ReduceOp op);
  void reduce_ll_impl(DType t, void* dst, const void* const* srcs, int nsrc, std::size_t count, uint32_t epoch,
                      ReduceOp op, int plain);
  void mma_tile_impl(DType t, void* c, std::size_t ldc, const void* a, std::size_t lda, const void* b, std::size_t ldb,
                     int m, int n, int k, const void* c_in, int n_in, std::size_t in_stride);

  Simulator* sim_;
  Block* blk_;
};

static_assert(BlockVerbs<BlockCtx>);

// A device program instantiated for one element type, as the engine runs it.
using ProgramFn = void (*)(BlockCtx&, const CollArgs&);

}  // namespace symm::sim
