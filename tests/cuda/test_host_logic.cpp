// Host-side decisions of backends/cuda that need no GPU: rank environment, NCCL-id exchange,
// the multicast interlock, launch plans, heap layout, wait-timeout messages, machine names, launcher.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "backends/cuda/host_logic.h"
#include "backends/cuda/team.h"
#include "core/algos/ll_layout.h"
#include "core/signal_pad.h"

namespace symm::cuda {
namespace {

GetEnv env_of(std::map<std::string, std::string> m) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(m));
  return [shared](const char* k) -> const char* {
    auto it = shared->find(k);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

ErrorCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return ErrorCode::kInternal;  // "did not throw"
}

TEST(RankEnv, DefaultsToOneProcess) {
  const RankEnv r = rank_env(env_of({}));
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.world, 1);
}

TEST(RankEnv, ReadsTorchrunAndOpenMpi) {
  RankEnv r = rank_env(env_of({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"SYMM_RUN_DIR", "/x"}}));
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(r.world, 4);
  EXPECT_EQ(r.local_rank, 2);
  EXPECT_EQ(r.run_dir, "/x");
  r = rank_env(
      env_of({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}));
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.world, 2);
}

TEST(RankEnv, RejectsInconsistentValues) {
  EXPECT_EQ(code_of([] { rank_env(env_of({{"RANK", "4"}, {"WORLD_SIZE", "4"}})); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([] { rank_env(env_of({{"RANK", "x"}, {"WORLD_SIZE", "4"}})); }), ErrorCode::kInvalidArgument);
}

// The lockstep of a team's enqueues: its modes, a bad value refused naming the variable, and on
// wherever some GPU of an in-process team holds two ranks (every rank alike).
TEST(TeamLockstep, ModesAndWhereItRuns) {
  EXPECT_EQ(team_lockstep_mode(env_of({})), TeamLockstep::kMeets);
  EXPECT_EQ(team_lockstep_mode(env_of({{"SYMM_DEBUG_TEAM_LOCKSTEP", "1"}})), TeamLockstep::kMeets);
  EXPECT_EQ(team_lockstep_mode(env_of({{"SYMM_DEBUG_TEAM_LOCKSTEP", "0"}})), TeamLockstep::kOff);
  EXPECT_EQ(team_lockstep_mode(env_of({{"SYMM_DEBUG_TEAM_LOCKSTEP", "items"}})), TeamLockstep::kItems);
  try {
    team_lockstep_mode(env_of({{"SYMM_DEBUG_TEAM_LOCKSTEP", "off"}}));
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("SYMM_DEBUG_TEAM_LOCKSTEP='off'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(team_lockstep_on(TeamLockstep::kMeets, true, 2));
  EXPECT_TRUE(team_lockstep_on(TeamLockstep::kItems, true, 8));
  EXPECT_FALSE(team_lockstep_on(TeamLockstep::kOff, true, 8));
  EXPECT_FALSE(team_lockstep_on(TeamLockstep::kMeets, true, 1));   // a GPU per rank
  EXPECT_FALSE(team_lockstep_on(TeamLockstep::kMeets, false, 2));  // one process per GPU
  // 3 ranks over 2 GPUs: team_gpu_ranks is 2 on every rank, the one alone on its GPU too.
  EXPECT_EQ(team_max_ranks_per_gpu(3, 2), 2);
  EXPECT_TRUE(team_lockstep_on(TeamLockstep::kMeets, true, team_max_ranks_per_gpu(3, 2)));
}

TEST(Blob, PublishThenAwait) {
  char dir[] = "/tmp/symm-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    publish_blob(dir, "id", std::string("0123456789abcdef"));
  });
  EXPECT_EQ(await_blob(dir, "id", 16, 5.0), "0123456789abcdef");
  late.join();
  EXPECT_EQ(code_of([&] { await_blob(dir, "missing", 16, 0.05); }), ErrorCode::kTimeout);
  std::remove((std::string(dir) + "/id").c_str());
  rmdir(dir);
}

const AlgoInfo& multimem() { return find_algo(Op::kAllReduce, "multimem"); }

TEST(Multicast, EachSafetyVariableRefuses) {
  for (auto [k, v] : {std::pair{"NCCL_NVLS_ENABLE", "0"}, std::pair{"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"},
                      std::pair{"NVSHMEM_DISABLE_NVLS", "1"}}) {
    const auto why = multicast_refusal(multimem(), env_of({{k, v}}), true);
    ASSERT_TRUE(why.has_value()) << k;
    EXPECT_NE(why->find(k), std::string::npos) << *why;
  }
}

TEST(Multicast, NoPlatformSupportRefuses) {
  const auto why = multicast_refusal(multimem(), env_of({}), false);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("NCCL set up none"), std::string::npos);
  EXPECT_NE(why->find("simulator"), std::string::npos);
}

// The variables come first: while one is set, NCCL is not even asked to set up NVLS.
TEST(Multicast, VariablesSkipAskingNccl) {
  static char heap_mc[1];
  for (auto [k, v] : {std::pair{"NCCL_NVLS_ENABLE", "0"}, std::pair{"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"},
                      std::pair{"NVSHMEM_DISABLE_NVLS", "1"}}) {
    int asked = 0;
    EXPECT_EQ(multicast_base(env_of({{k, v}}), [&]() -> void* { return ++asked, heap_mc; }), nullptr) << k;
    EXPECT_EQ(asked, 0) << k;
    EXPECT_EQ(multicast_disabled_by(env_of({{k, v}})), std::string(k) + "=" + v);
  }
  int asked = 0;
  EXPECT_EQ(multicast_base(env_of({{"NCCL_NVLS_ENABLE", "1"}}), [&]() -> void* { return ++asked, heap_mc; }), heap_mc);
  EXPECT_EQ(asked, 1);
  // NCCL's answer decides where no variable is set: no address, no multicast.
  const void* got = multicast_base(env_of({}), []() -> void* { return nullptr; });
  EXPECT_EQ(got, nullptr);
  EXPECT_TRUE(multicast_refusal(multimem(), env_of({}), got != nullptr).has_value());
}

TEST(Multicast, AllowedOnlyWithSupportAndNoVariable) {
  EXPECT_FALSE(multicast_refusal(multimem(), env_of({{"NCCL_NVLS_ENABLE", "1"}}), true).has_value());
  EXPECT_FALSE(multicast_refusal(find_algo(Op::kAllReduce, "one_shot"), env_of({{"NCCL_NVLS_ENABLE", "0"}}), false));
}

TEST(Plan, DefaultsFollowTheRegistry) {
  const AlgoInfo& a = find_algo(Op::kAllReduce, "two_shot");
  const LaunchPlan p = plan_launch(a, DType::kBF16, 64u << 20, 4, 0, 0);
  EXPECT_EQ(p.blocks, a.default_blocks(64u << 20, 4));
  EXPECT_EQ(p.threads, kDefaultThreads);
}

TEST(Plan, SmallPiecesGetFewerThreads) {
  const AlgoInfo& a = find_algo(Op::kAllReduce, "one_shot");
  const LaunchPlan p = plan_launch(a, DType::kBF16, 4096, 4, 1, 0);  // 256 vectors, one block
  EXPECT_EQ(p.blocks, 1);
  EXPECT_EQ(p.threads, 256);
}

TEST(Plan, BadInputNamesTheValue) {
  const AlgoInfo& a = find_algo(Op::kAllReduce, "one_shot");
  try {
    plan_launch(a, DType::kBF16, 1000, 4, 0, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("bytes=1000"), std::string::npos);
  }
  EXPECT_EQ(code_of([&] { plan_launch(a, DType::kBF16, 4096, 4, a.block_limit + 1, 0); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { plan_launch(a, DType::kBF16, 4096, 4, 1, 100); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { plan_launch(a, DType::kBF16, 4096, 1, 1, 0); }), ErrorCode::kInvalidArgument);
  const AlgoInfo& push = find_algo(Op::kAllReduce, "one_shot_push");
  EXPECT_EQ(code_of([&] { plan_launch(push, DType::kBF16, 64u << 20, 4, 0, 0); }), ErrorCode::kUnsupported);
}

TEST(Heap, LayoutIsAlignedAndChecked) {
  const AlgoInfo& one = find_algo(Op::kAllReduce, "one_shot");
  const HeapLayout l = heap_layout(one, 4096, 4);
  const std::size_t r = fixed_scratch_bytes(4);
  EXPECT_EQ(r, 5 * BlockRegions::scratch_bytes(4));  // three LL programs, st_reduce and st_copy, a region each
  EXPECT_EQ(l.in, r);
  EXPECT_EQ(l.out, r + 4096u);
  EXPECT_EQ(l.total, r + 8192u);
  EXPECT_EQ(l.out % kHeapAlign, 0u);
  EXPECT_EQ(code_of([&] { check_heap(one, 4096, 4, l.total - 1); }), ErrorCode::kInvalidArgument);
  check_heap(one, 4096, 4, l.total);
}

// Fixed per-block regions: one per program whatever the size, disjoint from every in/out/scratch.
TEST(Heap, LlScratchIsFixedAndPrivate) {
  const int w = 4;
  std::vector<std::pair<std::size_t, std::size_t>> regions;
  for (const AlgoInfo& a : algorithms()) {
    if (!a.piece_bytes) continue;
    const HeapLayout s = heap_layout(a, 4096, w), b = heap_layout(a, 1u << 20, w);
    EXPECT_EQ(s.scratch, b.scratch) << a.id;
    EXPECT_EQ(s.scratch % kHeapAlign, 0u);
    EXPECT_LE(s.scratch + a.scratch_bytes(4096, w), fixed_scratch_bytes(w)) << a.id;
    regions.push_back({s.scratch, s.scratch + a.scratch_bytes(4096, w)});
  }
  ASSERT_EQ(regions.size(), 5u);
  std::sort(regions.begin(), regions.end());
  for (std::size_t i = 1; i < regions.size(); ++i) EXPECT_LE(regions[i - 1].second, regions[i].first);
  for (const AlgoInfo& a : algorithms())
    for (std::size_t bytes : {std::size_t(4096), std::size_t(1) << 20, std::size_t(256) << 20}) {
      const HeapLayout l = heap_layout(a, bytes, w);
      EXPECT_GE(l.in, fixed_scratch_bytes(w)) << a.id;
      if (!a.piece_bytes && a.scratch_bytes(bytes, w)) {
        EXPECT_GE(l.scratch, fixed_scratch_bytes(w)) << a.id;
      }
    }
}

TEST(Plan, LlBlockCountsFollowTheRegistry) {
  const AlgoInfo& a = find_algo(Op::kAllReduce, "one_shot_ll");
  EXPECT_EQ(plan_launch(a, DType::kBF16, 4096, 4, 0, 0).blocks, a.default_blocks(4096, 4));
  EXPECT_EQ(plan_launch(a, DType::kBF16, 1u << 20, 4, 0, 0).blocks, 64);  // 16 KiB per block at most
  EXPECT_EQ(code_of([&] { plan_launch(a, DType::kBF16, 2u << 20, 4, 0, 0); }), ErrorCode::kUnsupported);
  EXPECT_EQ(code_of([&] { plan_launch(a, DType::kBF16, 1u << 20, 4, 32, 0); }), ErrorCode::kInvalidArgument);
}

TEST(Timeout, PacketMessageNamesTheBuffer) {
  WaitError e{1, 3, 7, 0, 42, 41};
  e.kind = WaitError::kPackets;
  e.offset = 16u << 20;
  e.packet = 9;
  EXPECT_EQ(describe_wait_timeout(e),
            "rank 3 block 7 timed out waiting for packets at heap offset 16777216 (packet 9 of that buffer): "
            "expected epoch 42, saw 41");
}

// A host plan's flag awaited inside a kernel (the tile programs' chunk flags): named as the plan's
// watchdog names it, not as a block counter.
TEST(Timeout, AKernelsWaitOnAPlanFlagNamesChannelChunkAndRank) {
  const uint32_t slot = pad::plan_flag(pad::kPlanData, 8, 2);
  WaitError e{1, 1, 27, slot, 1, 0};
  EXPECT_EQ(describe_wait_timeout(e), "rank 1 block 27 timed out waiting on slot " + std::to_string(slot) + " (" +
                                          pad::describe_plan_slot(slot) + "): expected >= 1, saw 0");
  EXPECT_NE(pad::describe_plan_slot(slot).find("chunk 8, from rank 2"), std::string::npos);
}

TEST(Timeout, MessageNamesRankBlockSlotChannelAndPeer) {
  WaitError e{1, 2, 5, pad::flag(0, 5, 3), 7, 6};
  EXPECT_EQ(describe_wait_timeout(e), "rank 2 block 5 timed out waiting on slot " + std::to_string(pad::flag(0, 5, 3)) +
                                          " (channel 0, from rank 3): expected >= 7, saw 6");
}

// A host plan's stuck stream wait (plan_exec.cpp's watchdog): the slot named by the describer the
// simulator's deadlock report uses (pad::describe_plan_slot), channel, chunk and writer decoded.
TEST(Timeout, StuckPlanWaitNamesRankStreamAndTheSlotAsTheSimulatorDoes) {
  const uint32_t slot = pad::plan_flag(pad::kPlanData, 2, 3);
  const std::string m = describe_stuck_plan_wait(1, 2, slot, 1, "0", 4, 9);
  EXPECT_EQ(m, "rank 1 stream 2 timed out waiting on plan slot " + std::to_string(slot) +
                   " (channel 1, chunk 2, from rank 3): expected 1, saw 0 (wait 5 of the 9 enqueued since the last "
                   "drain)");
  EXPECT_NE(m.find(pad::describe_plan_slot(slot)), std::string::npos);
  // The entry handshake's flag (channel 0), and a flag whose value could not be read.
  const uint32_t ready = pad::plan_flag(pad::kPlanReady, 0, 7);
  EXPECT_EQ(describe_stuck_plan_wait(0, 0, ready, 1, "?", 0, 1),
            "rank 0 stream 0 timed out waiting on plan slot " + std::to_string(ready) +
                " (channel 0, chunk 0, from rank 7): expected 1, saw ? (wait 1 of the 1 enqueued since the last "
                "drain)");
}

TEST(Timeout, BoundsInSecondsAtTheDeviceClock) {
  const int h200_khz = 1'980'000;
  EXPECT_EQ(wait_timeout_cycles(env_of({{"SYMM_WAIT_TIMEOUT_CYCLES", "1000"}}), h200_khz), 1000u);
  // The default: a few seconds, whatever the clock.
  EXPECT_DOUBLE_EQ(wait_timeout_seconds(env_of({})), kDefaultWaitTimeoutS);
  EXPECT_GE(kDefaultWaitTimeoutS, 1.0);
  EXPECT_LE(kDefaultWaitTimeoutS, 5.0);
  EXPECT_EQ(wait_timeout_cycles(env_of({}), h200_khz), static_cast<unsigned long long>(kDefaultWaitTimeoutS * 1.98e9));
  EXPECT_EQ(wait_timeout_cycles(env_of({{"SYMM_WAIT_TIMEOUT_S", "0.5"}}), 1'000'000), 500'000'000u);
  EXPECT_EQ(code_of([] {
              wait_timeout_cycles(env_of({{"SYMM_WAIT_TIMEOUT_CYCLES", "0"}}), 1);
            }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([] {
              wait_timeout_seconds(env_of({{"SYMM_WAIT_TIMEOUT_S", "-1"}}));
            }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([] {
              wait_timeout_seconds(env_of({{"SYMM_WAIT_TIMEOUT_S", "2x"}}));
            }),
            ErrorCode::kInvalidArgument);
  // The host waits longer than any device wait, so a device report always comes first.
  EXPECT_DOUBLE_EQ(stream_timeout_seconds(env_of({}), 2.0), kDefaultStreamTimeoutS);
  EXPECT_DOUBLE_EQ(stream_timeout_seconds(env_of({}), 60.0), 240.0);
  EXPECT_DOUBLE_EQ(stream_timeout_seconds(env_of({{"SYMM_STREAM_TIMEOUT_S", "5"}}), 2.0), 5.0);
}

TEST(Testing, RankOverridesParse) {
  EXPECT_FALSE(test_rank_overrides(env_of({})).any());
  const TestRankOverrides t = test_rank_overrides(env_of({{"SYMM_TEST_RANK_ALGO", "1:one_shot_ll"},
                                                          {"SYMM_TEST_RANK_SIZE", "0:64K"},
                                                          {"SYMM_TEST_RANK_SKIP", "1"},
                                                          {"SYMM_TEST_RANK_KILL", "3"}}));
  EXPECT_EQ(t.algo_rank, 1);
  EXPECT_EQ(t.algo, "one_shot_ll");
  EXPECT_EQ(t.size_rank, 0);
  EXPECT_EQ(t.size, 64u << 10);
  EXPECT_EQ(t.skip_rank, 1);
  EXPECT_EQ(t.kill_rank, 3);
  for (auto [k, v] : {std::pair{"SYMM_TEST_RANK_ALGO", "one_shot_ll"}, std::pair{"SYMM_TEST_RANK_ALGO", "1:"},
                      std::pair{"SYMM_TEST_RANK_ALGO", "9:one_shot"}, std::pair{"SYMM_TEST_RANK_SIZE", "1:lots"},
                      std::pair{"SYMM_TEST_RANK_SKIP", "1:x"}, std::pair{"SYMM_TEST_RANK_KILL", "-1"}}) {
    try {
      test_rank_overrides(env_of({{k, v}}));
      ADD_FAILURE() << k << "=" << v << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(k), std::string::npos) << e.what();
    }
  }
}

TEST(Machine, NameFromDevice) {
  EXPECT_EQ(machine_name("NVIDIA H200", 4), "h200x4");
  EXPECT_EQ(machine_name("NVIDIA H100 80GB HBM3", 8), "h100x8");
  EXPECT_EQ(machine_name("Something", 2), "gpux2");
}

TEST(Launch, ResolvesSymmcollToThisProgram) {
  EXPECT_EQ(resolve_rank_command({"symmcoll", "bench"}, "/bin/me"), (std::vector<std::string>{"/bin/me", "bench"}));
  EXPECT_EQ(resolve_rank_command({"bench", "--x"}, "/bin/me"), (std::vector<std::string>{"/bin/me", "bench", "--x"}));
  EXPECT_EQ(resolve_rank_command({"/bin/true"}, "/bin/me"), (std::vector<std::string>{"/bin/true"}));
  EXPECT_EQ(code_of([] { resolve_rank_command({}, "/bin/me"); }), ErrorCode::kInvalidArgument);
}

TEST(Launch, PropagatesFailureAndStopsTheOthers) {
  EXPECT_EQ(launch_ranks(3, {"/bin/sh", "-c", "test \"$WORLD_SIZE\" = 3 && test -d \"$SYMM_RUN_DIR\""}), 0);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(launch_ranks(3, {"/bin/sh", "-c", "if [ \"$RANK\" = 1 ]; then exit 3; fi; exec sleep 30"}), 3);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  // Ranks that ignore SIGTERM (stuck in a driver call, say) are killed a second later.
  t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(launch_ranks(
                3, {"/bin/sh", "-c", "trap '' TERM; if [ \"$RANK\" = 2 ]; then sleep 0.2; exit 1; fi; exec sleep 30"}),
            1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2500));
  // A rank killed by a signal counts as failed (128 + signal).
  EXPECT_EQ(launch_ranks(2, {"/bin/sh", "-c", "if [ \"$RANK\" = 0 ]; then kill -9 $$; fi; exec sleep 30"}), 128 + 9);
}

}  // namespace
}  // namespace symm::cuda
