// reduce_scatter.ce_st_ring_reduce ("ce"): a host plan. Copy engines scatter every rank's
// slices into their owners' scratch; then one local kernel per rank reduces in ring order.
//
//   1. entry handshake (main stream): every peer's scratch is free (plan_entry)
//   2. the side streams start after it (event 0)
//   3. for every chunk k and every peer q in rank-swizzled order (me+1, me+2, ...: at every step
//      each rank sends to a different peer, so every link is busy), round robin over the side
//      streams:
//        copy_engine(peer(scratch, q)[slot me, chunk k], in[slice q, chunk k])
//        write_flag(q, data flag (k, me))       same stream, after the copy: it publishes it
//   4. main stream: wait for every peer's data flags, then launch local_reduce_ring over my
//      slice: out = in[slice me] (+) slot[me+1] (+) ... (+) slot[me-1] (my own data first, then
//      the ring), the only SM work of the plan
//   5. the side streams join the main stream
//
// reduce_scatter.ce_st_chunk_reduce ("ce_overlap") overlaps 3 and 4: the main stream waits for
// chunk k of every peer and reduces chunk k at once, while the copy engines move chunk k+1.
// Scratch: world slots of one rank's output (slot me unused). Bytes over NVLink per rank:
// (world-1)/world * bytes (bytes = the whole input), as the SM programs.
#pragma once

#include "core/algos/local_reduce_ring.h"
#include "core/descriptor.h"
#include "core/plan.h"

namespace symm {

template <bool kOverlap, PlanFault kFault = PlanFault::kNone>
struct ReduceScatterCeT {
  static constexpr Descriptor kDescriptor =
      kOverlap ? Descriptor{EntryKind::kHostPlan, Op::kReduceScatter, "ce_st_chunk_reduce", "ce_overlap",
                            "host plan: as ce, the reduce of chunk k starts when chunk k of every peer has landed"}
               : Descriptor{EntryKind::kHostPlan, Op::kReduceScatter, "ce_st_ring_reduce", "ce",
                            "host plan: copy engines scatter slices into owners' scratch; one kernel reduces in "
                            "ring order"};
  // Blocks: the reduce kernel's (local_reduce_ring); the copies take no SM.
  struct Config {
    static constexpr int kBlockLimit = LocalReduceRing::Config::kBlockLimit;
    static constexpr int kDefaultBlockCap =
        kOverlap ? LocalReduceRing::Config::kDefaultBlockCap : LocalReduceRing::kAloneBlockCap;
    static constexpr std::size_t kBytesPerBlock = LocalReduceRing::Config::kBytesPerBlock;
    static constexpr std::size_t kChunkBytes = kOverlap ? (4 << 20) : (8 << 20);
  };

  template <class T, class Host>
  static void run(Host& h, const PlanArgs& a) {
    const int me = h.rank(), n = h.world();
    const CollArgs& c = a.coll;
    const std::size_t bytes = c.count * sizeof(T);  // one rank's slice = the output
    const Chunks ch(bytes, a.chunk_bytes ? a.chunk_bytes : Config::kChunkBytes);
    const char* in = static_cast<const char*>(c.in);
    char* scratch = static_cast<char*>(c.scratch);

    plan_entry<kFault>(h);
    push_chunks<kFault>(
        h, ch, [&](int q, int k) { return h.peer(scratch, q) + std::size_t(me) * bytes + ch.begin(k); },
        [&](int q, int k) { return in + std::size_t(q) * bytes + ch.begin(k); }, PeerStreams::kRoundRobin);

    auto reduce = [&](std::size_t begin, std::size_t size) {
      if (!size) return;
      CollArgs r;
      r.in = in + std::size_t(me) * bytes + begin;
      r.scratch = scratch + begin;
      r.out = static_cast<char*>(c.out) + begin;
      r.count = size / sizeof(T);
      r.stride = c.count;
      r.op = c.op;
      const int blocks = a.blocks ? a.blocks : LocalReduceRing::default_blocks<T>(r.count, Config::kDefaultBlockCap);
      h.template launch<LocalReduceRing, T>(kMainStream, r, blocks);
    };
    auto wait_chunk = [&](int k) {
      for (int i = 1; i < n; ++i) h.wait_flag(kMainStream, pad::plan_flag(pad::kPlanData, k, (me + n - i) % n), 1);
    };
    if constexpr (kOverlap) {
      for (int k = 0; k < ch.count; ++k) {
        wait_chunk(k);
        reduce(ch.begin(k), ch.size(k));
      }
    } else {
      for (int k = 0; k < ch.count; ++k) wait_chunk(k);
      reduce(0, bytes);
    }
    join_side_streams<kFault>(h, 0, push_streams(h, PeerStreams::kRoundRobin));
  }
};
using ReduceScatterCeStRingReduce = ReduceScatterCeT<false>;

}  // namespace symm
