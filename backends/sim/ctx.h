// The simulator's block context: the verbs of core/verbs.h on a (rank, block) fiber.
//
// Timing semantics (every verb that takes time yields to the engine until it is done):
//   copy, remote src (load)        the block waits for the transfer, then load_rtt_us; the bytes
//                                  land in dst at that moment. Source bytes are read when the
//                                  verb is issued: reads see only stores that have landed.
//   copy, local src, remote dst    posted stores: the block spends the transfer (issue) time and
//                                  continues; the bytes land store_latency_us after that and stay
//                                  "in flight" until then
//   copy, local -> local           an HBM transfer; the bytes land when it ends
//   reduce<T>                      one flow loading all sources at once (remote ones pay the
//                                  round trip as above), fp32 accumulation, one rounding to T,
//                                  then a store to dst with the rules of copy
//   multimem_reduce<T>             one flow through the NVSwitch: loads [mc, mc+count) from every
//                                  rank, reduces in fp32, multicasts the result back; pays the
//                                  round trip like a load, and the multicast stores are posted
//   signal                         costs nothing to issue; the flag lands flag_latency_us later.
//                                  kRelease first waits until every earlier store of the block
//                                  has landed (and publishes them with the flag)
//   wait                           blocks until the local flag >= value; kAcquire makes the
//                                  stores published by the matching release visible (joins the
//                                  signaller's clock); kRelaxed joins nothing
//   signal, wait with an order outside the contract (core/verbs.h) throw kInvalidArgument
//   advance                        free (one fiber is the whole block)
//   put_ll                         posted stores of ll_bytes(bytes) = 2 * bytes of packets (the wire
//                                  carries the epochs too): the block spends the issue time of the
//                                  packet bytes at its per-block / link rate and continues; the
//                                  packets land store_latency_us after that (a local dst: an HBM
//                                  transfer, landing when it ends). Source bytes are read at issue.
//   reduce_ll<T>                   blocks until every packet of every source buffer carries exactly
//                                  `epoch` (an older or newer epoch is not accepted), then one local
//                                  flow reading the 2 * count * sizeof(T) packet bytes of each source
//                                  at HBM rate (no per-block cap: block_GBps models remote loads),
//                                  fp32 accumulation, a store to dst with the rules of copy. The
//                                  data words are read once every packet is valid. Packet reads
//                                  are synchronising by construction: exempt from the read-after-
//                                  write check, and within the kernel they create no happens-before
//                                  for other memory. They are recorded as reads (write after read),
//                                  and accepted packets order the *kernels*: the sender's launch
//                                  clock joins the receiving rank's host clock at kernel end (the
//                                  two-halves argument of core/algos/block_regions.h; simulator.cpp)
// A block ends when its program returns and its stores have landed (kernel end flushes). A call
// ends when its last block has: the host then reads `out` (the output checked for that call is
// what `out` holds at that moment) and takes `in` and `out` back for its caller, so every store
// into `out` and every read of `in` / `out` by any rank must be ordered before it (race check).
//
// Visibility vs timing. With the shipped machine files (experiments/machines/*.ini, and
// tests/sim/tiny.ini) store_latency_us == flag_latency_us: a relaxed flag signalled right after a
// posted store lands at the same tick as the store, and symmetric ranks finish their stores when
// their peers do. A missing release (or a missing end barrier) therefore rarely shows up as wrong
// data; it shows up through the race check (happens-before, independent of timing), and not at
// all in timing-only runs, which check nothing.
//
// Transfer rates: every transfer is one flow in the flow network (flow_net.h), on the
// source GPUs' NVLink egress, the destination's ingress, local HBM, and (multimem) the
// NVSwitch; a flow is capped at block_GBps over all the bytes it reads.
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
  void reduce_ll(T* dst, const void* const* srcs, int nsrc, std::size_t count, uint32_t epoch, ReduceOp op) {
    reduce_ll_impl(DTypeOf<T>::value, dst, srcs, nsrc, count, epoch, op);
  }

 private:
  uintptr_t peer_addr(uintptr_t p, int r) const;
  [[noreturn]] void bad_order(const char* verb, MemOrder order, const char* allowed) const;
  void reduce_impl(DType t, void* dst, const void* const* srcs, int nsrc, std::size_t count, ReduceOp op);
  void multimem_impl(DType t, void* mc, std::size_t count, ReduceOp op);
  void reduce_ll_impl(DType t, void* dst, const void* const* srcs, int nsrc, std::size_t count,
                      uint32_t epoch, ReduceOp op);

  Simulator* sim_;
  Block* blk_;
};

static_assert(BlockVerbs<BlockCtx>);

// A device program instantiated for one element type, as the engine runs it.
using ProgramFn = void (*)(BlockCtx&, const CollArgs&);

}  // namespace symm::sim
