// ag_mm.ce_chunk_gemm ("ce"): all-gather + matmul as a host plan. Copy engines gather A's
// shards with one progress flag per chunk of rows (all_gather.ce_st's push); the main stream
// is the compute stream and multiplies each chunk as soon as its flag says it landed.
//
//   1. entry handshake (main stream): every peer's gathered-A buffer is free (plan_entry)
//   2. side streams, after it: for every chunk k of my shard and every peer q in rank-swizzled
//      order (me+1, me+2, ...), copy_engine(peer(gathered, q)[my rows, chunk k], a[chunk k]),
//      then write_flag(q, data flag (k, me)) (AllGatherCeSt::push without my own slot: my rows
//      are read from my input directly)
//   3. main stream: C[my rows] = a @ B (the local shard first: no wait, it hides the first
//      transfers)
//   4. main stream, for every chunk k, for every peer q in rank-rotated order (me-1, me-2, ...:
//      the order in which the swizzled pushes reach me): wait_flag(data flag (k, q)), then
//      C[q's rows, chunk k] = gathered[q's rows, chunk k] @ B
//   5. the side streams join the main stream
//
// ag_mm.ce_bulk_gemm ("ce_bulk", ag_mm_ce_bulk_gemm.h) replaces 4 by one GEMM per peer over its
// whole shard, after all of that peer's chunk flags: fewer, larger GEMMs (no wave-quantization
// loss on small chunks), at the price of waiting for a peer's last chunk. Which wins depends on
// how much of the transfer the local GEMM hides (world 2: most of it).
// Bytes over NVLink per rank: (world-1)/world * M x K elements (all_gather's); FLOPs: M N K x2.
#pragma once

#include <algorithm>

#include "core/algos/all_gather_ce_st.h"
#include "core/algos/fused_gemm.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/plan.h"

namespace symm {

// kFault (tests only, core/plan.h's PlanFault): kNoWait, a peer chunk's GEMM starts without
// waiting for its progress flag (the simulator's data check and race check must catch it);
// kNoJoin; kNoEntry.
template <bool kBulk, PlanFault kFault = PlanFault::kNone>
struct AgMmCeT {
  static constexpr bool kNoWait = kFault == PlanFault::kNoWait;
  // all_gather.ce_st's push and join, with the faults that live there.
  using Push = AllGatherCeT<kFault == PlanFault::kNoEntry || kFault == PlanFault::kNoJoin ? kFault : PlanFault::kNone>;
  static constexpr Descriptor kDescriptor =
      kBulk
          ? Descriptor{.kind = EntryKind::kFusedPlan,
                       .name = "ce_bulk_gemm",
                       .alias = "ce_bulk",
                       .summary = "copy-engine all-gather, one GEMM per peer's whole shard once all its chunks landed",
                       .fused_op = FusedOp::kAgMm}
          : Descriptor{
                .kind = EntryKind::kFusedPlan,
                .name = "ce_chunk_gemm",
                .alias = "ce",
                .summary = "copy-engine all-gather, one GEMM per landed chunk (local shard first, then peers rotated)",
                .fused_op = FusedOp::kAgMm};
  struct Config {
    // Rows per progress flag (and, for ce, per GEMM). Every chunk pays a copy launch and a flag on
    // its side stream, and a GEMM of a thousand rows loses a wave's tail, so chunks are large:
    //   ce_bulk: a whole shard (one copy, one flag, one GEMM per peer);
    //   ce: half a shard, at least kMinChunkRows: the GEMM of a peer's first half starts while the
    //       second half is on the wire, which pays where a shard's copy is long against the GEMMs.
    // Measured (chunk sweep, median us, graph, 8B / 70B at M 16384): 2x H100
    // (experiments/results/h100x2/chunks_c84b44c) one chunk 362 / 1423-1443, half 372 / 1464-1472,
    // 1024 rows (the old default) 428-433 / 1498-1501; 4x H100 (experiments/results/h100x4/
    // chunks_c105723) half 482 / 1588-1591, one chunk 506-510 / 1575-1588, 1024 rows 589-592 /
    // 1635-1644. The simulator predicts the same order at 4 and 8 GPUs.
    static constexpr std::size_t kMinChunkRows = 2048;
    static std::size_t chunk_rows(std::size_t rows) { return kBulk ? rows : std::max(kMinChunkRows, (rows + 1) / 2); }
  };

  template <class T, class Host>
  static void run(Host& h, const FusedArgs& f) {
    const int me = h.rank(), n = h.world();
    const std::size_t rows = f.m / std::size_t(n), row_bytes = f.k * sizeof(T);
    const std::size_t chunk_rows = chunk_rows_for(rows, f.chunk_rows, Config::chunk_rows(rows), pad::kPlanChunks);
    PlanArgs p;
    p.coll.in = f.a;
    p.coll.out = f.work;
    p.coll.count = rows * f.k;
    p.chunk_bytes = chunk_rows * row_bytes;
    const Chunks ch = Push::template push<T>(h, p, /*own_copy=*/false);  // steps 1-2

    const char* gathered = static_cast<const char*>(f.work);
    auto gemm = [&](const void* a, std::size_t row0, std::size_t m) {
      main_gemm<T>(h, a, f.b, static_cast<char*>(f.c) + row0 * f.n * sizeof(T), m, f.n, f.k);
    };
    gemm(f.a, std::size_t(me) * rows, rows);  // step 3
    if constexpr (kBulk) {
      for (int i = 1; i < n; ++i) {
        const int q = (me + n - i) % n;
        for (int k = 0; k < ch.count && !kNoWait; ++k)
          h.wait_flag(kMainStream, pad::plan_flag(pad::kPlanData, k, q), 1);
        gemm(gathered + std::size_t(q) * rows * row_bytes, std::size_t(q) * rows, rows);
      }
    } else {
      for (int k = 0; k < ch.count; ++k)
        for (int i = 1; i < n; ++i) {
          const int q = (me + n - i) % n;
          if (!kNoWait) h.wait_flag(kMainStream, pad::plan_flag(pad::kPlanData, k, q), 1);
          const std::size_t row0 = std::size_t(q) * rows + ch.begin(k) / row_bytes;
          gemm(gathered + row0 * row_bytes, row0, ch.size(k) / row_bytes);
        }
    }
    Push::join(h);  // step 5
  }
};
using AgMmCeChunkGemm = AgMmCeT<false>;

}  // namespace symm
