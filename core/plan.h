// Host plans: per-rank, stream-ordered programs over the host verbs.
//
// A device program (core/verbs.h) is what one block does; a host plan is what one *rank's host*
// enqueues for one call: kernels (device programs), copy-engine copies, flag writes and waits
// on streams, events between its streams, and matrix products. Every rank runs the same plan
// (SPMD). A plan is a struct with a `run`:
//
//   template <class T, class Host> static void run(Host& h, const PlanArgs& a);
//
// `run` only *enqueues*: it returns before any of the work has happened, as a CUDA host thread
// does, and it may not look at data. The backend runs the enqueued work: CUDA streams,
// cudaMemcpyAsync, cuStreamWriteValue32 / cuStreamWaitValue32, CUDA events, cuBLASLt
// (backends/cuda/host_ctx.h); or simulated streams, copy engines and SMs (backends/sim).
//
// ---- streams -------------------------------------------------------------------------------
// A rank has h.streams() streams, numbered 0 .. streams()-1. Stream kMainStream is the caller's:
// the call starts there (the backend forks the side streams from it at the call's start) and
// ends there. Work on one stream runs in the order enqueued, one item after the other (a CUDA
// stream): the next item starts when the previous one is done.
//
// ---- the end of a call -----------------------------------------------------------------------
// A plan joins every side stream it used back into the main stream before `run` returns: after a
// side stream's last item, a record on it that the main stream waits for (directly, or through
// another stream it waits for). Only then is every copy, kernel, GEMM and flag write of the call
// done when the main stream is, which is all the caller (and a CUDA graph's capture, which refuses
// an unjoined stream) waits for: a side stream still reading the call's input when the caller's
// next work overwrites it would send a peer corrupt data. CheckedHost::end_call checks it.
//
// ---- the host verbs (the order of every item is its stream's order) --------------------------
//   int rank(), world(), streams()                 who am I, how many streams I may use
//   T* peer(T* p, int r)                           same offset of p's symmetric buffer on rank r
//   launch<Program, T>(stream, const CollArgs& a, int blocks)
//                                                  run a device program on `blocks` blocks; done
//                                                  when its last block has ended and its stores
//                                                  have landed (kernel end)
//   copy_engine(stream, void* dst, const void* src, size_t bytes)
//                                                  DMA copy by a copy engine (no SM), bytes % 16 ==
//                                                  0; either side may be a peer address. Reads src
//                                                  when it starts; done when every byte has landed
//                                                  in dst (visible to later work on this stream)
//   write_flag(stream, int peer, uint32_t slot, uint32_t value)
//                                                  store `value` into plan flag `slot` of peer's
//                                                  signal pad (pad::plan_flag). RELEASE: it runs
//                                                  after all earlier work of the stream is done
//                                                  and publishes every store that work made (and
//                                                  what that work had acquired) with the flag.
//                                                  The flag must be 0 when it lands (consumed
//                                                  flags, below); value != 0
//   wait_flag(stream, uint32_t slot, uint32_t value)
//                                                  later work on the stream starts only once the
//                                                  local plan flag `slot` == value. ACQUIRE: the
//                                                  stores published by the matching write_flag are
//                                                  visible to that later work. Then it CONSUMES
//                                                  the flag (stores 0, stream-ordered). Bounded:
//                                                  a flag that never comes is an error naming
//                                                  rank, stream, slot, expected and seen value
//   record(stream, int event) / wait_event(stream, int event)
//                                                  work enqueued on `stream` after wait_event
//                                                  starts after everything enqueued on the
//                                                  recording stream before record (happens-before,
//                                                  one rank). A wait_event before the record is a
//                                                  plan bug (both backends refuse it)
//   gemm(stream, const GemmArgs& g)                C = A x B (+ C_in, g.c_in when set) on SMs
//                                                  (cuBLASLt on CUDA), fp32 accumulation, stored as
//                                                  g.dtype; reads A, B and C_in when it runs, done
//                                                  when C has landed
//
// Why consumed flags instead of the device programs' growing epochs: a stream write or wait
// captured in a CUDA graph writes / waits for a *constant*; an epoch that grows with every
// replay cannot be expressed. A flag that the waiter resets is replay-safe as long as no writer
// can write it again before the waiter consumed it: every plan starts with an entry handshake
// (each rank tells each peer "my buffers are free", then waits for every peer's word), and a
// rank writes its next call's flags only after that handshake, which follows the waiter's
// consumption of the previous call's flags in the waiter's stream order.
#pragma once

#include <algorithm>
#include <concepts>
#include <string>
#include <string_view>
#include <vector>

#include "core/coll_args.h"
#include "core/common.h"
#include "core/signal_pad.h"

namespace symm {

inline constexpr int kMainStream = 0;
inline constexpr int kMaxStreams = 8;  // streams one rank's plan may use
// The fused matmul plans run their GEMMs on the caller's stream and their copies beside: they want
// at least one side stream.
inline constexpr int kMinFusedStreams = 2;

#if !defined(__CUDA_ARCH__)
// The one check of a plan's stream count, for every command and backend: `streams` in
// min_streams..kMaxStreams, else kInvalidArgument naming `what` (the option or field) and the range.
inline void check_streams(int streams, int min_streams = 1, const std::string& what = "--streams") {
  if (streams < min_streams || streams > kMaxStreams)
    fail(ErrorCode::kInvalidArgument, what + " " + std::to_string(streams) + " is outside " +
                                          std::to_string(min_streams) + ".." + std::to_string(kMaxStreams));
}
#endif
inline constexpr int kMaxEvents = 64;  // events one call of a plan may record

// What a plan gets for one call. `coll` is exactly what a device program of the same op gets
// (in, out, scratch in symmetric memory; count; op), the rest are the plan's knobs.
struct PlanArgs {
  CollArgs coll;
  std::size_t chunk_bytes = 0;  // bytes per copy / per progress flag (0: the plan's default)
  int blocks = 0;               // blocks of the plan's kernels (0: the kernel's default)
  int sm_percent = 0;           // plans that split bytes between SMs and copy engines: the SMs'
                                // percent (0: the plan's default by size)
};

// One matrix product C = A x B, row-major: A is m x k (row stride lda elements), B is k x n
// (ldb), C is m x n (ldc). Any of them may lie in symmetric memory; C may also be a peer's
// address (h.peer): the GEMM then stores its result over NVLink (mm_rs.gemm_st_chunk_reduce).
struct GemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  int m = 0, n = 0, k = 0;
  std::size_t lda = 0, ldb = 0, ldc = 0;
  DType dtype = DType::kBF16;
  // When set: C = A x B + C_in, C_in m x n with row stride ldc in this rank's memory (it may be C
  // itself). The sum is taken in fp32 before C is rounded to dtype (cuBLASLt's beta = 1).
  const void* c_in = nullptr;
};

// A packed row-major product: C (m x n) = A (m x k) x B (k x n), leading dimensions k, n, n.
inline GemmArgs gemm_args(const void* a, const void* b, void* c, std::size_t m, std::size_t n, std::size_t k, DType t) {
  GemmArgs g;
  g.a = a, g.b = b, g.c = c;
  g.m = int(m), g.n = int(n), g.k = int(k);
  g.lda = k, g.ldb = n, g.ldc = n;
  g.dtype = t;
  return g;
}

// Host context concept: the verbs above. Checked by each backend's static_assert.
template <class H>
concept HostCtx = requires(H& h, const H& ch, float* fp, void* p, const void* cp, std::size_t n, int s, uint32_t u,
                           const CollArgs& ca, const GemmArgs& g) {
  { ch.rank() } -> std::convertible_to<int>;
  { ch.world() } -> std::convertible_to<int>;
  { ch.streams() } -> std::convertible_to<int>;
  { ch.peer(fp, s) } -> std::same_as<float*>;
  h.copy_engine(s, p, cp, n);
  h.write_flag(s, s, u, u);
  h.wait_flag(s, u, u);
  h.record(s, s);
  h.wait_event(s, s);
  h.gemm(s, g);
};

// The host verbs' contract, written once: every executor (the simulator's SimHost, the CUDA
// backend's CudaHost, the tests' interpreter) runs a plan through CheckedHost<its host>, which
// checks each verb's arguments and then forwards it; a plan that breaks the contract fails in one
// line naming rank, stream and verb, on every backend alike. The backends keep only what only they
// can know (the simulator: ldc == n; CUDA: alignment for cuBLASLt). One CheckedHost is one call
// (checked_call below runs a plan's call through it).
//   every verb   0 <= s < streams()
//   peer         0 <= r < world()
//   launch       blocks >= 1
//   write_flag   0 <= peer < world(), a plan flag (pad::plan_flag), value != 0
//   wait_flag    a plan flag, value != 0
//   record / wait_event   0 <= e < kMaxEvents; wait_event after a record of e in this call
//   gemm         m, n, k > 0, lda >= k, ldb >= n, ldc >= n, a, b, c not null
//   end_call     every side stream with work is joined into the main stream ("the end of a call"),
//                and no side stream has events only (record / wait_event and nothing else: forked
//                and joined with no work between; in a CUDA graph such a stream's capture
//                dependencies pile up call after call, so a graph of many calls grows edges as
//                the square of its calls: 2x H100, 100 captured calls of reduce_scatter ce at 64K
//                took 93 us each against 28.5 us with the idle stream left out,
//                experiments/results/h100x2/graph_edges_a5a9111)
template <class H>
class CheckedHost {
 public:
  explicit CheckedHost(H& h) : h_(h) {
    for (Mark& m : records_) m = Mark{};
  }
  int rank() const { return h_.rank(); }
  int world() const { return h_.world(); }
  int streams() const { return h_.streams(); }
  template <class T>
  T* peer(T* p, int r) const {
    if (r < 0 || r >= world()) bad(-1, "peer(rank " + std::to_string(r) + ")", "a rank of the world");
    return h_.peer(p, r);
  }
  template <class Program, class T>
  void launch(int s, const CollArgs& a, int blocks) {
    stream(s, "launch");
    if (blocks < 1) bad(s, "launch(blocks=" + std::to_string(blocks) + ")", "at least one block");
    h_.template launch<Program, T>(s, a, blocks);
    item(s, "launch");
  }
  void copy_engine(int s, void* dst, const void* src, std::size_t bytes) {
    stream(s, "copy_engine");
    if (bytes && (!dst || !src)) bad(s, "copy_engine", "addresses, not null");
    h_.copy_engine(s, dst, src, bytes);
    item(s, "copy_engine");
  }
  void write_flag(int s, int peer, uint32_t slot, uint32_t value) {
    stream(s, "write_flag");
    if (peer < 0 || peer >= world() || !pad::is_plan_flag(slot) || value == 0)
      bad(s,
          "write_flag(peer=" + std::to_string(peer) + ", slot=" + std::to_string(slot) +
              ", value=" + std::to_string(value) + ")",
          "a rank, a plan flag (pad::plan_flag) and a value != 0");
    h_.write_flag(s, peer, slot, value);
    item(s, "write_flag");
  }
  void wait_flag(int s, uint32_t slot, uint32_t value) {
    stream(s, "wait_flag");
    if (!pad::is_plan_flag(slot) || value == 0)
      bad(s, "wait_flag(slot=" + std::to_string(slot) + ", value=" + std::to_string(value) + ")",
          "a plan flag (pad::plan_flag) and a value != 0");
    h_.wait_flag(s, slot, value);
    item(s, "wait_flag");
  }
  void record(int s, int e) {
    stream(s, "record");
    event(s, e, "record");
    h_.record(s, e);
    item(s, "record");
    if (e >= 0 && e < kMaxEvents) records_[e] = Mark{s, items_[s]};  // (checked above; for the compiler)
  }
  void wait_event(int s, int e) {
    stream(s, "wait_event");
    event(s, e, "wait_event");
    const Mark rec = e >= 0 && e < kMaxEvents ? records_[e] : Mark{};
    if (rec.stream < 0)
      bad(s, "wait_event(event " + std::to_string(e) + ")", "a record of that event earlier in the call");
    h_.wait_event(s, e);
    item(s, "wait_event");
    joins_.push_back(Join{Mark{s, items_[s]}, rec});  // binds to the latest record (CUDA)
  }
  void gemm(int s, const GemmArgs& g) {
    stream(s, "gemm");
    if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.lda < std::size_t(g.k) || g.ldb < std::size_t(g.n) ||
        g.ldc < std::size_t(g.n) || !g.a || !g.b || !g.c)
      bad(s, "gemm(m=" + std::to_string(g.m) + ", n=" + std::to_string(g.n) + ", k=" + std::to_string(g.k) + ")",
          "positive sizes, lda >= k, ldb >= n, ldc >= n and operands");
    h_.gemm(s, g);
    item(s, "gemm");
  }

  // The end of the call (after the plan's `run` returned): every side stream that has work must be
  // joined into the main stream, else kInvalidArgument naming the rank, the stream and its first
  // item that nothing on the main stream waits for.
  void end_call() const {
    // done[s]: how many of stream s's first items the main stream's end waits for (a wait_event
    // waits for its record and everything before it on the recording stream).
    int done[kMaxStreams] = {};
    done[kMainStream] = items_[kMainStream];
    for (bool grew = true; grew;) {
      grew = false;
      for (const Join& j : joins_)
        if (j.wait.pos <= done[j.wait.stream] && j.record.pos > done[j.record.stream]) {
          done[j.record.stream] = j.record.pos;
          grew = true;
        }
    }
    for (int s = 1; s < streams() && s < kMaxStreams; ++s)
      if (done[s] < items_[std::size_t(s)])
        bad(s,
            "side stream not joined at the end of the call (its last " +
                std::to_string(items_[std::size_t(s)] - done[s]) + " of " + std::to_string(items_[std::size_t(s)]) +
                " items, up to a " + last_[std::size_t(s)] + ", are not waited for by stream " +
                std::to_string(kMainStream) + ")",
            "a record after its last item that stream " + std::to_string(kMainStream) + " waits for (wait_event)");
    for (int s = 1; s < streams() && s < kMaxStreams; ++s)
      if (items_[s] && !work_[s])
        bad(s,
            "side stream with events only (" + std::to_string(items_[s]) +
                " record / wait_event items and no work: in a CUDA graph its capture dependencies pile up "
                "call after call)",
            "work between its fork and its join, or no use at all (fork only the side streams the plan "
            "uses: side_streams)");
  }

 private:
  // A position on a stream: its first `pos` items (stream -1: none).
  struct Mark {
    int stream = -1, pos = 0;
  };
  struct Join {
    Mark wait, record;  // the wait_event (through it) and the record it binds to
  };
  void item(int s, const char* verb) {
    if (s < 0 || s >= kMaxStreams) return;  // (refused by stream(); for the compiler)
    ++items_[s];
    last_[s] = verb;
    const std::string_view v(verb);
    if (v != "record" && v != "wait_event") ++work_[s];
  }
  // Throws kInvalidArgument (host code: plans are enqueued from the host; nvcc's device pass also
  // reads this file, where fail() does not exist).
  void bad(int s, const std::string& what, const std::string& needs) const {
#if !defined(__CUDA_ARCH__)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank()) +
                                          (s >= 0 ? " stream " + std::to_string(s) : std::string()) + ": " + what +
                                          " needs " + needs);
#else
    (void)s, (void)what, (void)needs;
#endif
  }
  void stream(int s, const char* verb) const {
    if (s < 0 || s >= streams() || s >= kMaxStreams)
      bad(-1, std::string(verb) + " on stream " + std::to_string(s),
          "a stream of the plan's " + std::to_string(streams()));
  }
  void event(int s, int e, const char* verb) const {
    if (e < 0 || e >= kMaxEvents)
      bad(s, std::string(verb) + "(event " + std::to_string(e) + ")",
          "an event in 0.." + std::to_string(kMaxEvents - 1));
  }
  H& h_;
  int items_[kMaxStreams] = {};  // items enqueued per stream in this call
  int work_[kMaxStreams] = {};   // of them, items other than record / wait_event
  const char* last_[kMaxStreams] = {};
  Mark records_[kMaxEvents];  // the latest record of each event
  std::vector<Join> joins_;
};

// One call of a plan through the contract: `enqueue(checked)` runs the plan's `run` on a
// CheckedHost over `h`, then the end of the call is checked (CheckedHost::end_call).
template <class H, class F>
void checked_call(H& h, F&& enqueue) {
  CheckedHost<H> checked(h);
  enqueue(checked);
  checked.end_call();
}

// Chunking shared by the copy-engine plans: `bytes` of one rank's data cut into chunks of at
// most `chunk` bytes, whole 16-byte vectors, at most pad::kPlanChunks chunks (the last may be
// shorter; an empty rank's data is one empty chunk that still carries its flag).
struct Chunks {
  std::size_t bytes = 0, chunk = 0;
  int count = 1;
  SYMM_HD Chunks(std::size_t total, std::size_t want) : bytes(total) {
    std::size_t c = want ? want : total;
    c = (c + kVecBytes - 1) / kVecBytes * kVecBytes;
    if (c == 0) c = kVecBytes;
    std::size_t k = (total + c - 1) / c;
    if (k > std::size_t(pad::kPlanChunks)) {
      k = std::size_t(pad::kPlanChunks);
      c = ((total + k - 1) / k + kVecBytes - 1) / kVecBytes * kVecBytes;
      k = (total + c - 1) / c;
    }
    chunk = c;
    count = k ? int(k) : 1;
  }
  SYMM_HD std::size_t begin(int i) const {
    const std::size_t b = std::size_t(i) * chunk;
    return b < bytes ? b : bytes;
  }
  SYMM_HD std::size_t size(int i) const {
    const std::size_t e = begin(i) + chunk;
    return (e < bytes ? e : bytes) - begin(i);
  }
};

// Deliberate faults a test may plant in a plan: every plan (and the device program a fused plan
// launches) takes one as a template parameter of the real plan, kNone by default, so a mutant
// cannot drift from what it mutates. Each must be caught, and for its own reason (the tests
// assert the error code and what the message names):
//   kFlagOnOtherStream  a data flag written on a stream not ordered after its copy: a race (or
//                       wrong data)
//   kNoFlag             one data flag never written: a deadlock naming rank, stream and slot
//   kNoWait             a consumer reads (GEMM, reduce, tile) without the wait that orders it after
//                       the producer (a data flag, the all-gather's event, a tile's acquire): a
//                       race naming the read, or wrong data
//   kNoJoin             a side stream never joined back into the main stream: refused at the end
//                       of the call (CheckedHost::end_call) naming rank and stream
//   kNoEntry            no entry handshake (plan_entry): a second call's pushes may land in a
//                       buffer the first call still reads on a slower peer (a race, or wrong data)
enum class PlanFault : int { kNone, kFlagOnOtherStream, kNoFlag, kNoWait, kNoJoin, kNoEntry };

// The entry handshake every plan starts with, on the main stream: tell every peer that this
// rank's buffers of this call are free (all earlier work on the caller's stream is done: the
// previous call's readers and writers of them have finished), then wait for every peer's word.
// After it, writing into a peer's buffers and writing the peer's data flags are safe.
// kNoEntry (tests only) leaves it out.
template <PlanFault kFault = PlanFault::kNone, class Host>
void plan_entry(Host& h) {
  if constexpr (kFault == PlanFault::kNoEntry) return;
  const int me = h.rank(), n = h.world();
  for (int i = 1; i < n; ++i) h.write_flag(kMainStream, (me + i) % n, pad::plan_flag(pad::kPlanReady, 0, me), 1);
  for (int i = 1; i < n; ++i) h.wait_flag(kMainStream, pad::plan_flag(pad::kPlanReady, 0, (me + i) % n), 1);
}

// The side stream that carries piece j (0-based) of a plan's copies: round robin over the side
// streams 1 .. streams()-1, or the main stream if the plan has no side stream.
template <class Host>
int side_stream(const Host& h, int j) {
  const int side = h.streams() - 1;
  return side > 0 ? 1 + j % side : kMainStream;
}

// How many side streams (1 .. that many) a plan that wants `want` of them gets: the plan forks and
// joins exactly those. A side stream forked and joined with no work between is refused
// (CheckedHost::end_call): in a CUDA graph its capture dependencies pile up call after call.
template <class Host>
int side_streams(const Host& h, int want) {
  return std::max(0, std::min(h.streams() - 1, want));
}

// The side streams 1 .. used start after the main stream's items so far (event 0, recorded here).
template <class Host>
void fork_side_streams(Host& h, int used) {
  h.record(kMainStream, 0);
  for (int s = 1; s <= used; ++s) h.wait_event(s, 0);
}

// The end of a plan's call: each of side streams 1 .. used records event first_event + s, and the
// main stream waits for each (kNoJoin, tests only: it does not).
template <PlanFault kFault = PlanFault::kNone, class Host>
void join_side_streams(Host& h, int first_event, int used) {
  for (int s = 1; s <= used; ++s) h.record(s, first_event + s);
  if constexpr (kFault != PlanFault::kNoJoin)
    for (int s = 1; s <= used; ++s) h.wait_event(kMainStream, first_event + s);
}

// The copy-engine push both collective plans share, after plan_entry: the side streams start
// after event 0 (recorded here on the main stream); for every chunk k and every peer q in
// rank-swizzled order (me+1, me+2, ...: at each step every rank sends to a different peer, so
// every link is busy), copy_engine(dst(q, k), src(q, k), size of chunk k) and then, on the same
// stream (it publishes the copy), the data flag (k, me) into q's pad. A peer's chunks all go on
// one side stream: on a GPU, a stream's flag write queued behind the copy another stream had
// started to the same peer, so with one peer's chunks alternating between two streams every flag
// landed a chunk late (2x H100, `bench --trace`: experiments/results/h100x2/trace_d75f863; the
// reduce-scatter that reduces chunk by chunk ran 12-18 % slower so). Peers:
//   PeerStreams::kOne: every peer's copies on the first side stream, one copy at a time. With
//     several peers, copies to different peers on concurrent streams ran slower on 4x H100
//     (experiments/results/h100x4/streams_874b7fc): all_gather ce 256M eager 791 us on two side
//     streams against 575 on one (graph: 570 / 573), ag_mm ce_bulk 8B M 16384 508 / 585 us
//     (graph / eager) against 441 / 454.
//   PeerStreams::kRoundRobin: peers round robin over the side streams (the reduce-scatter, which
//     measured faster so in a graph there: 256M 1058-1076 us against 1152-1159).
// `dst` / `src` give the chunk's addresses: dst a peer's (h.peer), src local. kFault plants the
// faults of PlanFault for the tests.
enum class PeerStreams { kOne, kRoundRobin };
// The side streams push_chunks uses (1 .. that many; none: every copy on the main stream).
template <class Host>
int push_streams(const Host& h, PeerStreams peers) {
  return side_streams(h, peers == PeerStreams::kOne ? 1 : h.world() - 1);
}
template <PlanFault kFault, class Host, class Dst, class Src>
void push_chunks(Host& h, const Chunks& ch, Dst dst, Src src, PeerStreams peers) {
  const int me = h.rank(), n = h.world();
  fork_side_streams(h, push_streams(h, peers));
  for (int k = 0; k < ch.count; ++k)
    for (int i = 1; i < n; ++i) {
      const int q = (me + i) % n, s = side_stream(h, peers == PeerStreams::kOne ? 0 : i - 1);
      if (ch.size(k)) h.copy_engine(s, dst(q, k), src(q, k), ch.size(k));
      if constexpr (kFault == PlanFault::kNoFlag)
        if (k == 0 && i == 1) continue;
      // kFlagOnOtherStream: the flag on the main stream, not ordered after the copy.
      const int fs = kFault == PlanFault::kFlagOnOtherStream ? kMainStream : s;
      h.write_flag(fs, q, pad::plan_flag(pad::kPlanData, k, me), 1);
    }
}

}  // namespace symm
