// Running device programs that are not in the registry (tests: deliberately broken variants).
#pragma once

#include <functional>
#include <vector>

#include "backends/sim/ctx.h"
#include "backends/sim/sim.h"
#include "backends/sim/streams.h"
#include "core/dispatch.h"

namespace symm::sim {

// A timing-only spec whose sizes come from all_reduce.one_shot (in = out = bytes), for tests
// that run their own programs (detail::run_with) on machine `m`.
inline RunSpec timing_spec(const Machine& m, int world, std::size_t bytes, int blocks) {
  RunSpec s;
  s.machine = m;
  s.world = world;
  s.algo = &find_algo("all_reduce.one_shot");
  s.bytes = bytes;
  s.blocks = blocks;
  s.timing_only = true;
  return s;
}

namespace detail {
// The engine behind run(): spec.algo supplies op, sizes and limits; `fn` is what runs.
// blocks_per_call non-empty: call c runs on blocks_per_call[c] blocks (spec.calls and
// spec.blocks are ignored); otherwise spec.calls calls on spec.blocks (0: the default).
// plan != nullptr: run that host plan instead (fn unused).
RunResult run_with(const RunSpec& spec, ProgramFn fn, const std::vector<int>& blocks_per_call = {},
                   PlanFn plan = nullptr);

// The engine behind run_fused() (fused.cpp): `plan` enqueues one rank's call.
using FusedPlanFn = std::function<void(SimHost&, const FusedArgs&)>;
// What a baseline (fused_baselines()) needs of the harness beyond a fused plan's buffers.
struct FusedHarness {
  bool gathered_input = false;   // ag_mm matmul alone: every rank's `work` holds all of A at the start
  bool check_partial = false;    // mm_rs matmul alone: check each rank's `partial` against its own
                                 // A_r @ B_r (one rounding), C is not written
  std::size_t coll_scratch = 0;  // bytes of symmetric scratch for FusedArgs::coll_scratch
};
RunResult run_fused_with(const FusedRunSpec& spec, const FusedPlanFn& plan, const FusedHarness& hx = {});

template <class Program, class T>
void invoke(BlockCtx& ctx, const CollArgs& a) {
  Program::template run<T>(ctx, a);
}
template <class Plan, class T>
void invoke_plan(SimHost& host, const PlanArgs& a) {
  // The host verbs' contract, the end of the call included (core/plan.h).
  checked_call(host, [&](auto& checked) { Plan::template run<T>(checked, a); });
}
}  // namespace detail

// Runs `Program` in place of spec.algo's own program, with everything else as run() does.
template <class Program>
RunResult run_program(const RunSpec& spec) {
  return with_type(spec.dtype, [&]<class T>() { return detail::run_with(spec, &detail::invoke<Program, T>); });
}

// Runs host plan `Plan` in place of spec.algo's own (which must be a plan of the same op).
template <class Plan>
RunResult run_plan(const RunSpec& spec) {
  return with_type(spec.dtype,
                   [&]<class T>() { return detail::run_with(spec, nullptr, {}, &detail::invoke_plan<Plan, T>); });
}

// Runs fused plan `Plan` (core/fused.h) in place of spec.algo's own (which must be of the same op).
template <class Plan>
RunResult run_fused_plan(const FusedRunSpec& spec) {
  return with_type(spec.dtype, [&]<class T>() {
    return detail::run_fused_with(spec, [](SimHost& h, const FusedArgs& f) {
      // The host verbs' contract, the end of the call included (core/plan.h).
      checked_call(h, [&](auto& checked) { Plan::template run<T>(checked, f); });
    });
  });
}

// Back-to-back calls of spec.algo's own program on the same heap and signal pads, call c on
// blocks_per_call[c] blocks (RunSpec has one block count for every call). Every call is
// checked and the last one timed, as in run().
inline RunResult run_calls(const RunSpec& spec, const std::vector<int>& blocks_per_call) {
  SYMM_REQUIRE(spec.algo, ErrorCode::kInvalidArgument, "no algorithm given");
  SYMM_REQUIRE(!blocks_per_call.empty(), ErrorCode::kInvalidArgument, "no calls given");
  if (spec.algo->plan)
    return with_plan(*spec.algo, [&]<class P>() {
      return with_type(spec.dtype, [&]<class T>() {
        return detail::run_with(spec, nullptr, blocks_per_call, &detail::invoke_plan<P, T>);
      });
    });
  return with_program(*spec.algo, [&]<class P>() {
    return with_type(spec.dtype,
                     [&]<class T>() { return detail::run_with(spec, &detail::invoke<P, T>, blocks_per_call); });
  });
}

}  // namespace symm::sim
