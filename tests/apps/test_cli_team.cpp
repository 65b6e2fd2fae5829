// --world N of the CUDA commands (an in-process team, backends/cuda/team.h) as users meet it: bad
// values and mixing it with `launch` are one-line errors before any GPU is touched (so these run
// on hosts without one), and --help explains it.
#include <gtest/gtest.h>

#include "tests/apps/cli_run.h"

namespace {

using symm_test::expect_one_line_error;
using symm_test::Out;
using symm_test::symmcoll;

bool has_cuda() { return symmcoll("launch --help").out.find("no CUDA backend") == std::string::npos; }

TEST(CliTeam, BadWorldsAreOneLineErrors) {
  if (!has_cuda()) GTEST_SKIP() << "this build has no CUDA";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"bench --backend cuda --world 1 --sizes 4K", "--world 1 is outside 2..8"},
           {"bench --backend cuda --world 9 --sizes 4K", "--world 9 is outside 2..8"},
           {"bench --backend cuda --world 0 --sizes 4K", "--world 0 is outside 2..8"},
           {"bench --backend cuda --world -2 --sizes 4K", "--world -2 is outside 2..8"},
           {"bench --backend cuda --op ag_mm,mm_rs --shape 8b --world 1", "--world 1 is outside 2..8"},
           {"calibrate --backend cuda --world 9 --csv x.csv", "--world 9 is outside 2..8"},
           {"bench --backend cuda --world two", "the argument ('two') for option '--world' is invalid"},
       })
    expect_one_line_error(symmcoll(args), args, message);
}

// Knobs that mean nothing for what the CUDA bench runs are refused before any GPU is looked for,
// as the simulator's commands refuse them.
TEST(CliTeam, CudaBenchKnobsThatMeanNothingAreRefused) {
  if (!has_cuda()) GTEST_SKIP() << "this build has no CUDA";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"bench --backend cuda --op all_reduce --algo one_shot --streams 2 --sizes 4K",
            "--streams 2 means nothing here: no host plan runs"},
           {"bench --backend cuda --op all_gather --algo push --chunk-bytes 4M --sizes 4K",
            "--chunk-bytes means nothing here: no host plan runs"},
           {"bench --backend cuda --op all_gather --algo ce --sm-percent 30 --sizes 4K",
            "--sm-percent means nothing here: all_gather.ce_sm_st (ce_sm) does not run"},
           {"bench --backend cuda --op all_gather --reduce max --sizes 4K",
            "--reduce max means nothing here: no op that reduces runs"},
       })
    expect_one_line_error(symmcoll(args), args, message);
}

TEST(CliTeam, WorldAndLaunchAreOneOrTheOther) {
  if (!has_cuda()) GTEST_SKIP() << "this build has no CUDA";
  const std::string launch = "launch -n 2 -- symmcoll bench --backend cuda --world 2 --sizes 4K";
  expect_one_line_error(symmcoll(launch), launch,
                        "launch -n 2 starts one process per rank; the command's --world runs the ranks in one "
                        "process: use one or the other");
  // A rank of a launch (the launcher's variables) given --world too.
  const Out r = symm_test::run_command("RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 " + std::string(SYMMCOLL_BIN) +
                                       " bench --backend cuda --world 2 --sizes 4K");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--world 2 runs the ranks as threads of one process, but this process is a rank of a "
                       "launch (WORLD_SIZE=2): use one or the other"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(symm_test::lines(r.out), 1) << r.out;
}

TEST(CliTeam, HelpExplainsTheInProcessTeam) {
  if (!has_cuda()) GTEST_SKIP() << "this build has no CUDA";
  const Out bench = symmcoll("bench --backend cuda --help");
  EXPECT_EQ(bench.code, 0);
  for (const char* s : {"symmcoll bench --backend cuda --world N", "no nccl rows", "h200x1", "capped to what fits"})
    EXPECT_NE(bench.out.find(s), std::string::npos) << s << "\n" << bench.out;
  const Out fused = symmcoll("bench --backend cuda --op ag_mm --help");
  EXPECT_NE(fused.out.find("--world N (2..8, without launch)"), std::string::npos) << fused.out;
  const Out calib = symmcoll("calibrate --help");
  EXPECT_NE(calib.out.find("--world N"), std::string::npos) << calib.out;
  const Out launch = symmcoll("launch --help");
  EXPECT_NE(launch.out.find("--world N instead"), std::string::npos) << launch.out;
  const Out top = symmcoll("--help");
  EXPECT_NE(top.out.find("--world N: N ranks in one process"), std::string::npos) << top.out;
}

}  // namespace

namespace {

// A simulated sweep of every algorithm on a one-GPU team machine skips the multicast program (no
// switch between ranks of one GPU) with a note, as it skips other combinations, and runs the rest.
TEST(CliTeam, ASweepOnATeamMachineSkipsWhatItCannotRun) {
  const Out o = symmcoll("sweep --machine h100x1 --world 4 --op all_reduce --sizes 64K --timing-only");
  EXPECT_EQ(o.code, 0) << o.out;
  EXPECT_NE(o.out.find("skip all_reduce.mc_ld_reduce_mc_st"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("5 rows, 1 skipped"), std::string::npos) << o.out;
}

}  // namespace
