// The peers' side the copy-engine mm_rs plans share (mm_rs.gemm_ce_ring_reduce, mm_rs.gemm_ce_acc):
// the entry handshake, then for every peer q in rank-rotated order (me+1, me+2, ...: at every
// step each rank works for a different owner, so every link is busy) and every chunk k of q's rows:
//
//   main stream: partial[q's rows, chunk k] = a[q's rows, chunk k] @ B; record an event
//   the copy stream (the first side stream), after that event:
//     copy_engine(peer(scratch, q)[slot me, chunk k], partial[q's rows, chunk k])
//     write_flag(q, data flag (k, me))        it publishes the copy
//
// Every copy on one stream, one at a time (core/plan.h push_chunks says why: copies to several
// peers on concurrent streams ran slower on 4x H100; mm_rs ce 70B M 16384 in a graph 493 us on one
// side stream against 508-514 on two, experiments/results/h100x4/streams_874b7fc).
// Scratch: world slots of M/world x N (slot q: what rank q sent).
#pragma once

#include <algorithm>

#include "core/algos/fused_gemm.h"
#include "core/fused.h"
#include "core/plan.h"

namespace symm {

// One rank's view of an mm_rs call: rows per owner, K per rank, bytes per row and per owner's
// slot, and the chunking of a slot (chunks of about chunk_rows rows). The plans record one event
// per chunk of every rank's rows, from 1, then one per side stream: the chunk count stays within
// kMaxEvents (and within the pad's kPlanChunks flags).
struct MmRsSlots {
  std::size_t rows, kl, row_bytes, slot_bytes;
  Chunks ch;
  template <class T>
  static MmRsSlots of(const FusedArgs& f, int world, std::size_t default_chunk_rows) {
    const int max_chunks = std::min(pad::kPlanChunks, (kMaxEvents - 1 - kMaxStreams) / world);
    const std::size_t rows = f.m / std::size_t(world), kl = f.k / std::size_t(world), row_bytes = f.n * sizeof(T);
    const std::size_t chunk_rows = chunk_rows_for(rows, f.chunk_rows, default_chunk_rows, max_chunks);
    return MmRsSlots{rows, kl, row_bytes, rows * row_bytes, Chunks(rows * row_bytes, chunk_rows * row_bytes)};
  }
};

// The stream of every copy and data flag of the copy-engine mm_rs plans.
template <class Host>
int mm_rs_copy_stream(const Host& h) {
  return side_stream(h, 0);
}

// Enqueues the handshake and the peers' chunks; the events it records are 1 .. (world-1) x chunks.
// Returns the next free event id. kFault: kNoEntry leaves the handshake out (tests only).
template <class T, PlanFault kFault = PlanFault::kNone, class Host>
int mm_rs_push_peers(Host& h, const FusedArgs& f, const MmRsSlots& l) {
  const int me = h.rank(), n = h.world();
  const T* a = static_cast<const T*>(f.a);
  char* partial = static_cast<char*>(f.partial);
  char* scratch = static_cast<char*>(f.work);
  plan_entry<kFault>(h);
  int ev = 1;
  for (int i = 1; i < n; ++i) {
    const int q = (me + i) % n;
    for (int k = 0; k < l.ch.count; ++k, ++ev) {
      const std::size_t begin = std::size_t(q) * l.slot_bytes + l.ch.begin(k);
      if (l.ch.size(k))
        main_gemm<T>(h, a + begin / l.row_bytes * l.kl, f.b, partial + begin, l.ch.size(k) / l.row_bytes, f.n, l.kl);
      h.record(kMainStream, ev);
      const int s = mm_rs_copy_stream(h);
      h.wait_event(s, ev);
      if (l.ch.size(k))
        h.copy_engine(s, h.peer(scratch, q) + std::size_t(me) * l.slot_bytes + l.ch.begin(k), partial + begin,
                      l.ch.size(k));
      h.write_flag(s, q, pad::plan_flag(pad::kPlanData, k, me), 1);
    }
  }
  return ev;
}

}  // namespace symm
