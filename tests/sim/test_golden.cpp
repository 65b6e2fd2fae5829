// Golden simulated times on tests/sim/tiny.ini, computed by hand in the comments.
//
// tiny: launch 1 us (graph) / 2 us (eager), flag 1 us one way, store 1 us, load round trip
// 2 us, per-block cap 1 GB/s (= 1000 bytes/us), NVLink egress and ingress 4 GB/s per GPU,
// HBM 8 GB/s.
#include <gtest/gtest.h>

#include "backends/sim/testing.h"
#include "core/calib_programs.h"

namespace symm::sim {
namespace {

Machine tiny() { return Machine::load(SYMM_TEST_DIR "/tiny.ini"); }

RunSpec golden_spec(int world, std::size_t bytes, int blocks) { return timing_spec(tiny(), world, bytes, blocks); }

// Rank 0's blocks each load `bytes` of in from rank 1 (kPeers == 1) or from rank 1 + block
// (kPeers > 1); every other rank idles.
template <int kPeers = 1>
struct LoadFromPeer {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.rank() != 0) return;
    const int from = 1 + (kPeers > 1 ? ctx.block() % kPeers : 0);
    ctx.copy(a.out, ctx.peer(a.in, from), a.count * sizeof(T));
  }
};

// Rank 0 block 0 stores `bytes` into rank 1's out, then signals rank 1 with kOrder;
// rank 1 waits for the flag.
template <MemOrder kOrder>
struct StoreThenSignal {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    const uint32_t slot = pad::flag(1, 0, 0);
    if (ctx.rank() == 0) {
      ctx.copy(ctx.peer(a.out, 1), a.in, a.count * sizeof(T));
      ctx.signal(1, slot, 1, kOrder);
    } else if (ctx.rank() == 1) {
      ctx.wait(slot, 1, MemOrder::kAcquire);
    }
  }
};

template <class P>
double time_of(const RunSpec& s) {
  return run_program<P>(s).time_us;
}

TEST(Golden, OneLoadIsLaunchPlusBytesOverRatePlusRoundTrip) {
  // 1 (launch) + 4000 B / 1 GB/s (the block cap binds: the link could do 4) + 2 (round trip).
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(golden_spec(2, 4000, 1)), 1 + 4 + 2);
  // Eager calls pipeline (backends/sim/run.cpp): the graph-mode time plus the eager gap, or the
  // eager launch interval, whichever is longer: 7 us against a 2 us launch; then a 10 us launch;
  // then a 0.5 us gap.
  RunSpec eager = golden_spec(2, 4000, 1);
  eager.graph = false;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(eager), 1 + 4 + 2);
  eager.machine.launch_eager_us = 10;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(eager), 10);
  eager.machine.launch_eager_us = 2;
  eager.machine.launch_eager_gap_us = 0.5;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(eager), 1 + 4 + 2 + 0.5);
}

TEST(Golden, AnEagerCallThatReleasesPaysTheEagerReleaseCost) {
  // eager_release_us (sim.h): once a call, in eager calls only, and only where some block signals
  // with a release; a relaxed signal or a program with no signal pays launch_eager_gap_us alone.
  RunSpec s = golden_spec(2, 4000, 1);
  s.machine.launch_eager_gap_us = 0.5;
  s.machine.eager_release_us = 0.75;
  const double release_graph = time_of<StoreThenSignal<MemOrder::kRelease>>(s);
  const double relaxed_graph = time_of<StoreThenSignal<MemOrder::kRelaxed>>(s);
  const double load_graph = time_of<LoadFromPeer<>>(s);
  s.graph = false;
  EXPECT_DOUBLE_EQ(time_of<StoreThenSignal<MemOrder::kRelease>>(s), release_graph + 0.5 + 0.75);
  EXPECT_DOUBLE_EQ(time_of<StoreThenSignal<MemOrder::kRelaxed>>(s), relaxed_graph + 0.5);
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), load_graph + 0.5);
  // A team whose ranks share a GPU keeps its own eager model ((k - 1) x team_launch_us, sim.h): no
  // eager_release_us there.
  s.machine.team = 1;
  s.machine.gpus = 1;
  s.machine.team_launch_us = 0.25;
  s.graph = true;
  const double team_graph = time_of<StoreThenSignal<MemOrder::kRelease>>(s);
  s.graph = false;
  EXPECT_DOUBLE_EQ(time_of<StoreThenSignal<MemOrder::kRelease>>(s), team_graph + 1 * 0.25);
}

TEST(Golden, ProgrammaticLaunchSavesBackToBackCallsOfDevicePrograms) {
  // Back-to-back calls launched with programmatic dependent launch (RunSpec::pdl, the default) end
  // pdl_saving_us sooner: the 7 us load (1 launch + 4 + 2) in 7 - 0.5, off the same 7; an empty
  // kernel no sooner than its launch (1); eager calls pipeline from the saved graph time.
  RunSpec s = golden_spec(2, 4000, 1);
  s.machine.pdl_saving_us = 0.5;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + 4 + 2 - 0.5);
  EXPECT_DOUBLE_EQ(time_of<calib::Empty>(s), 1);
  s.machine.pdl_saving_us = 3;  // more than the launch: still no call sooner than the launch
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + 4 + 2 - 3);
  EXPECT_DOUBLE_EQ(time_of<calib::Empty>(s), 1);
  s.machine.pdl_saving_us = 0.5;
  s.graph = false;
  s.machine.launch_eager_gap_us = 0.25;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + 4 + 2 - 0.5 + 0.25);
  s.pdl = false;  // as bench --pdl off
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + 4 + 2 + 0.25);
  s.graph = true;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + 4 + 2);
  // A team launches without it (sim.h): the same call on a team machine saves nothing.
  s.pdl = true;
  s.machine.team = 1;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), time_of<LoadFromPeer<>>([&] {
                     RunSpec off = s;
                     off.pdl = false;
                     return off;
                   }()));
}

TEST(Golden, ASerialTailPaysARoundTripForEachOfAThreadsLastVectors) {
  // RunSpec::serial_tail (the CUDA copy before ec6ad13): 4 vectors a thread a step, then the rest
  // one at a time. One block of all_reduce.one_shot's sizes runs 512 threads (AlgoInfo::
  // default_threads): 16 KiB is 2 vectors a thread, one round trip (2 us) more than one step;
  // 24 KiB 3 vectors, two more; 16 KiB + 16 B leaves thread 0 three vectors, two more; 8 KiB
  // (one vector) and 32 KiB (one full step) none. Without it, 1 + bytes / 1000 + 2 each.
  for (const auto& [bytes, extra] :
       {std::pair<std::size_t, int>{16384, 1}, {24576, 2}, {16400, 2}, {8192, 0}, {32768, 0}}) {
    RunSpec s = golden_spec(2, bytes, 1);
    ASSERT_EQ(s.algo->default_threads(bytes, 2, 1), 512);
    EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + double(bytes) / 1000 + 2) << bytes;
    s.serial_tail = true;
    EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + double(bytes) / 1000 + 2 + 2 * extra) << bytes;
  }
  // Its local loads (a copy of its own input into a peer) pay nothing more (sim.h).
  RunSpec store = golden_spec(2, 16384, 1);
  const double one_step = time_of<StoreThenSignal<MemOrder::kRelease>>(store);
  store.serial_tail = true;
  EXPECT_DOUBLE_EQ(time_of<StoreThenSignal<MemOrder::kRelease>>(store), one_step);
  // Fewer threads by size: 4 KiB at one block is 256 threads, one vector each: no tail.
  RunSpec small = golden_spec(2, 4096, 1);
  small.serial_tail = true;
  EXPECT_EQ(small.algo->default_threads(4096, 2, 1), 256);
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(small), 1 + 4.096 + 2);
}

TEST(Golden, ASerialTailSlowsATwoSourceReduceOnly) {
  // all_reduce.ld_reduce (one_shot) at 16 KiB on one block: its reduce of world sources (backends/
  // cuda/vec_math.cuh) steps 4 vectors a thread at 2 sources, 2 at 3-4, 1 beyond: with the serial
  // tail the 2-rank call pays one round trip more, the 4-rank call none.
  for (const auto& [world, extra] : {std::pair<int, double>{2, 2.0}, {4, 0.0}}) {
    RunSpec s = golden_spec(world, 16384, 1);
    const double one_step = run(s).time_us;
    s.serial_tail = true;
    EXPECT_DOUBLE_EQ(run(s).time_us, one_step + extra) << world;
  }
}

TEST(Golden, ABlocksFirstPeerAccessPaysPeerKernelOnce) {
  // peer_kernel_us before the block's first access to a peer, and never again in that kernel:
  // one load 1 + 0.25 + 4 + 2; the local Empty program pays nothing.
  RunSpec s = golden_spec(2, 4000, 1);
  s.machine.peer_kernel_us = 0.25;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + 0.25 + 4 + 2);
  EXPECT_DOUBLE_EQ(time_of<calib::Empty>(s), 1);
}

TEST(Golden, PerBlockCapBindsUntilTheLinkSaturates) {
  // 4 blocks x 1 GB/s exactly fill rank 1's 4 GB/s egress: each still takes 4 us.
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(golden_spec(2, 4000, 4)), 1 + 4 + 2);
  // 8 blocks share the 4 GB/s egress max-min fairly: 0.5 GB/s each, 4000 B in 8 us.
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(golden_spec(2, 4000, 8)), 1 + 8 + 2);
}

// load_link_factor: a byte loaded from a peer takes that many bytes of the link's time (a stored
// byte one); the block's own cap is unchanged.
TEST(Golden, LoadLinkFactorChargesTheLinkNotTheBlock) {
  // 8 blocks on rank 1's 4 GB/s egress: 8 us at factor 1 (above); at 1.25 each loaded byte takes
  // 1.25 bytes of the link: 4000 x 1.25 / 0.5 GB/s = 10 us.
  RunSpec s = golden_spec(2, 4000, 8);
  s.machine.load_link_factor = 1.25;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + 10 + 2);
  // One block at its 1 GB/s cap uses 1.25 of the 4 GB/s link: the cap still binds, 4 us.
  s.blocks = 1;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + 4 + 2);
  // Stores are not loads: StoreThenSignal's store is unchanged by the factor.
  RunSpec st = golden_spec(2, 4000, 1);
  const double before = time_of<StoreThenSignal<MemOrder::kRelease>>(st);
  st.machine.load_link_factor = 2;
  EXPECT_DOUBLE_EQ(time_of<StoreThenSignal<MemOrder::kRelease>>(st), before);
}

TEST(Golden, ConcurrentFlowsShareALink) {
  // Lift the block cap to the link rate: one flow alone runs at 4 GB/s (1 us for 4000 B),
  // two flows on rank 1's egress get 2 GB/s each (2 us).
  RunSpec s = golden_spec(2, 4000, 1);
  s.machine.block_GBps = 4;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + 1 + 2);
  s.blocks = 2;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<>>(s), 1 + 2 + 2);
  // Two flows from *different* peers still meet on rank 0's 4 GB/s ingress: 2 us as well.
  RunSpec w3 = s;
  w3.world = 3;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<2>>(w3), 1 + 2 + 2);
  // Three flows (two from rank 1, one from rank 2) on rank 0's 4 GB/s ingress: 4/3 GB/s each,
  // 3 us for 4000 B (rank 1's egress carries 8/3 GB/s and is not the bottleneck).
  w3.blocks = 3;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeer<2>>(w3), 1 + 3 + 2);
}

// Rank 0 block 0 loads `bytes` from each of ranks 1..kPeers in turn (kSame: from rank 1 every
// time), then (kSignal) signals itself relaxed, a verb that needs no peer's bytes.
template <int kPeers, bool kSame = false, bool kSignal = false>
struct LoadFromPeersInTurn {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.rank() != 0 || ctx.block() != 0) return;
    const std::size_t n = a.count * sizeof(T);
    for (int p = 1; p <= kPeers; ++p) ctx.copy(a.out, ctx.peer(a.in, kSame ? 1 : p), n);
    if constexpr (kSignal) ctx.signal(0, pad::flag(0, 0, 0), 1, MemOrder::kRelaxed);
  }
};

// A block's loads from different peers are independent: their round trips overlap (verbs.cpp,
// copy). Each transfer still takes its 4 us at the block's 1 GB/s, one after another; the
// round trip (2 us) is paid once, after the last.
TEST(Golden, LoadsFromDifferentPeersOverlapTheirRoundTrips) {
  RunSpec s = golden_spec(4, 4000, 1);
  // 1 (launch) + 3 x 4 (transfers) + 2 (one round trip), not 1 + 3 x (4 + 2) = 19.
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeersInTurn<3>>(s), 1 + 3 * 4 + 2);
  // Two loads from the same peer: the second waits for the first's round trip (1 + 2 x (4 + 2)).
  EXPECT_DOUBLE_EQ((time_of<LoadFromPeersInTurn<2, true>>(s)), 1 + 2 * (4 + 2));
  // Any other verb first waits for the loads to land: the signal starts at 1 + 3 x 4 + 2 and the
  // block's own flag lands at once.
  EXPECT_DOUBLE_EQ((time_of<LoadFromPeersInTurn<3, false, true>>(s)), 1 + 3 * 4 + 2);
}

// load_overlap 0: each copy from a peer pays its own round trip before the block goes on.
TEST(Golden, LoadsInTurnEachPayTheirRoundTripWithoutOverlap) {
  RunSpec s = golden_spec(4, 4000, 1);
  s.machine.load_overlap = 0;
  EXPECT_DOUBLE_EQ(time_of<LoadFromPeersInTurn<3>>(s), 1 + 3 * (4 + 2));
}

// A barrier's later signals and waits (verbs.cpp): rank 0's block signals ranks 1, 2, 3 in turn,
// then waits for their flags; each other rank waits for rank 0's flag, then signals it back. With
// kSamePeer, rank 0 sends all three flags to rank 1, which waits for them and sends three back
// (flags of blocks 1..3, each naming rank 1 as its writer).
template <bool kSamePeer>
struct SignalsThenWaits {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs&) {
    if (ctx.block() != 0) return;
    const int me = ctx.rank(), n = ctx.world();
    if (me == 0) {
      for (int p = 1; p < n; ++p) ctx.signal(kSamePeer ? 1 : p, pad::flag(2, p, 0), 1, MemOrder::kRelaxed);
      for (int p = 1; p < n; ++p) ctx.wait(kSamePeer ? pad::flag(2, p, 1) : pad::flag(2, 0, p), 1, MemOrder::kRelaxed);
    } else if (!kSamePeer) {
      ctx.wait(pad::flag(2, me, 0), 1, MemOrder::kRelaxed);
      ctx.signal(0, pad::flag(2, 0, me), 1, MemOrder::kRelaxed);
    } else if (me == 1) {
      for (int p = 1; p < n; ++p) ctx.wait(pad::flag(2, p, 0), 1, MemOrder::kRelaxed);
      for (int p = 1; p < n; ++p) ctx.signal(0, pad::flag(2, p, 1), 1, MemOrder::kRelaxed);
    }
  }
};

TEST(Golden, LaterSignalsAndWaitsToOtherPeersPayTheirKeys) {
  RunSpec s = golden_spec(4, 16, 1);  // the bytes are not touched
  // Launch 1 us, flags 1 us one way, nothing else: rank 0's three signals go at 1, rank 3's flag is
  // back at 3, and its waits find them all set by then.
  EXPECT_DOUBLE_EQ(time_of<SignalsThenWaits<false>>(s), 3);
  // A later signal to another peer issues 0.25 us after the one before: rank 3's flag leaves at
  // 1.5 and its reply lands at 3.5; rank 0's waits after the first (rank 1's reply at 3) read their
  // flags 0.125 us each, the second landing at 3.25, the third at 3.5 (waited for).
  s.machine.signal_next_us = 0.25;
  s.machine.wait_next_us = 0.125;
  EXPECT_DOUBLE_EQ(time_of<SignalsThenWaits<false>>(s), 3.5);
  s.machine.wait_next_us = 1;  // each later wait's read: 3 + 1 + 1
  EXPECT_DOUBLE_EQ(time_of<SignalsThenWaits<false>>(s), 5);
  // Runs to one peer, and waits on one peer's flags, pay neither: rank 1's waits and replies all at
  // once, its last reply lands at 3.
  EXPECT_DOUBLE_EQ(time_of<SignalsThenWaits<true>>(s), 3);
}

// Max-min with redistribution: rank 2's egress carries 4 flows (B, C to rank 0; D, E to rank 1),
// rank 0's ingress carries A (from rank 1), B and C. Block cap lifted to 4 GB/s.
struct UnequalShares {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    const int r = ctx.rank(), b = ctx.block();
    const std::size_t n = a.count * sizeof(T);
    if (r == 0 && b == 0) {
      ctx.copy(a.out, ctx.peer(a.in, 1), n);  // A1
      ctx.copy(a.out, ctx.peer(a.in, 1), n);  // A2
    } else if ((r == 0 && b <= 2) || (r == 1 && b <= 1)) {
      ctx.copy(a.out, ctx.peer(a.in, 2), n);  // B, C / D, E
    }
  }
};

TEST(Golden, MaxMinRedistributesLeftoverCapacity) {
  // t=1 (launch): rank 2's egress saturates first at 4/4 = 1 GB/s for B..E; A1 gets what is
  // left of rank 0's ingress, 4 - 2 = 2 GB/s: done at 1 + 2 = 3, resumes at 5 (round trip).
  // B..E finish at 1 + 4 = 5. A2 then runs alone at 4 GB/s: 5 + 1 = 6, resumes at 8.
  // (An equal split without redistribution would give A1 4/3 GB/s and end at 9.)
  RunSpec s = golden_spec(3, 4000, 3);
  s.machine.block_GBps = 4;
  EXPECT_DOUBLE_EQ(time_of<UnequalShares>(s), 8);
}

TEST(Golden, FlagOneWay) {
  // Barrier on 2 ranks, 1 block: launch 1 us, then each flag lands 1 us after its signal.
  RunSpec s = golden_spec(2, 0, 1);
  s.algo = &find_algo("barrier.acq_rel");
  EXPECT_DOUBLE_EQ(run(s).time_us, 1 + 1);
}

// Rank 0 block 0 signals rank 1 (release), stores `bytes` into rank 1's out, and signals again
// (release, another slot); rank 1 waits (relaxed) for the second flag.
struct ReleaseStoreRelease {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.rank() == 0) {
      ctx.signal(1, pad::flag(1, 0, 0), 1, MemOrder::kRelease);
      ctx.copy(ctx.peer(a.out, 1), a.in, a.count * sizeof(T));
      ctx.signal(1, pad::flag(1, 0, 1), 1, MemOrder::kRelease);
    } else if (ctx.rank() == 1) {
      ctx.wait(pad::flag(1, 0, 1), 1, MemOrder::kRelaxed);
    }
  }
};

// release_fence_share: the part of acquire_us a release's fence pays (once per release with
// something to publish since the block's last fence), the rest each acquire wait pays once its flag
// is seen (verbs.cpp).
TEST(Golden, AReleaseFencesOnceAndEachAcquirePaysTheRest) {
  RunSpec s = golden_spec(4, 0, 1);
  s.algo = &find_algo("barrier.acq_rel");
  s.machine.acquire_us = 0.6;
  // 4 ranks, share 0: the flags land at 1 + 1 = 2, and each of a rank's 3 waits pays 0.6 after it.
  EXPECT_DOUBLE_EQ(run(s).time_us, 1 + 1 + 3 * 0.6);
  // Share 0.5: the first of a rank's 3 releases fences 0.3 (the block's start is something to
  // publish), the other two reuse that fence: the flags leave at 1.3 and land at 2.3; each wait
  // pays the other 0.3.
  s.machine.release_fence_share = 0.5;
  EXPECT_DOUBLE_EQ(run(s).time_us, 1 + 0.3 + 1 + 3 * 0.3);
  // 2 ranks: one fence and one acquire per barrier, 1 + 1 + 0.6 whatever the share.
  s.world = 2;
  EXPECT_DOUBLE_EQ(run(s).time_us, 1 + 1 + 0.6);
  s.machine.release_fence_share = 0;
  EXPECT_DOUBLE_EQ(run(s).time_us, 1 + 1 + 0.6);
  // The acquire/release ping-pong (calibrate's pingpong_acqrel, which fits acquire_us): every hop
  // after an acquire fences again (what the acquire made visible), so a hop costs flag + 0.6 at
  // any share: 2 round trips, 4 hops, 1 + 4 x 1.6.
  RunSpec p = golden_spec(2, 2 * kVecBytes, 1);
  p.machine.acquire_us = 0.6;
  for (double share : {0.0, 0.5, 1.0}) {
    p.machine.release_fence_share = share;
    EXPECT_DOUBLE_EQ(time_of<calib::PingPongAcqRel>(p), 1 + 4 * 1.6) << "share " << share;
  }
  // A store between two releases is something to publish: the second release fences again. Share
  // 0.5 of 0.6: the first fence ends at 1.3; the store takes 4000 B / 1 GB/s (1.3 to 5.3) and
  // lands at 6.3; the second fence ends at 6.6 and its flag lands at 7.6.
  RunSpec r = golden_spec(2, 4000, 1);
  r.machine.acquire_us = 0.6;
  r.machine.release_fence_share = 0.5;
  EXPECT_DOUBLE_EQ(time_of<ReleaseStoreRelease>(r), 1 + 0.3 + 4 + 1 + 0.3 + 1);
}

// The acquire / release barrier at world 2, one block, acquire_us 0.6 of which the release's fence
// pays half: launch 1, fence 0.3, flag 1, the acquire's other 0.3.
RunSpec fenced_barrier() {
  RunSpec s = golden_spec(2, 0, 1);
  s.algo = &find_algo("barrier.acq_rel");
  s.machine.acquire_us = 0.6;
  s.machine.release_fence_share = 0.5;
  return s;
}

// fence_gap_us: a release's fence pays that much more for each other block of its GPU fencing or
// waiting for a flag as it starts (verbs.cpp, signal): at a barrier of B blocks that start together
// the k-th to fence pays k gaps, so the last block's flag leaves (B - 1) gaps later. Relaxed
// barriers do not fence.
TEST(Golden, BlocksFencingTogetherSlowEachOther) {
  RunSpec s = fenced_barrier();
  s.machine.fence_gap_us = 0.1;
  // One block: launch 1, fence 0.3, flag 1, the acquire's other 0.3; no other block to wait on.
  EXPECT_DOUBLE_EQ(run(s).time_us, 1 + 0.3 + 1 + 0.3);
  // Four blocks: the fourth fences behind three, 0.3 + 3 x 0.1.
  s.blocks = 4;
  EXPECT_DOUBLE_EQ(run(s).time_us, 1 + 0.3 + 3 * 0.1 + 1 + 0.3);
  s.machine.fence_gap_us = 0;
  EXPECT_DOUBLE_EQ(run(s).time_us, 1 + 0.3 + 1 + 0.3);
  // Relaxed: no fence, no gap (launch 1, flag 1), at any block count.
  s.machine.fence_gap_us = 0.1;
  s.algo = &find_algo("barrier.relaxed");
  EXPECT_DOUBLE_EQ(run(s).time_us, 1 + 1);
}

// Two rounds of the collectives' acquire / release barrier; kPush: every block first stores a
// vector into its slot of the next rank's out, so the second round's releases wait for stores.
template <bool kPush>
struct TwoBarriers {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    barrier(ctx, kBarrierAcqRel);
    if constexpr (kPush) {
      const std::size_t v = kVecBytes / sizeof(T), at = std::size_t(ctx.block()) * v;
      ctx.copy(ctx.peer(static_cast<T*>(a.out) + at, (ctx.rank() + 1) % ctx.world()), static_cast<const T*>(a.in) + at,
               kVecBytes);
    }
    barrier(ctx, kBarrierAcqRel);
  }
};

// fence_crowd_us: a fence after an acquire of its kernel (a barrier's second round) pays that much
// more for each other block of its GPU fencing or waiting, at most fence_crowd_blocks of them
// (verbs.cpp, signal); the first round's fences, and a push's (its release waits for its stores),
// pay none. The rows it comes from, calibrate's barrier_blocks, grow to about 16 blocks and stop.
TEST(Golden, AFenceAfterAnAcquirePaysTheCrowdUpToItsCount) {
  RunSpec s = fenced_barrier();
  s.blocks = 4;
  const double plain = time_of<TwoBarriers<false>>(s);
  s.machine.fence_crowd_us = 0.1;
  s.machine.fence_crowd_blocks = 8;
  // The second round's last block fences behind the three others: 3 x 0.1.
  EXPECT_NEAR(time_of<TwoBarriers<false>>(s), plain + 3 * 0.1, 1e-9);
  // At most fence_crowd_blocks of them.
  s.machine.fence_crowd_blocks = 2;
  EXPECT_NEAR(time_of<TwoBarriers<false>>(s), plain + 2 * 0.1, 1e-9);
  // One round: its fences follow no acquire.
  s.machine.fence_crowd_us = 0;
  const double one = run(s).time_us;
  s.machine.fence_crowd_us = 0.1;
  EXPECT_DOUBLE_EQ(run(s).time_us, one);
  // The push: its second round's releases wait for their stores first, and pay no crowd.
  RunSpec p = s;
  p.bytes = std::size_t(p.blocks) * kVecBytes;
  p.machine.fence_crowd_us = 0;
  const double push = time_of<TwoBarriers<true>>(p);
  p.machine.fence_crowd_us = 0.1;
  EXPECT_DOUBLE_EQ(time_of<TwoBarriers<true>>(p), push);
}

// Rank 0 block 0 copies `bytes` from its in to its own out (kPeer: to rank 1's out) and releases a
// flag to rank 1, which waits for it (relaxed).
template <bool kPeer>
struct CopyThenRelease {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    if (ctx.rank() == 0) {
      ctx.copy(kPeer ? ctx.peer(a.out, 1) : a.out, a.in, a.count * sizeof(T));
      ctx.signal(1, pad::flag(1, 0, 0), 1, MemOrder::kRelease);
    } else if (ctx.rank() == 1) {
      ctx.wait(pad::flag(1, 0, 0), 1, MemOrder::kRelaxed);
    }
  }
};

// local_store_fence_us: a release after the block's stores into its own memory fences that much
// longer (their acknowledgement); after a peer's stores it waits for them to land instead
// (store_latency_us), and an acquire alone is no store (calibrate's fence_chain_local fits the key).
TEST(Golden, AReleaseAfterLocalStoresPaysTheLocalStoreFence) {
  RunSpec s = golden_spec(2, 4000, 1);
  s.machine.acquire_us = 0.6;
  s.machine.release_fence_share = 0.5;
  // Local copy: 4000 B at the 1 GB/s cap (1 to 5), the fence 0.3, the flag 1: 7.3.
  EXPECT_DOUBLE_EQ(time_of<CopyThenRelease<false>>(s), 1 + 4 + 0.3 + 1);
  s.machine.local_store_fence_us = 0.2;
  EXPECT_DOUBLE_EQ(time_of<CopyThenRelease<false>>(s), 1 + 4 + 0.3 + 0.2 + 1);
  // To the peer: the store lands 1 us after its issue, then the fence, then the flag; no local
  // store to acknowledge.
  EXPECT_DOUBLE_EQ(time_of<CopyThenRelease<true>>(s), 1 + 4 + 1 + 0.3 + 1);
  // A barrier's releases follow no data verb: the key does not move it (AReleaseFencesOnce...).
  RunSpec b = fenced_barrier();
  b.machine.local_store_fence_us = 0.2;
  EXPECT_DOUBLE_EQ(run(b).time_us, 1 + 0.3 + 1 + 0.3);
}

// Every rank's block advances its epoch counter twice; nothing else.
struct TwoAdvances {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs&) {
    ctx.advance(pad::counter(5, 0));
    ctx.advance(pad::counter(5, 0));
  }
};

// An epoch advance reads and bumps the block's counter in its own memory: a local load's round
// trip each (local_load_us; the GPU's verb traces: 0.20-0.54 us).
TEST(Golden, AnEpochAdvanceIsALocalLoad) {
  RunSpec s = golden_spec(2, 16, 1);
  EXPECT_DOUBLE_EQ(time_of<TwoAdvances>(s), 1);
  s.machine.local_load_us = 0.25;
  EXPECT_DOUBLE_EQ(time_of<TwoAdvances>(s), 1 + 2 * 0.25);
}

TEST(Golden, ReleaseWaitsForStoresToLand) {
  // Posted store: 4000 B at the 1 GB/s block cap (4 us), lands 1 us later.
  // Relaxed: the flag leaves at 1 + 4 and lands at 6, with the store (kernel end flushes it): 6.
  EXPECT_DOUBLE_EQ(time_of<StoreThenSignal<MemOrder::kRelaxed>>(golden_spec(2, 4000, 1)), 1 + 4 + 1);
  // Release: the flag leaves only when the store has landed (6), and lands at 7.
  EXPECT_DOUBLE_EQ(time_of<StoreThenSignal<MemOrder::kRelease>>(golden_spec(2, 4000, 1)), 1 + 4 + 1 + 1);
}

TEST(Golden, OneShotAllReduce) {
  // ld_reduce on 2 ranks, 1 block, 2000 B: launch 1; start barrier: flag 1; reduce loads 2000 B
  // from each of 2 sources (local and remote) under the 1 GB/s cap over 4000 B loaded: 4 us,
  // plus the 2 us round trip; end barrier: flag 1. Total 1 + 1 + 4 + 2 + 1 = 9.
  RunSpec s = golden_spec(2, 2000, 1);
  EXPECT_DOUBLE_EQ(run(s).time_us, 9);
}

// Every rank reduces two local sources (its `in`, twice) into its `out`, or copies `in` to `out`.
template <bool kReduce>
struct LocalReduce {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    const T* srcs[2] = {static_cast<const T*>(a.in), static_cast<const T*>(a.in)};
    if constexpr (kReduce)
      ctx.template reduce<T>(static_cast<T*>(a.out), srcs, 2, a.count, a.op);
    else
      ctx.copy(a.out, a.in, a.count * sizeof(T));
  }
};

// A block's reduce rate (block_reduce_GBps) is of sources in its GPU's memory: with a source across
// NVLink the reduce loads at block_GBps, as a copy's loads (verbs.cpp). On tiny at 2 GB/s: the
// local reduce's 4000 B loaded in 2 us, not 4; one_shot's (a peer's source) still 9 us in all.
TEST(Golden, AReduceRateIsOfSourcesInTheGpusOwnMemory) {
  RunSpec s = golden_spec(2, 2000, 1);
  s.machine.block_reduce_GBps = 2;
  EXPECT_DOUBLE_EQ(time_of<LocalReduce<true>>(s), 1 + 2);
  EXPECT_DOUBLE_EQ(run(s).time_us, 9);
  // A team's peers share its GPU: one_shot's reduce there runs at the reduce rate (2 us, not 4).
  s.machine.team = 1;
  s.machine.gpus = 1;
  EXPECT_DOUBLE_EQ(time_of<LocalReduce<true>>(s), 1 + 2);
  EXPECT_LT(run(s).time_us, 9 - 1.5);
}

// A reduce or copy of local sources only waits local_load_us before its bytes land (verbs.cpp,
// transfers.cpp: its stores wait for its loads); a remote source pays load_rtt_us instead;
// ll_poll_us (the packet spin's) is not this key.
TEST(Golden, ALocalReduceWaitsALocalLoadRoundTrip) {
  RunSpec s = golden_spec(2, 2000, 1);
  // 2000 B from each of 2 local sources under the 1 GB/s cap over 4000 B loaded: 4 us.
  EXPECT_DOUBLE_EQ(time_of<LocalReduce<true>>(s), 1 + 4);
  s.machine.ll_poll_us = 0.5;
  EXPECT_DOUBLE_EQ(time_of<LocalReduce<true>>(s), 1 + 4);
  s.machine.local_load_us = 0.25;
  EXPECT_DOUBLE_EQ(time_of<LocalReduce<true>>(s), 1 + 4 + 0.25);
  // one_shot's reduce loads from a peer: its 2 us round trip, as in OneShotAllReduce (9), and its
  // two epoch advances (its barriers') a local load each (verbs.cpp, advance).
  EXPECT_DOUBLE_EQ(run(s).time_us, 9 + 2 * 0.25);
  // A local copy: 2000 B at the 1 GB/s cap and its loads' round trip.
  EXPECT_DOUBLE_EQ(time_of<LocalReduce<false>>(s), 1 + 2 + 0.25);
  s.machine.local_load_us = 0;
  EXPECT_DOUBLE_EQ(time_of<LocalReduce<false>>(s), 1 + 2);
}

// Flagged packets: rank 0 (and rank 2 when kTwo) put_ll `bytes` into its slot of rank 1's scratch
// with epoch 1; rank 1 reduce_lls the slots received.
template <bool kTwo>
struct PutLlThenReduceLl {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    const std::size_t bytes = a.count * sizeof(T), pb = ll_bytes(bytes);
    char* scratch = static_cast<char*>(a.scratch);
    const int r = ctx.rank();
    if (r == 0 || (kTwo && r == 2)) {
      void* dst = ctx.peer(scratch + (r == 0 ? 0 : pb), 1);
      ctx.put_ll(&dst, &a.in, 1, bytes, 1);
    } else if (r == 1) {
      const void* srcs[2] = {scratch, scratch + pb};
      ctx.template reduce_ll<T>(static_cast<T*>(a.out), srcs, kTwo ? 2 : 1, a.count, 1, a.op);
    }
  }
};

TEST(Golden, PutLlThenReduceLl) {
  RunSpec s = golden_spec(2, 4000, 1);
  s.algo = &find_algo("all_reduce.one_shot_ll");  // for its scratch
  // 1 (launch) + 8000 packet bytes (twice the data) at the 1 GB/s block cap (8) + 1 (store
  // latency: the packets land at 10) + the local read of the packets: per byte of result
  // 2 packet bytes read at half weight on the 8 GB/s HBM + 1 byte stored at half weight,
  // 4000 B x 1.5 / 8 GB/s = 0.75. No flag, no barrier.
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceLl<false>>(s), 1 + 8 + 1 + 0.75);
  // Two senders (ranks 0 and 2) into rank 1: both land at 10 (1 GB/s each, rank 1's 4 GB/s
  // ingress is not full); the reduce reads two packet buffers: 4000 x 2.5 / 8 GB/s = 1.25.
  s.world = 3;
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceLl<true>>(s), 1 + 8 + 1 + 1.25);
  // Block cap lifted to 4 GB/s: the two 8000-byte packet flows now share rank 1's 4 GB/s
  // ingress at 2 GB/s each (4 us), land at 1 + 4 + 1 = 6.
  s.machine.block_GBps = 4;
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceLl<true>>(s), 1 + 4 + 1 + 1.25);
  // The same with data: real packets in the heap, the same time. Ranks 0 and 2 write no
  // output, so this run's output is not the reference's and only its time is compared here.
  s.timing_only = false;
  EXPECT_DOUBLE_EQ(run_program<PutLlThenReduceLl<true>>(s).time_us, 1 + 4 + 1 + 1.25);
  // A put_ll's packets wait for their local source's loads, as a copy's stores do: local_load_us
  // (0.25) before they land.
  s.timing_only = true;
  s.machine.local_load_us = 0.25;
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceLl<true>>(s), 1 + 4 + 0.25 + 1 + 1.25);
}

// reduce_ll's plain source: each of two ranks puts its input as packets into the other's scratch
// and reduces, in rank order, the packets received with its own input as the plain source: read as
// data with no wait, 1 byte per byte of result where a packet source reads 2.
struct PutLlThenReduceWithPlain {
  template <class T, class Ctx>
  static void run(Ctx& ctx, const CollArgs& a) {
    const std::size_t bytes = a.count * sizeof(T);
    const int me = ctx.rank();
    void* dst = ctx.peer(a.scratch, 1 - me);
    ctx.put_ll(&dst, &a.in, 1, bytes, 1);
    const void* srcs[2];
    srcs[me] = a.in;
    srcs[1 - me] = a.scratch;
    ctx.template reduce_ll<T>(static_cast<T*>(a.out), srcs, 2, a.count, 1, a.op, /*plain=*/me);
  }
};

TEST(Golden, ReduceLlPlainSourceIsReadNotWaitedFor) {
  RunSpec s = golden_spec(2, 4000, 1);
  s.algo = &find_algo("all_reduce.one_shot_ll");
  // The packets land at 1 + 8 + 1 as in PutLlThenReduceLl; the read: per byte of result 2 packet
  // bytes and 1 plain byte at half weight on the 8 GB/s HBM, 1 byte stored at half weight:
  // 4000 B x 2 / 8 GB/s = 1.
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceWithPlain>(s), 1 + 8 + 1 + 1);
  // ll_read_GBps 4: 3 bytes read per byte of result, 12000 B at 4 GB/s.
  s.machine.ll_read_GBps = 4;
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceWithPlain>(s), 1 + 8 + 1 + 3);
  // With data: the same time, and every rank's output is the all-reduce of the inputs.
  s.timing_only = false;
  const RunResult r = run_program<PutLlThenReduceWithPlain>(s);
  EXPECT_DOUBLE_EQ(r.time_us, 1 + 8 + 1 + 3);
  EXPECT_GE(r.max_rel_err, 0);
  EXPECT_LE(r.max_rel_err, r.err_bound);
}

// The flagged-packet keys (packets.cpp). ll_wire_bytes: a remote packet byte occupies
// ll_wire_bytes / 8 link bytes; ll_poll_us: a reduce_ll that waited starts its reduction that long
// after the last packet landed.
TEST(Golden, LlWireBytesChargeTheLinkNotTheBlock) {
  RunSpec s = golden_spec(2, 4000, 1);
  s.algo = &find_algo("all_reduce.one_shot_ll");
  // One sender at the 1 GB/s block cap: 16-byte packets on the wire use 2 GB/s of the 4 GB/s
  // egress, so the block cap still binds: the time of PutLlThenReduceLl above.
  s.machine.ll_wire_bytes = 16;
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceLl<false>>(s), 1 + 8 + 1 + 0.75);
  // Two senders, block cap 4 GB/s: each flow's packet byte is 2 link bytes, so the two share rank
  // 1's 4 GB/s ingress at 1 GB/s of packets each: 8000 B in 8 us (2 GB/s each with 8-byte wire
  // packets, 4 us), land at 1 + 8 + 1.
  s.world = 3;
  s.machine.block_GBps = 4;
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceLl<true>>(s), 1 + 8 + 1 + 1.25);
  s.machine.ll_wire_bytes = 8;
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceLl<true>>(s), 1 + 4 + 1 + 1.25);
}

TEST(Golden, LlPollIsPaidOnceByAReduceThatWaited) {
  RunSpec s = golden_spec(2, 4000, 1);
  s.algo = &find_algo("all_reduce.one_shot_ll");
  s.machine.ll_poll_us = 0.5;
  // The reduce waits from 1 to 10 (the packets land), sees them 0.5 later, then reads 0.75.
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceLl<false>>(s), 1 + 8 + 1 + 0.5 + 0.75);
  // With data: the same time.
  s.timing_only = false;
  EXPECT_DOUBLE_EQ(run_program<PutLlThenReduceLl<false>>(s).time_us, 1 + 8 + 1 + 0.5 + 0.75);
  // Many blocks polling at once, with data: each reduces its own packets (the wait for the poll
  // comes before the packets are read, so no block's data is another's).
  RunSpec a = golden_spec(3, 3 * 16 * 1024, 8);
  a.algo = &find_algo("all_reduce.one_shot_ll");
  a.machine.ll_poll_us = 0.5;
  a.timing_only = false;
  const RunResult r = run_program<StLlReduceT<false>>(a);
  EXPECT_GE(r.max_rel_err, 0);
  EXPECT_LE(r.max_rel_err, r.err_bound);
}

// ll_read_GBps: a block reads packets at most this fast in reduce_ll, 2 n packet bytes per byte of
// result (n sources). Without it the read is the HBM's: 0.75 / 1.25 us above.
TEST(Golden, LlReadCapsABlocksPacketReads) {
  RunSpec s = golden_spec(2, 4000, 1);
  s.algo = &find_algo("all_reduce.one_shot_ll");
  s.machine.ll_read_GBps = 4;
  // One source: 8000 packet bytes at 4 GB/s, 2 us (the HBM alone would take 0.75).
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceLl<false>>(s), 1 + 8 + 1 + 2);
  // Two sources, block cap 4 GB/s (they land at 6): 16000 packet bytes at 4 GB/s, 4 us.
  s.world = 3;
  s.machine.block_GBps = 4;
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceLl<true>>(s), 1 + 4 + 1 + 4);
  // With data: the same time.
  s.timing_only = false;
  EXPECT_DOUBLE_EQ(run_program<PutLlThenReduceLl<true>>(s).time_us, 1 + 4 + 1 + 4);
  // A cap above the HBM's rate does not bind.
  s.machine.ll_read_GBps = 100;
  EXPECT_DOUBLE_EQ(time_of<PutLlThenReduceLl<true>>(s), 1 + 4 + 1 + 1.25);
}

// The data the packets carry: the full exchange of the same verbs (every rank puts to every rank,
// itself included, and reduces all the buffers received) is a whole all-reduce, so its output is
// checked against the reference; and with data it takes the time it takes without.
TEST(Golden, PutLlThenReduceLlCarriesTheData) {
  RunSpec s = golden_spec(3, 4000, 1);
  s.algo = &find_algo("all_reduce.one_shot_ll");
  const double timing_only = time_of<StLlReduceT<false>>(s);
  s.timing_only = false;
  const RunResult r = run_program<StLlReduceT<false>>(s);
  EXPECT_GE(r.max_rel_err, 0);
  EXPECT_LE(r.max_rel_err, r.err_bound);
  EXPECT_DOUBLE_EQ(r.time_us, timing_only);
}

}  // namespace
}  // namespace symm::sim
