// all_gather.ce_st ("ce"): a host plan. Copy engines push each rank's input into every peer's
// output, with one progress flag per chunk, so no SM moves a byte.
//
//   1. entry handshake (main stream): every peer's `out` is free (plan_entry)
//   2. the side streams start after it (event 0)
//   3. for every chunk k and every peer q in rank-swizzled order (me+1, me+2, ...), on the first
//      side stream (core/plan.h push_chunks, PeerStreams::kOne):
//        copy_engine(peer(out, q)[me * count + chunk k], in[chunk k])
//        write_flag(q, data flag (k, me))       same stream, after the copy: it publishes it
//      and my own slot: copy_local(out[me * count ...], in) on the main stream (SMs, local HBM)
//   4. main stream: wait for data flag (k, q) of every peer q and chunk k: `out` is complete.
//      A consumer that wants chunk k early (all-gather + matmul) waits for those flags itself
//      instead: all_gather_ce_push() is steps 1-3
//   5. the side streams join the main stream (our `in` is read by our own copies until then)
//
// Swizzling makes every rank send to a different peer at each step, so all links are busy;
// chunking lets a consumer start on the first chunk. Bytes over NVLink per rank: (world-1)/world * bytes.
#pragma once

#include "core/algos/copy_local.h"
#include "core/descriptor.h"
#include "core/plan.h"

namespace symm {

template <PlanFault kFault = PlanFault::kNone>
struct AllGatherCeT {
  static constexpr Descriptor kDescriptor{
      EntryKind::kHostPlan, Op::kAllGather, "ce_st", "ce",
      "host plan: copy engines push the input into every peer's output, a flag per chunk; SMs copy my own slot"};
  struct Config {
    // Blocks: those of the one kernel, copy_local's copy of my own slot (the peers' bytes move by
    // copy engines only).
    static constexpr int kBlockLimit = CopyLocal::Config::kBlockLimit;
    static constexpr int kDefaultBlockCap = CopyLocal::Config::kDefaultBlockCap;
    static constexpr std::size_t kBytesPerBlock = CopyLocal::Config::kBytesPerBlock;
    // Per copy and per progress flag. Each copy costs ~5 us of its own in a CUDA graph (2x H200:
    // 256 MiB took 708 us in 2 MiB chunks, 459 in 8 MiB, 393 in 32 MiB; results/h200x2/runs/), and
    // a shard copied whole runs nearer the link's rate (2x H100, own slot by SMs: 401 us in 32 MiB,
    // 377 in 128 MiB, one copy per peer; results/h100x2/floors_eadb0df/): up to 128 MiB, one copy.
    static constexpr std::size_t kChunkBytes = 128 << 20;
  };

  // Steps 1-3 and the side streams' end events (events 1 .. streams()-1); returns the chunking.
  // `own_copy` false leaves my own slot of `out` unwritten (a consumer that reads my rows from
  // `in` directly, as ag_mm does, saves that local copy on the main stream).
  template <class T, class Host>
  static Chunks push(Host& h, const PlanArgs& a, bool own_copy = true) {
    const int me = h.rank();
    const CollArgs& c = a.coll;
    const std::size_t bytes = c.count * sizeof(T);
    const Chunks ch(bytes, a.chunk_bytes ? a.chunk_bytes : Config::kChunkBytes);
    const char* in = static_cast<const char*>(c.in);
    char* out = static_cast<char*>(c.out);
    const std::size_t my_slot = std::size_t(me) * bytes;

    plan_entry<kFault>(h);
    push_chunks<kFault>(
        h, ch, [&](int q, int k) { return h.peer(out, q) + my_slot + ch.begin(k); },
        [&](int, int k) { return in + ch.begin(k); }, PeerStreams::kOne);
    if (bytes && own_copy) {  // my own slot by SMs, beside the copy engines (copy_local.h says why)
      CollArgs k;
      k.in = in;
      k.out = out + my_slot;
      k.count = c.count;
      h.template launch<CopyLocal, T>(kMainStream, k, a.blocks ? a.blocks : CopyLocal::default_blocks<T>(k.count));
    }
    for (int s = 1; s <= push_streams(h, PeerStreams::kOne); ++s) h.record(s, s);
    return ch;
  }
  // The consumer's side of chunk k: the main... or any stream waits for every peer's chunk k.
  template <class Host>
  static void wait_chunk(Host& h, int stream, int k) {
    const int me = h.rank(), n = h.world();
    for (int i = 1; i < n; ++i) h.wait_flag(stream, pad::plan_flag(pad::kPlanData, k, (me + n - i) % n), 1);
  }
  // Step 5 (kNoJoin, tests only: left out).
  template <class Host>
  static void join(Host& h) {
    if constexpr (kFault == PlanFault::kNoJoin) return;
    for (int s = 1; s <= push_streams(h, PeerStreams::kOne); ++s) h.wait_event(kMainStream, s);
  }

  template <class T, class Host>
  static void run(Host& h, const PlanArgs& a) {
    const Chunks ch = push<T>(h, a);
    for (int k = 0; k < ch.count; ++k) wait_chunk(h, kMainStream, k);
    join(h);
  }
};
using AllGatherCeSt = AllGatherCeT<>;

}  // namespace symm
