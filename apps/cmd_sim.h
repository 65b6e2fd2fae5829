// Sub-commands that run on the simulator (or need no backend at all). Each takes the
// sub-command's own argv (argv[0] is its name), parses it with Boost.Program_options,
// returns the process exit code (apps/cli.h) and lets symm::Error / po::error propagate
// to main(), which turns them into one line on stderr.
#pragma once

namespace symm::apps {

int cmd_run(int argc, char** argv);    // one collective, predicted time + correctness check
int cmd_sweep(int argc, char** argv);  // sizes x algorithms -> CSV + table
int cmd_list(int argc, char** argv);   // the registry with its constraints

// The fused matmuls (--op ag_mm|mm_rs) on the simulator, apps/cmd_sim_fused.cpp: cmd_run and
// cmd_sweep hand over when names_fused_op(argv) (apps/cli.h) says --op names one.
int cmd_fused_sim(int argc, char** argv, bool sweep);

}  // namespace symm::apps
