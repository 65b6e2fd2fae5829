// The verbs: the closed set of operations every algorithm is written in.
//
// Device programs are block-level: `template <class T, class Ctx> SYMM_HD static void
// run(Ctx& ctx, const CollArgs& a)`. Every verb is called by *all* threads of the block
// (CUDA) or by the block's fiber (simulator) with the same arguments; which thread does
// what is the backend's business. Adding a verb means: both implementations, the concept
// below, and a test in tests/.
//
// Memory ordering is in the signature. A signal with kRelease publishes every
// store this block issued before it (and, cumulatively, everything the block had acquired
// or that preceded its launch on the stream); a wait with kAcquire makes the published
// stores of the matching releases visible to this block. kRelaxed orders only the flag.
// Any other order is outside the contract: barrier orders are checked when the constant is made
// (a compile error, core/algos/barrier_signal_wait.h); a signal or wait given one at run time
// throws kInvalidArgument in the simulator and traps the kernel on the GPU.
#pragma once

#include <concepts>

#include "core/common.h"

namespace symm {
// Bytes of the packet buffer that carries `bytes` of data (half of each packet is the epoch).
SYMM_HD constexpr std::size_t ll_bytes(std::size_t bytes) { return 2 * bytes; }

// The orders signal and wait accept.
SYMM_HD constexpr bool is_signal_order(MemOrder o) { return o == MemOrder::kRelaxed || o == MemOrder::kRelease; }
SYMM_HD constexpr bool is_wait_order(MemOrder o) { return o == MemOrder::kRelaxed || o == MemOrder::kAcquire; }
}  // namespace symm

namespace symm {

// ---- block verbs -----------------------------------------------------------------------
//
//   int rank(), world(), block(), blocks()        who am I
//   int lane(), lanes()                           which line of the block's work runs here: 0, the
//                                                 block's own; 1, its side lane, a second line
//                                                 that runs beside it on the same SM, same block()
//                                                 and blocks(). Only a program that declares
//                                                 `static constexpr bool kSideLane = true` gets a
//                                                 side lane, and only where the backend runs one
//                                                 (lanes() == 2: the simulator's fused runs, a
//                                                 fiber of its own that holds no SM; on CUDA such a
//                                                 program runs in its own kernel, whose spare warps
//                                                 are the side lane, so the generic context says
//                                                 lanes() == 1). With lanes() == 1 the program
//                                                 does its side work itself.
//   Ctx::kWorldLimit                                the most ranks this context serves: programs
//                                                 size their per-rank arrays by it, so a GPU
//                                                 context (one NVSwitch node, 8) keeps them small
//                                                 while the simulator scales to symm::kPadWorld
//   T* peer(T* p, int r)                          same offset of p's symmetric buffer on rank r
//                                                 (r == rank() returns p)
//   void copy(void* dst, const void* src, size_t bytes)
//                                                 block-cooperative copy, bytes % 16 == 0;
//                                                 either side may be a peer address
//   void reduce<T>(T* dst, const T* const* srcs, int nsrc, size_t count, ReduceOp op)
//                                                 dst[i] = op(srcs[0][i], ..., srcs[nsrc-1][i]),
//                                                 accumulated in fp32, stored as T;
//                                                 count * sizeof(T) % 16 == 0;
//                                                 dst and srcs may be peer addresses
//   void multimem_reduce<T>(T* mc, size_t count, ReduceOp op)
//                                                 NVLS: mc is a multicast address of a symmetric
//                                                 buffer; loads the in-switch reduction over all
//                                                 ranks of [mc, mc+count) and stores the result
//                                                 to that range on every rank
//   void signal(int peer, uint32_t slot, uint32_t value, MemOrder order)
//                                                 store `value` into flag `slot` of peer's signal
//                                                 pad; order is kRelaxed or kRelease
//   void wait(uint32_t slot, uint32_t value, MemOrder order)
//                                                 spin until the local flag `slot` >= value
//                                                 (flags are epochs that only grow); order is
//                                                 kRelaxed or kAcquire. Bounded: a wait that
//                                                 cannot finish is an error naming rank, block,
//                                                 slot, expected and seen values
//   uint32_t advance(uint32_t slot)               add 1 to the local flag `slot`, which only this
//                                                 (rank, block) ever writes, and return the new
//                                                 value: the persistent per-block call counter
//                                                 that epochs come from (survives launches and
//                                                 CUDA-graph replays; never reset)
//
//   Flagged packets (NCCL's LL protocol): data and its epoch travel in one 8-byte packet
//   {4 data bytes, 4-byte epoch}, stored with one single-copy-atomic 8-byte store, so a reader
//   that sees the epoch sees the data: no fence and no separate flag. A packet buffer holding
//   `bytes` of data occupies ll_bytes(bytes) = 2 * bytes.
//   void put_ll(void* const* dsts, const void* const* srcs, int n, size_t bytes, uint32_t epoch)
//                                                 n transfers of `bytes` each: srcs[i] written as
//                                                 packets {word w, epoch} at dsts[i] (packet
//                                                 buffers, usually peers'); bytes % 16 == 0;
//                                                 posted stores, no ordering. One verb for all n
//                                                 so every source's loads are in flight before the
//                                                 first store: n calls would pay n load latencies
//   void reduce_ll<T>(T* dst, const void* const* srcs, int nsrc, size_t count, uint32_t epoch,
//                     ReduceOp op, int plain = -1)
//                                                 srcs are local packet buffers of count
//                                                 elements each; spin until every packet holds
//                                                 `epoch` (bounded, like wait: the error names
//                                                 rank, block and the buffer), then
//                                                 dst[i] = op over s of srcs[s][i] in fp32, in
//                                                 the order of s, stored as T (nsrc == 1 unpacks
//                                                 a copy). srcs[plain] (0 <= plain < nsrc) is
//                                                 instead a plain local buffer of count T, read
//                                                 as data with no wait: a rank's own input
//                                                 enters its reduction without a round trip
//                                                 through packets it sent itself
//
//   Matrix tiles (the fused matmuls' device programs, core/algos/tile_gemm.h):
//   void mma_tile<T>(T* c, size_t ldc, const T* a, size_t lda, const T* b, size_t ldb,
//                    int m, int n, int k, const T* c_in = nullptr, int n_in = 0,
//                    size_t in_stride = 0)
//                                                 the block accumulates C_tile += A_tile @ B_tile
//                                                 over the whole depth k in an fp32 accumulator
//                                                 that starts at zero (products of T, bf16 or
//                                                 fp16), then an epilogue rounds the tile to T once
//                                                 and stores it: c[i*ldc + j] for i < m, j < n.
//                                                 Row-major: A is m x k (row stride lda), B k x n
//                                                 (ldb). 1 <= m <= kTileM, 1 <= n <= kTileN, k >= 1;
//                                                 n, k, lda, ldb, ldc multiples of 8 (16-byte rows)
//                                                 and every operand 16-byte aligned. a and b may be
//                                                 local or peer addresses (peer operands are loaded
//                                                 over NVLink); c may be a peer address (posted
//                                                 stores, ordered for peers by a later release,
//                                                 like copy's). Reads and stores are plain data
//                                                 accesses: a peer's rows become readable through
//                                                 an acquire, as for copy. With n_in > 0 the
//                                                 epilogue first adds n_in tiles of the same shape
//                                                 and ldc, c_in[s * in_stride + i*ldc + j] for
//                                                 s = 0, 1, ..., in fp32 in that order (a sum of
//                                                 partial products rounded once); they may be peer
//                                                 addresses and are read as A and B are
inline constexpr int kTileM = 128, kTileN = 128;  // the largest tile one mma_tile call computes
// Whether a program declares a side lane (lane() above).
template <class Program>
constexpr bool has_side_lane() {
  if constexpr (requires { Program::kSideLane; })
    return Program::kSideLane;
  else
    return false;
}
template <class C>
concept BlockVerbs = requires(C& c, const C& cc, void* p, const void* cp, float* fp, const float* const* srcs,
                              std::size_t n, int r, uint32_t u, MemOrder o, ReduceOp op) {
  { C::kWorldLimit } -> std::convertible_to<int>;
  requires C::kWorldLimit >= 2 && C::kWorldLimit <= kPadWorld;
  { cc.rank() } -> std::convertible_to<int>;
  { cc.world() } -> std::convertible_to<int>;
  { cc.block() } -> std::convertible_to<int>;
  { cc.blocks() } -> std::convertible_to<int>;
  { cc.lane() } -> std::convertible_to<int>;
  { cc.lanes() } -> std::convertible_to<int>;
  { c.peer(fp, r) } -> std::same_as<float*>;
  c.copy(p, cp, n);
  c.template reduce<float>(fp, srcs, r, n, op);
  c.template multimem_reduce<float>(fp, n, op);
  c.signal(r, u, u, o);
  c.wait(u, u, o);
  { c.advance(u) } -> std::convertible_to<uint32_t>;
  c.put_ll(&p, &cp, r, n, u);
  c.template reduce_ll<float>(fp, &cp, r, n, u, op);
  c.template reduce_ll<float>(fp, &cp, r, n, u, op, r);
  c.template mma_tile<bf16>(static_cast<bf16*>(p), n, static_cast<const bf16*>(cp), n, static_cast<const bf16*>(cp), n,
                            r, r, r);
  c.template mma_tile<bf16>(static_cast<bf16*>(p), n, static_cast<const bf16*>(cp), n, static_cast<const bf16*>(cp), n,
                            r, r, r, static_cast<const bf16*>(cp), r, n);
};

// ---- host verbs (per-rank, stream-ordered host plans) ----------------------------------
//
//   launch<Program, T>(stream, args, blocks)      run a device program on `blocks` blocks
//   copy_engine(stream, dst, src, bytes)          DMA copy (either side may be a peer)
//   write_flag(stream, peer, slot, value)         stream-ordered flag store into peer's pad
//   wait_flag(stream, slot, value)                stream waits until local flag >= value
//   gemm(stream, C, A, B, m, n, k)                C = A * B (later issues)
//   record(stream, event) / wait(stream, event)   cross-stream ordering on one rank
//
// Host plans are written against these in later issues (copy-engine reduce-scatter,
// all-gather + GEMM); the simulator and the CUDA backend each implement them.

}  // namespace symm
