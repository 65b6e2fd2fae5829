// Calibration microbenchmarks as device programs (symmcoll calibrate): written once in the
// verbs, run by the CUDA backend to measure a machine and by the simulator to produce the rows a
// machine file predicts (the fit's test: parameters in, rows out, parameters back).
//
// Each program isolates one machine-file parameter (docs: the table in calib_rows.h). The size
// argument carries the program's knob: `units(a)` = count * sizeof(T) / 16, i.e. a call of
// `bytes` runs bytes / 16 rounds, loads or 16-byte vectors. Every program is SPMD and safe to
// launch again (epochs come from advance(), as barriers' do).
#pragma once

#include "core/algos/barrier_signal_wait.h"
#include "core/calib_plan.h"
#include "core/coll_args.h"
#include "core/partition.h"
#include "core/signal_pad.h"
#include "core/verbs.h"

namespace symm::calib {

template <class T>
SYMM_HD std::size_t units(const CollArgs& a) {
  return a.count * sizeof(T) / kVecBytes;
}

// The flag channel and counter the ping-pong uses (barriers use channel 0 and counter 0).
inline constexpr int kChannel = 3, kCounter = 3;

// The flag value of round i (1-based) of the call whose counter is `epoch` (advance()'s value) in
// the programs that signal once per round (PingPong, Exchange): every call owns kMaxRounds values,
// whatever its round count, so a call's values exceed those of every call before it. (A stride
// of the call's own round count, as before, let a call of 16 rounds after calls of 32 find its
// flags already set: calibrate --trace's first traced ping-pong, 16 rounds after the timed rows'
// 32, "ran" 4.4x faster with every wait passing at its first look.) 32-bit flags hold 2^22 calls;
// kMaxRounds is in calib_plan.h, whose check() keeps every plan's rounds within it.
SYMM_HD constexpr uint32_t round_value(uint32_t epoch, uint32_t i) { return (epoch - 1) * kMaxRounds + i; }

// Nothing: the launch alone.
struct Empty {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx&, const CollArgs&) {}
};

// Ranks 0 and 1, block 0: units(a) round trips (at most kMaxRounds) on one flag each way. kStore:
// each hop first stores 16 bytes into the peer's `out` and publishes them with a release signal
// (the receiver acquires): the hop then costs a store landing plus a flag. kFlush: after each
// signal, a copy of 16 bytes from the rank's own `in` to its `out` (a local load and store
// between the flag's store and the wait; data only). Other ranks and blocks return.
template <MemOrder kSignal, MemOrder kWait, bool kStore, bool kFlush = false>
struct PingPong {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.block() != 0 || ctx.rank() > 1) return;
    const int me = ctx.rank(), peer = 1 - me;
    const uint32_t n = uint32_t(units<T>(a));
    const uint32_t epoch = ctx.advance(pad::counter(0, kCounter));
    const uint32_t mine = pad::flag(kChannel, 0, peer);  // the flag the peer writes into my pad
    char* dst = static_cast<char*>(ctx.peer(a.out, peer));
    const char* src = static_cast<const char*>(a.in);
    char* own = static_cast<char*>(a.out);
    auto hop = [&](uint32_t v) {
      if (kStore) ctx.copy(dst + (v % n) * kVecBytes, src, kVecBytes);
      ctx.signal(peer, pad::flag(kChannel, 0, me), v, kSignal);
      if (kFlush) ctx.copy(own, src, kVecBytes);
    };
    for (uint32_t i = 1; i <= n; ++i) {
      if (me == 0) {
        hop(round_value(epoch, i));
        ctx.wait(mine, round_value(epoch, i), kWait);
      } else {
        ctx.wait(mine, round_value(epoch, i), kWait);
        hop(round_value(epoch, i));
      }
    }
  }
};
using PingPongRelaxed = PingPong<MemOrder::kRelaxed, MemOrder::kRelaxed, false>;
using PingPongAcqRel = PingPong<MemOrder::kRelease, MemOrder::kAcquire, false>;
using PingPongStore = PingPong<MemOrder::kRelease, MemOrder::kAcquire, true>;
using PingPongRelaxedFlush = PingPong<MemOrder::kRelaxed, MemOrder::kRelaxed, false, true>;

// Every rank, block 1 (launch two blocks; block 0 returns: block 1's counter kCounter is free,
// PingPong's is block 0's): units(a) rounds of an exchange: signal every peer (relaxed), then wait
// until every peer's signal of this round has arrived. One round is the least any one-kernel
// all-reduce does (every rank's data crosses once each way); launched back to back as the bench
// launches device programs, a call of one round is the floor under such a kernel's time.
struct Exchange {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.block() != 1) return;
    const int me = ctx.rank(), w = ctx.world();
    const uint32_t n = uint32_t(units<T>(a));
    const uint32_t epoch = ctx.advance(pad::counter(1, kCounter));
    for (uint32_t i = 1; i <= n; ++i) {
      for (int r = 0; r < w; ++r)
        if (r != me) ctx.signal(r, pad::flag(kChannel, 1, me), round_value(epoch, i), MemOrder::kRelaxed);
      for (int r = 0; r < w; ++r)
        if (r != me) ctx.wait(pad::flag(kChannel, 1, r), round_value(epoch, i), MemOrder::kRelaxed);
    }
  }
};

// Every rank, block 0: kLlChainBytes of its `in` put as flagged packets into its own `out` (one
// put_ll), then a.count * sizeof(T) / kLlChainRound passes of reduce_ll over them, each finding
// every packet already valid: kReduce false unpacks them (one source, as all_gather.st_ll's
// readers do); true adds the plain `in` to them (a packet source and a plain one, as the LL
// reductions at world 2 read their peer's packets and their own part). The slope over passes is
// a block's packet read rate (ll_read_GBps, fit.cpp, from the unpack rows); no peer is touched.
template <bool kReduce>
struct LlReadChain {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.block() != 0) return;
    const std::size_t passes = a.count * sizeof(T) / kLlChainRound;
    const uint32_t e = ctx.advance(pad::counter(6, kCounter));
    char* out = static_cast<char*>(a.out);
    void* packets = out;
    const void* in = a.in;
    ctx.put_ll(&packets, &in, 1, kLlChainBytes, e);
    T* dst = reinterpret_cast<T*>(out + 2 * kLlChainBytes);
    const void* srcs[2] = {packets, a.in};
    for (std::size_t i = 0; i < passes; ++i)
      ctx.template reduce_ll<T>(dst, srcs, kReduce ? 2 : 1, kLlChainBytes / sizeof(T), e, ReduceOp::kSum,
                                kReduce ? 1 : -1);
  }
};
using LlUnpackChain = LlReadChain<false>;
using LlReduceChain = LlReadChain<true>;

// Every rank, every block: units(a) rounds of the collectives' blockwise barrier (core/algos/
// barrier_signal_wait.h: signal every peer's flag of this block, me + 1 first, wait for every
// peer's), acquire / release or relaxed, its waits in the order kWaits:
//   kSignals (barrier_blocks rows): the order the signals go out, me + 1 first, the flag its sender
//     signals last, so every later wait reads a flag already set and a round at world w pays w - 2
//     later signals and w - 2 such reads in turn; every calibration run so far measured this order.
//     Launched at 1..64 blocks: what a barrier costs as more blocks cross it at once (every block
//     fences before its release signal; a relaxed barrier does not), the rows fence_gap_us comes from.
//   kLanding (barrier_landing rows, one block): the collectives' own order, the order the flags land.
// Beside each other at one block they tell a later signal's cost from a later wait's
// (apps/harness/sim/fit.cpp, signal_next_us and wait_next_us). Channel 0 and counter 0 are the
// barrier verb's, which no other calibration program uses.
template <BarrierOrder kOrder, WaitOrder kWaits>
struct BarrierRounds {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const std::size_t rounds = units<T>(a);
    for (std::size_t k = 0; k < rounds; ++k) barrier(ctx, kOrder, 0, kWaits);
  }
};
using BarrierRoundsAcqRel = BarrierRounds<kBarrierAcqRel, WaitOrder::kSignals>;
using BarrierRoundsRelaxed = BarrierRounds<kBarrierRelaxed, WaitOrder::kSignals>;
using BarrierLandingAcqRel = BarrierRounds<kBarrierAcqRel, WaitOrder::kLanding>;
using BarrierLandingRelaxed = BarrierRounds<kBarrierRelaxed, WaitOrder::kLanding>;

// Every rank, block 0: one relaxed signal to itself, a wait until it has landed, then units(a)
// more acquire waits on that flag, each finding it already set: a chain of acquires with nothing
// to wait for (data only: what an acquire costs when there is nothing to wait for and the block
// wrote the flag itself; AcquirePeerFlags below, for flags a peer wrote). Its flag (channel
// kChannel, slot of block 2) and counter (block 2's kCounter) are no other program's; no peer is
// touched, so any world runs it.
struct AcquireChain {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.block() != 0) return;
    const int me = ctx.rank();
    const uint32_t n = uint32_t(units<T>(a));
    const uint32_t e = ctx.advance(pad::counter(2, kCounter));
    const uint32_t slot = pad::flag(kChannel, 2, me);
    ctx.signal(me, slot, e, MemOrder::kRelaxed);
    ctx.wait(slot, e, MemOrder::kAcquire);
    for (uint32_t i = 0; i < n; ++i) ctx.wait(slot, e, MemOrder::kAcquire);
  }
};

// Every rank, block 0: units(a) / 8 reduces of one local source, a 16-byte vector each, one
// after the other, each from a line of its own (`in` + 128 i, so no load finds its line in L1 and
// every one goes to L2, where bytes a peer or a copy engine just stored are): each reduce's store
// needs its load, so in-order issue makes a chain of local load round trips. Its slope calibrates
// local_load_us, what a copy or reduce of local sources waits for its loads (apps/harness/sim/
// fit.cpp). No peer is touched: any world runs it, one GPU too.
// The chain itself: n reduces of the vector at the head of each of n lines from `from`, one
// after another, each into the same line of `to`.
template <class T, class Ctx>
SYMM_HD void reduce_line_heads(Ctx& ctx, const T* from, T* to, std::size_t n) {
  constexpr std::size_t kStride = kLineBytes / sizeof(T), kPer = kVecBytes / sizeof(T);
  for (std::size_t i = 0; i < n; ++i) {
    const T* src[1] = {from + i * kStride};
    ctx.template reduce<T>(to + i * kStride, src, 1, kPer, ReduceOp::kSum);
  }
}

struct LocalReduceChain {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.block() != 0) return;
    reduce_line_heads<T>(ctx, static_cast<const T*>(a.in), static_cast<T*>(a.out), a.count * sizeof(T) / kLineBytes);
  }
};

// Ranks 0 and 1, block 0: LocalReduceChain over lines a peer has just stored. With n = bytes /
// 256: rank 0 copies n lines of its `in` into the first half of rank 1's `out` in one bulk copy and
// releases a flag; rank 1 acquires it, then reduces the 16-byte vector at the head of each of those
// n lines, one after another, into the second half of its `out`: what all_reduce.st_reduce's
// local reduce reads (its peers' pushes, after their flags). The slope over lines calibrates
// local_load_us where a run has these rows (fit.cpp).
struct PeerReduceChain {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.block() != 0 || ctx.rank() > 1) return;
    const std::size_t n = a.count * sizeof(T) / (2 * kLineBytes);
    const uint32_t e = ctx.advance(pad::counter(4, kCounter));
    const uint32_t slot = pad::flag(kChannel, 40, 0);
    if (ctx.rank() == 0) {
      ctx.copy(ctx.peer(a.out, 1), a.in, n * kLineBytes);
      ctx.signal(1, slot, e, MemOrder::kRelease);
      return;
    }
    ctx.wait(slot, e, MemOrder::kAcquire);
    T* landed = static_cast<T*>(a.out);
    reduce_line_heads<T>(ctx, landed, landed + n * (kLineBytes / sizeof(T)), n);
  }
};

// Ranks 0 and 1, block 0: rank 0 writes units(a) flags into rank 1's
// pad (relaxed, slots of blocks 4, 5, ... of channel kChannel), then a release flag (block 3's);
// rank 1 waits for the release, then acquires each of the units(a) flags once, every one already
// set by the peer: what the later waits of a barrier pay, each flag a line a peer wrote over
// NVLink (AcquireChain's flag is one the block wrote itself). At most 32 flags. Its slope
// calibrates release_fence_share (apps/harness/sim/fit.cpp).
struct AcquirePeerFlags {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.block() != 0 || ctx.rank() > 1) return;
    const uint32_t n = uint32_t(units<T>(a)) < 32 ? uint32_t(units<T>(a)) : 32;
    const uint32_t e = ctx.advance(pad::counter(3, kCounter));
    if (ctx.rank() == 0) {
      for (uint32_t i = 0; i < n; ++i) ctx.signal(1, pad::flag(kChannel, 4 + int(i), 0), e, MemOrder::kRelaxed);
      ctx.signal(1, pad::flag(kChannel, 3, 0), e, MemOrder::kRelease);
    } else {
      ctx.wait(pad::flag(kChannel, 3, 0), e, MemOrder::kAcquire);
      for (uint32_t i = 0; i < n; ++i) ctx.wait(pad::flag(kChannel, 4 + int(i), 0), e, MemOrder::kAcquire);
    }
  }
};

// Rank 0, block 0: one remote load of 16 bytes from each kStride bytes of rank 1's `in` (count *
// sizeof(T) / kStride of them), one after the other (each copy's store needs its load: in-order
// issue makes a chain of round trips). LoadChain: 16 (back to back: two loads share each 32-byte
// sector and the second is served by the cache, 1.0 and 0.19 us by turns on 2x H100 by calibrate
// --trace, so its slope is their mean); LoadChainLines: a line each (kLineBytes), every load a
// round trip over the link.
template <std::size_t kStride>
struct LoadChainT {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.block() != 0 || ctx.rank() != 0) return;
    const std::size_t n = a.count * sizeof(T) / kStride;
    const char* src = static_cast<const char*>(ctx.peer(a.in, 1));
    char* dst = static_cast<char*>(a.out);
    for (std::size_t i = 0; i < n; ++i) ctx.copy(dst + i * kVecBytes, src + i * kStride, kVecBytes);
  }
};
using LoadChain = LoadChainT<kVecBytes>;
using LoadChainLines = LoadChainT<kLineBytes>;

// Rank 0, block 0: copies of kCopyPieceBytes each (one 16-byte vector per thread of a 256-thread
// share of the block), one after the other, copy i from peer 1 + i % (world - 1) and from its own
// kCopyPieceBytes of that peer's `in` (count * sizeof(T) / kCopyPieceBytes copies): what a program's
// successive copies from its peers cost (all_gather.ld's, the second half of rs_ld_ag_ld), where
// load_chain_lines is one thread's 16-byte loads. On 4x H100: 1.05 us a copy at world 2 and at
// world 4 (turning to another peer costs nothing more), each copy after the one before, against
// 0.80 us for load_chain_lines in the same runs (experiments/results/h100x4/calib_copy_7ed6471);
// the simulator overlaps copies from different peers. Data only, no key.
// kAll: every rank's block 0 at once, rank r's copy i from rank r + 1 + i % (world - 1) (mod world):
// the same chain with every GPU's links and memory serving the others' loads as it runs, as in a
// program whose ranks all load from their peers at once (peer_copy_chain_all; data only).
template <bool kAll>
struct PeerCopyChainT {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.block() != 0 || (!kAll && ctx.rank() != 0)) return;
    const std::size_t n = a.count * sizeof(T) / kCopyPieceBytes;
    const int peers = ctx.world() - 1, me = ctx.rank();
    char* dst = static_cast<char*>(a.out);
    for (std::size_t i = 0; i < n; ++i) {
      const int peer = (me + 1 + int(i % std::size_t(peers))) % ctx.world();
      const char* src = static_cast<const char*>(ctx.peer(a.in, peer));
      ctx.copy(dst + i * kCopyPieceBytes, src + i * kCopyPieceBytes, kCopyPieceBytes);
    }
  }
};
using PeerCopyChain = PeerCopyChainT<false>;
using PeerCopyChainAll = PeerCopyChainT<true>;

// Rank 0, block 0: count * sizeof(T) / kLineBytes rounds of a 16-byte copy from a line of its own
// `in` to a line of `out` (its own: FenceChainLocal; rank 1's: FenceChainPeer, a store over the
// link) and a release signal to itself, so that every round's release fences (a data verb since
// the last one): what a release's fence costs with a local store, or a remote store, to publish,
// timed (calibrate --trace puts the acquire/release ping-pong's fence at ~1.65 us and the programs'
// at 1.75-1.95, each with a stamp). Nobody waits for the flags. Data only, no key.
template <bool kPeer>
struct FenceChainT {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.block() != 0 || ctx.rank() != 0) return;
    const std::size_t n = a.count * sizeof(T) / kLineBytes;
    const uint32_t e = ctx.advance(pad::counter(5, kCounter));
    const uint32_t slot = pad::flag(kChannel, 41, 0);
    const char* src = static_cast<const char*>(a.in);
    char* dst = static_cast<char*>(kPeer ? ctx.peer(a.out, 1) : a.out);
    for (std::size_t i = 0; i < n; ++i) {
      ctx.copy(dst + i * kLineBytes, src + i * kLineBytes, kVecBytes);
      ctx.signal(0, slot, round_value(e, uint32_t(i + 1)), MemOrder::kRelease);
    }
  }
};
using FenceChainLocal = FenceChainT<false>;
using FenceChainPeer = FenceChainT<true>;

// Bulk copies of `bytes` (count * sizeof(T)) split evenly over the blocks, by pattern:
//   kLocal    every rank: its `in` to its own `out` (HBM)
//   kPeer     rank 0 only: its `in` to rank 1's `out` (one link; per-block rate at few blocks)
//   kScatter  rank 0 only: slices of its `in` to every peer's `out` (rank 0's egress)
//   kIncast   every rank but 0: its `in` to its slice of rank 0's `out` (rank 0's ingress)
// In kScatter / kIncast `bytes` is what crosses rank 0's side: (world-1) slices of bytes/(world-1).
enum class Pattern { kLocal, kPeer, kScatter, kIncast };

template <Pattern kPattern>
struct BulkCopy {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world(), b = ctx.block(), nb = ctx.blocks();
    const std::size_t bytes = a.count * sizeof(T);
    const char* in = static_cast<const char*>(a.in);
    char* out = static_cast<char*>(a.out);
    // [lo, hi) of `len` bytes for block b, in whole 16-byte vectors, each piece starting on a large
    // boundary as the collectives' pieces do (core/partition.h split_aligned): cut on 16-byte
    // boundaries instead, copy_local at 132 blocks ran ~10 % below the HBM rate the collectives reach
    // on one H200 (experiments/results/h200x1/hbm_blocks_ec5f63a).
    auto piece = [&](std::size_t len, std::size_t& lo, std::size_t& hi) {
      const Range r = split_aligned<char>(len, nb, b);
      lo = r.begin;
      hi = r.begin + r.count;
    };
    std::size_t lo = 0, hi = 0;
    if constexpr (kPattern == Pattern::kLocal) {
      piece(bytes, lo, hi);
      ctx.copy(out + lo, in + lo, hi - lo);
    } else if constexpr (kPattern == Pattern::kPeer) {
      if (me != 0) return;
      piece(bytes, lo, hi);
      ctx.copy(static_cast<char*>(ctx.peer(a.out, 1)) + lo, in + lo, hi - lo);
    } else {
      const std::size_t slice = bytes / std::size_t(n - 1) / kVecBytes * kVecBytes;
      piece(slice, lo, hi);
      if (kPattern == Pattern::kScatter && me == 0) {
        // Block b starts at peer 1 + b % (n-1), so every link has work from the first moment.
        for (int i = 0; i < n - 1; ++i) {
          const int p = 1 + (b + i) % (n - 1);
          ctx.copy(static_cast<char*>(ctx.peer(a.out, p)) + std::size_t(p - 1) * slice + lo, in + lo, hi - lo);
        }
      } else if (kPattern == Pattern::kIncast && me != 0) {
        ctx.copy(static_cast<char*>(ctx.peer(a.out, 0)) + std::size_t(me - 1) * slice + lo, in + lo, hi - lo);
      }
    }
  }
};

// Rank 0 only, every block: its piece of `bytes` (whole vectors) reduced from every rank's `in`
// (its own and each peer's, world sources, as all_reduce.ld_reduce loads them) into its own `out`.
// At 1-2 blocks the per-block cap binds: the slope over bytes is a block's reduce rate, counted in
// the bytes it loads (world per byte out): block_reduce_GBps (apps/harness/sim/fit.cpp), the cap
// backends/sim/verbs.cpp puts on a reduce, apart from block_GBps (a copy's: its loads wait for its
// stores; a reduce keeps a load from each source in flight at once). No flag, no barrier: the inputs
// never change, and nothing checks the output.
struct ReducePeers {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.rank() != 0) return;
    const Range piece = split_vec<T>(a.count, ctx.blocks(), ctx.block());
    if (!piece.count) return;
    const T* srcs[Ctx::kWorldLimit];
    for (int r = 0; r < ctx.world(); ++r) srcs[r] = ctx.peer(static_cast<const T*>(a.in) + piece.begin, r);
    ctx.template reduce<T>(static_cast<T*>(a.out) + piece.begin, srcs, ctx.world(), piece.count, ReduceOp::kSum);
  }
};

}  // namespace symm::calib
