// mm_rs.gemm_ce_acc ("ce_acc"): matmul + reduce-scatter as a host plan whose owner adds the peers'
// partial products in its own GEMM's epilogue (C = A_own @ B + C_in, cuBLASLt's beta = 1), so no
// reduce kernel competes with the GEMMs for the SMs and the own rows need no partial buffer.
// The peers' side is mm_rs.gemm_ce_ring_reduce's: every peer's rows first, chunk by chunk, each
// chunk pushed to its owner by a copy engine while the next one is multiplied.
//
//   1. entry handshake (main stream): every peer's scratch is free (plan_entry)
//   2. for every peer q in rank-rotated order (me+1, me+2, ...) and every chunk k of q's rows:
//        main stream: partial[q's rows, chunk k] = a[q's rows, chunk k] @ B; record an event
//        the copy stream (mm_rs_ce_push.h: the first side stream), after that event:
//          copy_engine(peer(scratch, q)[slot me, chunk k], partial[q's rows, chunk k])
//          write_flag(q, data flag (k, me))        it publishes the copy
//   3. the waiter stream (the second side stream; the first, the copy stream, when there is no
//      second: its flag waits then queue behind this rank's copies): for every chunk k, wait for
//      data flag (k, q) of every peer q; record an
//      event per chunk (the main stream waits for that event, not for the flags, so no stream
//      memory operation sits between its GEMMs)
//   4. my own rows in two GEMMs: chunks 0 .. count-2 together (those peers' chunks were sent
//      during their step 2), then the last chunk (its copies run beside the first GEMM):
//        main stream: wait for the chunks' events; C_in = the peers' partials of those rows:
//          world 2: the one peer's slot of my scratch itself
//          world > 2: sum_peer_slots sums the peers' slots into my own (otherwise unused) slot,
//          on the main stream before the GEMM
//        c[those rows] = a[my rows, those rows] @ B + C_in
//   5. the side streams join the main stream
//
// Rounding: world 2 rounds once (the peer's partial to T, then fp32 A @ B + it, then to T), as
// the ring reduce; world > 2 rounds the peers' sum to T once more before the GEMM adds it.
// Scratch: world slots of M/world x N. Bytes over NVLink per rank: (world-1)/world * M x N
// elements (reduce_scatter's); FLOPs: 2 M N K / world.
#pragma once

#include <algorithm>

#include "core/algos/fused_gemm.h"
#include "core/algos/mm_rs_ce_push.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/partition.h"
#include "core/plan.h"
#include "core/verbs.h"

namespace symm {

// A plan kernel: slot[me][i] = sum over peers q != me of slot[q][i] (slots `stride` elements
// apart in `scratch`; `in` unused), accumulated in fp32. Local loads only.
struct SumPeerSlots : PlanKernel<32, (256 << 10)> {
  template <class T, class Ctx>
  SYMM_HD static void run(Ctx& ctx, const CollArgs& a) {
    const int me = ctx.rank(), n = ctx.world();
    const Range piece = split_aligned<T>(a.count, ctx.blocks(), ctx.block());
    if (!piece.count) return;
    const T* srcs[Ctx::kWorldLimit];
    for (int j = 1; j < n; ++j)
      srcs[j - 1] = static_cast<const T*>(a.scratch) + std::size_t((me + j) % n) * a.stride + piece.begin;
    T* dst = static_cast<T*>(a.scratch) + std::size_t(me) * a.stride + piece.begin;
    ctx.template reduce<T>(dst, srcs, n - 1, piece.count, ReduceOp::kSum);
  }
};

template <PlanFault kFault = PlanFault::kNone>
struct MmRsGemmCeAccT {
  static constexpr Descriptor kDescriptor{
      .kind = EntryKind::kFusedPlan,
      .name = "gemm_ce_acc",
      .alias = "ce_acc",
      .summary =
          "as ce, but the owner adds the peers' partials in its own GEMM's epilogue (C_in, beta 1): no reduce "
          "kernel beside the GEMMs; own rows in two GEMMs",
      .fused_op = FusedOp::kMmRs};
  struct Config {
    // Each owner's rows in two chunks (one GEMM, copy and flag each): the owner's first GEMM
    // runs while the second chunk's copies land, and neither GEMM is short enough to lose much
    // to a wave's tail. On 2x H100 (experiments/results/h100x2/chunks_c84b44c): 8B M 16384 258 us
    // against 272 with 2048-row chunks, 70B M 4096 218 against 253. On 4x H100
    // (experiments/results/h100x4/chunks_c105723) 70B M 16384 548 against 575 with one chunk, but
    // 8B M 16384 313 against 278 with one chunk (there the last chunk's copies are short anyway).
    static constexpr std::size_t kChunksPerOwner = 2;
    static std::size_t chunk_rows(std::size_t rows) {
      return std::max<std::size_t>(1, (rows + kChunksPerOwner - 1) / kChunksPerOwner);
    }
  };

  template <class T, class Host>
  static void run(Host& h, const FusedArgs& f) {
    const int me = h.rank(), n = h.world();
    const MmRsSlots l = MmRsSlots::of<T>(f, n, Config::chunk_rows(f.m / std::size_t(n)));
    const std::size_t rows = l.rows, kl = l.kl, row_bytes = l.row_bytes, slot_bytes = l.slot_bytes;
    const Chunks& ch = l.ch;
    const T* a = static_cast<const T*>(f.a);
    char* scratch = static_cast<char*>(f.work);

    int ev = mm_rs_push_peers<T, kFault>(h, f, l);  // steps 1-2
    // Step 3. kNoWait (tests only): no waits, so no waiter stream either (one with events only is
    // refused by the host contract): the main stream records the events itself.
    const int waiters = kFault == PlanFault::kNoWait ? 0 : 2;
    const int waiter = side_streams(h, waiters);
    const int first_own = ev;
    for (int k = 0; k < ch.count; ++k) {
      for (int i = 1; i < n && kFault != PlanFault::kNoWait; ++i)
        h.wait_flag(waiter, pad::plan_flag(pad::kPlanData, k, (me + n - i) % n), 1);
      h.record(waiter, first_own + k);
    }
    ev += ch.count;
    // Step 4: chunks [k0, k1) in one GEMM.
    auto own = [&](int k0, int k1) {
      for (int k = k0; k < k1; ++k) h.wait_event(kMainStream, first_own + k);
      const std::size_t b0 = ch.begin(k0), b1 = k1 > k0 ? ch.begin(k1 - 1) + ch.size(k1 - 1) : b0;
      if (b1 == b0) return;
      const std::size_t m = (b1 - b0) / row_bytes;
      const void* c_in = scratch + std::size_t(n == 2 ? (me + 1) % n : me) * slot_bytes + b0;
      if (n > 2) {
        CollArgs r;
        r.scratch = scratch + b0;
        r.count = (b1 - b0) / sizeof(T);
        r.stride = rows * f.n;
        h.template launch<SumPeerSlots, T>(kMainStream, r,
                                           f.blocks ? f.blocks : SumPeerSlots::default_blocks<T>(r.count));
      }
      GemmArgs g = gemm_args(a + (std::size_t(me) * slot_bytes + b0) / row_bytes * kl, f.b,
                             static_cast<char*>(f.c) + b0, m, f.n, kl, DTypeOf<T>::value);
      g.c_in = c_in;
      h.gemm(kMainStream, g);
    };
    own(0, ch.count - 1);
    own(ch.count - 1, ch.count);
    join_side_streams<kFault>(h, ev, side_streams(h, std::max(waiters, 1)));  // step 5: the copies' and the waiter's
  }
};
using MmRsGemmCeAcc = MmRsGemmCeAccT<>;

}  // namespace symm
