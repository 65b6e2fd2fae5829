// The commands' in-process team (bench, the fused bench, calibrate with --world N): N ranks of
// this process on the visible GPUs (team.h places them), each in its own thread with its own
// Runtime, the same per-rank code as one process per GPU runs.
#pragma once

#include <cstddef>
#include <functional>

#include "backends/cuda/runtime.h"

namespace symm::cuda {

// Sets up every rank's memory (rank_memory.h, `heap_bytes` each) and every device program's
// kernel, then runs rank_main(rt) on one thread per rank and returns the largest return value.
// The first rank that throws stops the others (their meetings throw, their device waits are
// bounded) and its error, naming the rank, is rethrown once all have ended; a rank thread that
// does not end within the stop bound after it (a CUDA call that never returns) ends the process
// with a line naming it (exit 1). Memory is freed when every rank is done, and leaked after a
// failure (a stream may still be stuck on a flag; the process is about to exit).
int run_in_process(int world, std::size_t heap_bytes, unsigned long long timeout_cycles,
                   const std::function<int(Runtime&)>& rank_main);

// "# in-process team: 4 ranks on 1 GPU(s) (NVIDIA H200), ..." for the commands' logs.
void print_team_header(const Runtime& rt);

}  // namespace symm::cuda
