// BlockCtx (ctx.h): the verbs as programs call them, forwarded to the Simulator on the block's fiber.
// Every verb but copy (which decides itself) first waits for the block's overlapped remote loads
// (Simulator::settle_loads; verbs.cpp, copy). Every verb but signal and wait ends a run of them
// (Block::run_kind; verbs.cpp, signal and wait).
#include "backends/sim/simulator.h"

namespace symm::sim {

int BlockCtx::rank() const { return blk_->rank; }
int BlockCtx::world() const { return sim_->world(); }
int BlockCtx::block() const { return sim_->block_of(*blk_); }
int BlockCtx::blocks() const { return sim_->blocks(*blk_); }
int BlockCtx::lane() const { return blk_->lane; }
int BlockCtx::lanes() const { return sim_->lanes(*blk_); }
uintptr_t BlockCtx::peer_addr(uintptr_t p, int r) const { return sim_->peer_addr(*blk_, p, r); }
void BlockCtx::copy(void* dst, const void* src, std::size_t bytes) {
  other_verb(false);
  sim_->copy(*blk_, reinterpret_cast<uintptr_t>(dst), reinterpret_cast<uintptr_t>(src), bytes);
}
void BlockCtx::reduce_impl(DType t, void* dst, const void* const* srcs, int nsrc, std::size_t count, ReduceOp op) {
  other_verb();
  sim_->reduce(*blk_, t, reinterpret_cast<uintptr_t>(dst), srcs, nsrc, count, op);
}
void BlockCtx::multimem_impl(DType t, void* mc, std::size_t count, ReduceOp op) {
  other_verb();
  sim_->multimem(*blk_, t, reinterpret_cast<uintptr_t>(mc), count, op);
}
void BlockCtx::signal(int peer, uint32_t slot, uint32_t value, MemOrder order) {
  if (!is_signal_order(order)) bad_order("signal", order, "kRelaxed or kRelease");
  sim_->settle_loads(*blk_);
  sim_->signal(*blk_, peer, slot, value, order);
}
void BlockCtx::wait(uint32_t slot, uint32_t value, MemOrder order) {
  if (!is_wait_order(order)) bad_order("wait", order, "kRelaxed or kAcquire");
  sim_->settle_loads(*blk_);
  sim_->wait(*blk_, slot, value, order);
}
void BlockCtx::bad_order(const char* verb, MemOrder order, const char* allowed) const {
  fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank()) + " block " + std::to_string(block()) + ": " +
                                        verb + " with memory order " + order_name(order) + " (" +
                                        std::to_string(int(order)) + "): the verb contract allows " + allowed);
}
void BlockCtx::other_verb(bool settle) {
  blk_->run_kind = Block::kRunOther;
  if (settle) sim_->settle_loads(*blk_);
}
uint32_t BlockCtx::advance(uint32_t slot) {
  other_verb();
  return sim_->advance(*blk_, slot);
}
// The transfers are issued one after another, as the block's posted stores would be; each
// reads its source when issued (a block has all its loads in flight at once on the GPU, which
// the issue time at the block's rate already stands for).
void BlockCtx::put_ll(void* const* dsts, const void* const* srcs, int n, std::size_t bytes, uint32_t epoch) {
  other_verb();
  for (int i = 0; i < n; ++i)
    sim_->put_ll(*blk_, reinterpret_cast<uintptr_t>(dsts[i]), reinterpret_cast<uintptr_t>(srcs[i]), bytes, epoch);
}
void BlockCtx::reduce_ll_impl(DType t, void* dst, const void* const* srcs, int nsrc, std::size_t count, uint32_t epoch,
                              ReduceOp op, int plain) {
  other_verb();
  sim_->reduce_ll(*blk_, t, reinterpret_cast<uintptr_t>(dst), srcs, nsrc, count, epoch, op, plain);
}
void BlockCtx::mma_tile_impl(DType t, void* c, std::size_t ldc, const void* a, std::size_t lda, const void* b,
                             std::size_t ldb, int m, int n, int k, const void* c_in, int n_in, std::size_t in_stride) {
  other_verb();
  sim_->mma_tile(*blk_, t, reinterpret_cast<uintptr_t>(c), ldc, reinterpret_cast<uintptr_t>(a), lda,
                 reinterpret_cast<uintptr_t>(b), ldb, m, n, k, reinterpret_cast<uintptr_t>(c_in), n_in, in_stride);
}

}  // namespace symm::sim
