// mm_rs.gemm_ce_ring_reduce ("ce"): matmul + reduce-scatter as a host plan. The main stream
// multiplies this rank's A (M x K/world) by its B in row chunks, the rows each owner keeps
// grouped, in rank-rotated order; copy engines push every finished chunk into its owner's
// scratch while the next chunk is multiplied; each owner reduces in ring order, chunk by chunk.
//
//   1. entry handshake (main stream): every peer's scratch is free (plan_entry)
//   2. for every peer q in rank-rotated order (me+1, me+2, ...: at every step each rank works
//      for a different owner, so every link is busy) and every chunk k of q's rows:
//        main stream: partial[q's rows, chunk k] = a[q's rows, chunk k] @ B; record an event
//        the copy stream (mm_rs_ce_push.h: the first side stream), after that event:
//          copy_engine(peer(scratch, q)[slot me, chunk k], partial[q's rows, chunk k])
//          write_flag(q, data flag (k, me))        it publishes the copy
//   3. my own rows last (the peers' chunks land meanwhile), chunk by chunk: main stream:
//      partial[my rows, chunk k] = a[my rows, chunk k] @ B; record an event
//   4. side stream 1, for every chunk k, after step 3's event of chunk k: wait for data flag
//      (k, q) of every peer q (me-1 first), then local_reduce_ring over chunk k of my rows:
//      c = partial[my rows] (+) slot[me+1] (+) ... (+) slot[me-1] (my own data first, then the
//      ring: the order a ring reduce-scatter adds in). Chunk k's reduce overlaps the GEMM of my
//      chunk k+1; only the last chunk's reduce is left after the last GEMM
//   5. the side streams join the main stream (they read `partial` until then)
//
// Scratch: world slots of M/world x N (slot me unused). Bytes over NVLink per rank:
// (world-1)/world * M x N elements (reduce_scatter's); FLOPs: 2 M N K / world.
#pragma once

#include <algorithm>

#include "core/algos/fused_gemm.h"
#include "core/algos/local_reduce_ring.h"
#include "core/algos/mm_rs_ce_push.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/plan.h"

namespace symm {

// kFault (tests only, core/plan.h's PlanFault): kNoWait, the owner reduces a chunk without
// waiting for the peers' flags (the simulator's data check and race check must catch it);
// kNoJoin; kNoEntry.
template <PlanFault kFault = PlanFault::kNone>
struct MmRsGemmCeRingReduceT {
  static constexpr Descriptor kDescriptor{
      .kind = EntryKind::kFusedPlan,
      .name = "gemm_ce_ring_reduce",
      .alias = "ce",
      .summary = "GEMM per owner's rows (rotated, own last), copy engine to the owner, ring-order reduce per chunk",
      .fused_op = FusedOp::kMmRs};
  struct Config {
    // Rows per GEMM, copy and progress flag. 8192: on 2x H200, 70B M 16384 (8192 rows per owner),
    // one chunk per owner ran 751 us in a graph and 803 eager where 2048-row chunks ran 837 and
    // 837 (experiments/results/h200x2/gaps/run6_mmrs_chunks_h200x2.log): whole-slot GEMMs beat
    // the overlap finer chunks buy. Below 8192 rows per owner nothing changes.
    static constexpr std::size_t kChunkRows = 8192;
  };

  template <class T, class Host>
  static void run(Host& h, const FusedArgs& f) {
    const int me = h.rank(), n = h.world();
    const MmRsSlots l = MmRsSlots::of<T>(f, n, Config::kChunkRows);
    const std::size_t rows = l.rows, row_bytes = l.row_bytes, slot_bytes = l.slot_bytes;
    const Chunks& ch = l.ch;
    const T* a = static_cast<const T*>(f.a);
    char* partial = static_cast<char*>(f.partial);
    char* scratch = static_cast<char*>(f.work);
    auto gemm = [&](std::size_t row0, std::size_t m) {
      main_gemm<T>(h, a + row0 * l.kl, f.b, partial + row0 * row_bytes, m, f.n, l.kl);
    };

    int ev = mm_rs_push_peers<T, kFault>(h, f, l);  // steps 1-2
    const int reducer = h.streams() > 1 ? 1 : kMainStream;
    for (int k = 0; k < ch.count; ++k, ++ev) {
      const std::size_t begin = std::size_t(me) * slot_bytes + ch.begin(k);
      if (ch.size(k)) gemm(begin / row_bytes, ch.size(k) / row_bytes);  // step 3
      h.record(kMainStream, ev);
      h.wait_event(reducer, ev);  // step 4
      for (int i = 1; i < n && kFault != PlanFault::kNoWait; ++i)
        h.wait_flag(reducer, pad::plan_flag(pad::kPlanData, k, (me + n - i) % n), 1);
      if (!ch.size(k)) continue;
      CollArgs r;
      r.in = partial + begin;
      r.scratch = scratch + ch.begin(k);
      r.out = static_cast<char*>(f.c) + ch.begin(k);
      r.count = ch.size(k) / sizeof(T);
      r.stride = rows * f.n;
      r.op = ReduceOp::kSum;
      // One chunk per owner: the reduce runs alone after both GEMMs and may take the lone cap;
      // with more, a chunk's reduce overlaps the next chunk's GEMM and keeps the default.
      const int cap = ch.count == 1 ? LocalReduceRing::kAloneBlockCap : LocalReduceRing::Config::kDefaultBlockCap;
      h.template launch<LocalReduceRing, T>(reducer, r,
                                            f.blocks ? f.blocks : LocalReduceRing::default_blocks<T>(r.count, cap));
    }
    join_side_streams<kFault>(h, ev, side_streams(h, 1));  // step 5: the copies' (and reducer's) stream
  }
};
using MmRsGemmCeRingReduce = MmRsGemmCeRingReduceT<>;

}  // namespace symm
