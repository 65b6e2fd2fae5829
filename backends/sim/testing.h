// Running device programs that are not in the registry (tests: deliberately broken variants).
#pragma once

#include "backends/sim/ctx.h"
#include "backends/sim/sim.h"
#include "core/dispatch.h"

namespace symm::sim {

namespace detail {
// The engine behind run(): spec.algo supplies op, sizes and limits; `fn` is what runs.
RunResult run_with(const RunSpec& spec, ProgramFn fn);

template <class Program, class T>
void invoke(Ctx& ctx, const CollArgs& a) {
  Program::template run<T>(ctx, a);
}
}  // namespace detail

// Runs `Program` in place of spec.algo's own program, with everything else as run() does.
template <class Program>
RunResult run_program(const RunSpec& spec) {
  return with_type(spec.dtype,
                   [&]<class T>() { return detail::run_with(spec, &detail::invoke<Program, T>); });
}

}  // namespace symm::sim
