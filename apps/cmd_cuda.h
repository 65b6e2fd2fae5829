// Sub-commands that need the CUDA backend, implemented in apps/cmd_cuda.cpp (built only
// when CMake found nvcc; SYMM_HAVE_CUDA is defined then). Each parses its own options with
// Boost.Program_options, prints --help, returns the process exit code, and reports errors as
// one line on stderr (symm::Error) with a non-zero exit, never a crash.
#pragma once

#include <string>

namespace symm::apps {

// symmcoll bench --backend cuda --op all_reduce --algo one_shot,two_shot --dtype bf16
//                --sizes 4K:256M [--mode graph|eager|both] [--iters N] [--csv out.csv] ...
// argv[0] is "bench".
int cmd_bench_cuda(int argc, char** argv);

// The fused-operation bench (--op ag_mm,mm_rs), apps/cmd_cuda_fused.cpp; cmd_bench_cuda hands
// over to it when names_fused_op(argv) (apps/cli.h) says --op names one.
int cmd_bench_fused_cuda(int argc, char** argv);

// --world N of the CUDA commands (bench, the fused bench, calibrate): an in-process team of N
// ranks (backends/cuda/team.h). Refused in one line (kInvalidArgument) outside 2..8 or under a
// launcher; then CUDA_MODULE_LOADING=EAGER unless the user set it (before any CUDA call: every
// module loaded up front, so no kernel's first launch synchronizes the context while a peer's
// kernel spins for it). `command` names the command in the refusals.
void prepare_team(int world, const std::string& command);

// symmcoll gemm-bench [--shapes fused] [--dtype bf16,fp16] [--out rows.csv] ...: our tile GEMM
// beside cuBLASLt on one GPU (apps/cmd_cuda_gemm.cpp, apps/harness/cuda/gemm_bench.h).
// argv[0] is "gemm-bench".
int cmd_gemm_bench_cuda(int argc, char** argv);

// symmcoll launch -n N -- <symmcoll command ...>: starts N ranks on this host.
// argv[0] is "launch".
int cmd_launch(int argc, char** argv);

}  // namespace symm::apps
