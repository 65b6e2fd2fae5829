// ag_mm.st_bulk_gemm ("st"): all-gather + matmul with the all-gather on SMs. Our push all-gather
// program (all_gather.st) runs on a side stream while the main stream multiplies the local
// shard; the peers' rows are multiplied once the kernel has ended.
//
//   1. side stream (forked from the main stream at the call's start): launch all_gather.st on
//      `blocks` blocks: every rank stores its shard into every rank's gathered A (its opening
//      barrier orders it after the peers' previous call, so no entry handshake is needed;
//      its closing barrier means every peer's rows have landed in mine when it ends); record
//   2. main stream: C[my rows] = a @ B (hides the transfer; it shares the SMs with the kernel)
//   3. main stream: wait_event, then C[rows before mine] and C[rows after mine] from gathered A,
//      one GEMM each (the peers' rows are contiguous on either side of mine)
//
// Against the copy-engine plans (ag_mm_ce_chunk_gemm.h): no flags and no copy engine, but the
// all-gather holds SMs while it runs and the peers' GEMM waits for the last byte. The bytes over
// NVLink are all_gather's: (world-1)/world * M x K elements per rank.
#pragma once

#include "core/algos/all_gather_st.h"
#include "core/algos/fused_gemm.h"
#include "core/descriptor.h"
#include "core/fused.h"
#include "core/plan.h"

namespace symm {

// kFault (tests only, core/plan.h's PlanFault): kNoWait, the peers' GEMM starts without waiting
// for the all-gather's end (the simulator's data check and race check must catch it; the side
// stream is still joined before the end); kNoJoin, the side stream is never joined.
template <PlanFault kFault = PlanFault::kNone>
struct AgMmStBulkT {
  static constexpr bool kNoWait = kFault == PlanFault::kNoWait;
  static constexpr Descriptor kDescriptor{
      .kind = EntryKind::kFusedPlan,
      .name = "st_bulk_gemm",
      .alias = "st",
      .summary =
          "SM all-gather (all_gather.st) beside the local shard's GEMM, then the peers' rows in one GEMM each side",
      .fused_op = FusedOp::kAgMm};
  struct Config {
    static constexpr int kDefaultBlocks = 32;  // of all_gather.st: a quarter of the SMs
  };

  template <class T, class Host>
  static void run(Host& h, const FusedArgs& f) {
    const int me = h.rank(), n = h.world();
    const std::size_t rows = f.m / std::size_t(n), row_bytes = f.k * sizeof(T);
    const int side = h.streams() > 1 ? 1 : kMainStream;
    CollArgs g;
    g.in = f.a;
    g.out = f.work;
    g.count = rows * f.k;
    h.template launch<AllGatherSt, T>(side, g, f.blocks ? f.blocks : Config::kDefaultBlocks);  // step 1
    if (side != kMainStream) h.record(side, 0);  // event 0: side -> main (this plan's only event)

    const char* gathered = static_cast<const char*>(f.work);
    auto gemm = [&](const void* a, std::size_t row0, std::size_t m) {
      main_gemm<T>(h, a, f.b, static_cast<char*>(f.c) + row0 * f.n * sizeof(T), m, f.n, f.k);
    };
    gemm(f.a, std::size_t(me) * rows, rows);  // step 2
    if (side != kMainStream && !kNoWait && kFault != PlanFault::kNoJoin) h.wait_event(kMainStream, 0);
    const std::size_t mine = std::size_t(me) * rows;
    gemm(gathered, 0, mine);  // step 3
    gemm(gathered + (mine + rows) * row_bytes, mine + rows, f.m - mine - rows);
    if (side != kMainStream && kNoWait) h.wait_event(kMainStream, 0);  // still joined before the end
  }
};
using AgMmStBulkGemm = AgMmStBulkT<>;

}  // namespace symm
