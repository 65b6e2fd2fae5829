// all_gather.ce_sm_st ("ce_sm"): a host plan. Copy engines and SMs share the bytes: a kernel
// pushes the front part of this rank's input into every peer's output while copy engines push
// the rest, both at once. Either mechanism alone leaves NVLink bandwidth unused at large sizes
// (2x H200, 256 MiB: the SM push and the copy-engine push alone reach ~300 and ~340 GB/s of the
// link's 478 GB/s per direction); together they can finish sooner (eager: 381-388 us with 20-30 %
// by SMs vs 397 copy engines alone; in a CUDA graph the mix was no faster than copy engines
// alone, 401-403 vs 398: experiments/results/h200x2/gaps/). Below a few MB the copy engines'
// start-up dominates and the SMs carry everything.
//
//   1. entry handshake (main stream): every peer's `out` is free (plan_entry)
//   2. the side streams start after it (event 0)
//   3. side stream 1: push_to_peers over the SM part (in[0 .. sm) into peer(out, q)[me slot]
//      for every peer q, `blocks` blocks), then data flag (0, me) into every peer's pad: it
//      publishes the kernel's stores
//   4. side streams 2 .. (round robin; stream 1 too if it is the only side stream): the copy
//      engines push the rest in chunks, for every chunk k and every peer q in rank-swizzled
//      order: copy_engine(peer(out, q)[me slot + sm + chunk k], in[sm + chunk k]) and data flag
//      (1 + k, me) after it, on the same stream
//   5. side stream 1, after its flags: my own slot by copy_local (SMs, beside the copy engines);
//      main stream: wait for every peer's flags: `out` is complete once the side streams join
//   6. the side streams join the main stream (our `in` is read by them until then)
//
// The SM share is PlanArgs::sm_percent of the bytes (default: by size, sm_bytes()), rounded down
// to whole 16-byte vectors; 0 % is all_gather.ce_st's data path, 100 % all SM. Bytes over NVLink
// per rank: (world-1)/world * bytes, as every all-gather.
#pragma once

#include <algorithm>

#include "core/algos/all_gather_ce_st.h"
#include "core/algos/copy_local.h"
#include "core/algos/push_to_peers.h"
#include "core/descriptor.h"
#include "core/plan.h"

namespace symm {

// kFault: core/plan.h's PlanFault (tests only; kNoJoin and kNoEntry apply).
template <PlanFault kFault = PlanFault::kNone>
struct AllGatherCeSmStT {
  static constexpr Descriptor kDescriptor{
      EntryKind::kHostPlan, Op::kAllGather, "ce_sm_st", "ce_sm",
      "host plan: copy engines and an SM kernel push parts of the input into every peer's output at once"};
  struct Config {
    // The call's blocks are push_to_peers' blocks.
    static constexpr int kBlockLimit = PushToPeers::Config::kBlockLimit;
    static constexpr int kDefaultBlockCap = PushToPeers::Config::kDefaultBlockCap;
    static constexpr std::size_t kBytesPerBlock = PushToPeers::Config::kBytesPerBlock;
    static constexpr std::size_t kChunkBytes = AllGatherCeT<>::Config::kChunkBytes;  // per copy and flag (ce_st's)
    static constexpr std::size_t kSmOnlyBelow = 4 << 20;  // per rank: all bytes by SMs below this
    static constexpr int kSmPercent = 20;                 // above it: the SMs' share
  };

  // This rank's bytes the SMs push: `percent` of them (Config::kSmPercent when 0, all of them
  // below Config::kSmOnlyBelow), whole 16-byte vectors.
  static std::size_t sm_bytes(std::size_t bytes, int percent) {
    std::size_t sm;
    if (percent > 0)
      sm = bytes / 100 * std::size_t(std::min(percent, 100)) + bytes % 100 * std::size_t(std::min(percent, 100)) / 100;
    else
      sm = bytes < Config::kSmOnlyBelow ? bytes : bytes / 100 * std::size_t(Config::kSmPercent);
    return sm / kVecBytes * kVecBytes;
  }

  template <class T, class Host>
  static void run(Host& h, const PlanArgs& a) {
    const int me = h.rank(), n = h.world();
    const CollArgs& c = a.coll;
    const std::size_t bytes = c.count * sizeof(T);
    const std::size_t sm = sm_bytes(bytes, a.sm_percent);
    // The copy engines' chunks carry flags 1 .. : at most kPlanChunks - 1 of them.
    const std::size_t want = std::max<std::size_t>(a.chunk_bytes ? a.chunk_bytes : Config::kChunkBytes,
                                                   (bytes - sm + pad::kPlanChunks - 2) / (pad::kPlanChunks - 1));
    const Chunks ch(bytes - sm, want);
    const char* in = static_cast<const char*>(c.in);
    char* out = static_cast<char*>(c.out);
    const std::size_t my_slot = std::size_t(me) * bytes;

    const bool ce = bytes > sm;
    const int side = h.streams() - 1;
    // The side streams it uses: the SM push's, and the copies' (round robin over the others).
    const int used = side_streams(h, 1 + (ce && side > 1 ? ch.count * (n - 1) : 0));
    plan_entry<kFault>(h);                    // step 1
    fork_side_streams(h, used);               // step 2
    const int sm_stream = side_stream(h, 0);  // step 3
    if (sm) {
      CollArgs k;
      k.in = in;
      k.out = out + my_slot;
      k.count = sm / sizeof(T);
      h.template launch<PushToPeers, T>(sm_stream, k, a.blocks ? a.blocks : PushToPeers::default_blocks<T>(k.count));
    }
    for (int i = 1; i < n; ++i) h.write_flag(sm_stream, (me + i) % n, pad::plan_flag(pad::kPlanData, 0, me), 1);
    int j = 0;  // step 4
    for (int k = 0; ce && k < ch.count; ++k)
      for (int i = 1; i < n; ++i, ++j) {
        const int q = (me + i) % n;
        const int s = side > 1 ? 2 + j % (side - 1) : side_stream(h, 0);
        if (ch.size(k))
          h.copy_engine(s, h.peer(out, q) + my_slot + sm + ch.begin(k), in + sm + ch.begin(k), ch.size(k));
        h.write_flag(s, q, pad::plan_flag(pad::kPlanData, 1 + k, me), 1);
      }
    if (bytes) {  // step 5: my own slot by SMs, after the SM push on its stream (copy_local.h says why)
      CollArgs k;
      k.in = in;
      k.out = out + my_slot;
      k.count = c.count;
      const int dflt = CopyLocal::default_blocks<T>(k.count);
      h.template launch<CopyLocal, T>(sm_stream, k, a.blocks ? std::min(a.blocks, dflt) : dflt);
    }
    for (int i = 1; i < n; ++i) {
      const int q = (me + n - i) % n;
      h.wait_flag(kMainStream, pad::plan_flag(pad::kPlanData, 0, q), 1);
      for (int k = 0; ce && k < ch.count; ++k) h.wait_flag(kMainStream, pad::plan_flag(pad::kPlanData, 1 + k, q), 1);
    }
    join_side_streams<kFault>(h, 0, used);  // step 6
  }
};
using AllGatherCeSmSt = AllGatherCeSmStT<>;

}  // namespace symm
