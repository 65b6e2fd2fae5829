// mm_rs.gemm_st_chunk_reduce ("st"): matmul + reduce-scatter where the matmul itself stores each
// row tile of a peer's rows into that peer's symmetric scratch (SM stores over NVLink from the
// GEMM's epilogue, no staging copy), signals it per tile, and the owner reduces tile by tile as
// they arrive, on a side stream, while its own matmul goes on.
//
//   1. entry handshake (main stream): every peer's scratch is free (plan_entry)
//   2. main stream: partial[my rows] = a[my rows] @ B (my own rows first: the reduce of every
//      tile needs them); record event 1
//   3. main stream, for every peer q in rank-rotated order (me+1, me+2, ...) and every tile k of
//      q's rows: peer(scratch, q)[slot me, tile k] = a[q's rows, tile k] @ B (the GEMM writes
//      the peer's memory), then write_flag(q, data flag (k, me)) (it publishes the GEMM's stores)
//   4. side stream 1, after event 1: for every tile k: wait for data flag (k, q) of every peer
//      q (rank-rotated: me-1 first, whose tiles for me come first), then local_reduce_ring over
//      tile k: c[tile k] = partial[my rows, tile k] (+) slot[me+1] (+) ... (+) slot[me-1]
//   5. the side stream joins the main stream
//
// The tiles are row tiles (full N): the finest grain a library GEMM call can signal at. Peers
// reach my tiles at different times (rank q works for me at its step (me-q) mod world), so the
// reduces of the first tiles overlap the remaining GEMMs; the last tile's reduce is the tail.
// Scratch: world slots of M/world x N (slot me unused). Bytes over NVLink per rank:
// (world-1)/world * M x N elements; FLOPs: 2 M N K / world.
#pragma once

#include "core/algos/fused_gemm.h"
#include "core/algos/local_reduce_ring.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/plan.h"

namespace symm {

// kFault (tests only, core/plan.h's PlanFault): kNoWait, the owner reduces a tile without waiting
// for the peers' flags, so it reads slots their GEMMs may not have stored yet (the simulator's race
// check and data check must catch it); kNoJoin, the reducing side stream is never joined; kNoEntry.
template <PlanFault kFault = PlanFault::kNone>
struct MmRsGemmStChunkReduceT {
  static constexpr Descriptor kDescriptor{
      .kind = EntryKind::kFusedPlan,
      .name = "gemm_st_chunk_reduce",
      .alias = "st",
      .summary = "GEMM row tiles stored by the GEMM into the owner's scratch, flag per tile, owner reduces per tile",
      .fused_op = FusedOp::kMmRs};
  struct Config {
    static constexpr std::size_t kChunkRows = 1024;  // rows per GEMM tile and progress flag
  };

  template <class T, class Host>
  static void run(Host& h, const FusedArgs& f) {
    const int me = h.rank(), n = h.world();
    const std::size_t rows = f.m / std::size_t(n), kl = f.k / std::size_t(n), row_bytes = f.n * sizeof(T);
    const std::size_t slot_bytes = rows * row_bytes;
    const std::size_t chunk_rows = chunk_rows_for(rows, f.chunk_rows, Config::kChunkRows, pad::kPlanChunks);
    const Chunks ch(slot_bytes, chunk_rows * row_bytes);
    const T* a = static_cast<const T*>(f.a);
    char* partial = static_cast<char*>(f.partial);
    char* scratch = static_cast<char*>(f.work);
    const int reducer = h.streams() > 1 ? 1 : kMainStream;
    auto gemm = [&](std::size_t row0, std::size_t m, void* c) { main_gemm<T>(h, a + row0 * kl, f.b, c, m, f.n, kl); };

    plan_entry<kFault>(h);                                                       // step 1
    gemm(std::size_t(me) * rows, rows, partial + std::size_t(me) * slot_bytes);  // step 2
    h.record(kMainStream, 1);
    for (int i = 1; i < n; ++i) {  // step 3
      const int q = (me + i) % n;
      for (int k = 0; k < ch.count; ++k) {
        if (ch.size(k))
          gemm(std::size_t(q) * rows + ch.begin(k) / row_bytes, ch.size(k) / row_bytes,
               h.peer(scratch, q) + std::size_t(me) * slot_bytes + ch.begin(k));
        h.write_flag(kMainStream, q, pad::plan_flag(pad::kPlanData, k, me), 1);
      }
    }
    h.wait_event(reducer, 1);  // step 4
    for (int k = 0; k < ch.count; ++k) {
      for (int i = 1; i < n && kFault != PlanFault::kNoWait; ++i)
        h.wait_flag(reducer, pad::plan_flag(pad::kPlanData, k, (me + n - i) % n), 1);
      if (!ch.size(k)) continue;
      CollArgs r;
      r.in = partial + std::size_t(me) * slot_bytes + ch.begin(k);
      r.scratch = scratch + ch.begin(k);
      r.out = static_cast<char*>(f.c) + ch.begin(k);
      r.count = ch.size(k) / sizeof(T);
      r.stride = rows * f.n;
      r.op = ReduceOp::kSum;
      h.template launch<LocalReduceRing, T>(reducer, r,
                                            f.blocks ? f.blocks : LocalReduceRing::default_blocks<T>(r.count));
    }
    if (reducer != kMainStream) {  // step 5
      h.record(reducer, 2);
      if constexpr (kFault != PlanFault::kNoJoin) h.wait_event(kMainStream, 2);
    }
  }
};
using MmRsGemmStChunkReduce = MmRsGemmStChunkReduceT<>;

}  // namespace symm
