// Entry points: symm::sim::run (and detail::run_with behind it) checks the arguments against
// the algorithm and the machine, runs one Simulator, and times it; and the output check each
// call's end triggers (every rank's `out` against symm::reference).
#include <algorithm>
#include <chrono>
#include <cstring>

#include "backends/sim/conv.h"
#include "backends/sim/simulator.h"
#include "backends/sim/testing.h"
#include "core/dispatch.h"
#include "core/reference.h"

namespace symm::sim {

// All ranks' outputs of one call (as each host saw them at its call's end) against
// symm::reference. all_reduce is elementwise, so it is checked a chunk at a time, the reference
// summed over ranks as each rank's inputs are drawn (reference_combine, in rank order): the
// float64 copies of 8 ranks x 1 MiB would otherwise dominate the run.
double Simulator::check_outputs(int call) {
  const Op op = spec_.algo->op;
  const CallCheck& cc = checks_[std::size_t(call)];
  std::vector<const uint8_t*> outs(static_cast<std::size_t>(world_));
  for (int r = 0; r < world_; ++r)
    outs[r] = cc.out.empty() || cc.out[r].empty() ? read_heap(r, out_off_, out_bytes_) : cc.out[r].data();
  const std::size_t n_in = in_bytes_ / dtype_size(spec_.dtype), n_out = out_bytes_ / dtype_size(spec_.dtype);
  // all_reduce and all_gather give every rank the same answer: a rank whose bytes equal rank
  // 0's has rank 0's error, so only differing ranks are converted and compared again.
  const bool same_answer = op == Op::kAllReduce || op == Op::kAllGather;
  double worst = 0;
  with_type(spec_.dtype, [&]<class T>() {
    // Rank r's input elements [i0, i0 + n): the caller's (RunSpec::user_in), or drawn again.
    auto inputs = [&](int r, std::size_t i0, std::size_t n, T* dst) {
      if (spec_.user_in.empty())
        draw_inputs<T>(input_stream(call, r), i0, n, dst);
      else
        std::memcpy(dst, static_cast<const T*>(spec_.user_in[std::size_t(r)]) + i0, n * sizeof(T));
    };
    std::vector<T> drawn;
    std::vector<double> got;
    // Every rank's output elements [o0, o0 + olen) against want(r).
    auto compare = [&](std::size_t o0, std::size_t olen, auto&& want) {
      const std::size_t obytes = olen * sizeof(T), oskip = o0 * sizeof(T);
      for (int r = 0; r < world_; ++r) {
        if (same_answer && r > 0 && std::memcmp(outs[r] + oskip, outs[0] + oskip, obytes) == 0) continue;
        got.resize(olen);
        const T* p = reinterpret_cast<const T*>(outs[r]) + o0;
        for (std::size_t i = 0; i < olen; ++i) got[i] = Conv<T>::load(p[i]);
        worst = std::max(worst, max_rel_err(got, want(r)));
      }
    };
    if (op == Op::kAllReduce) {
      constexpr std::size_t kChunk = std::size_t(1) << 12;  // even: chunks start on a hash pair
      std::vector<double> want;
      for (std::size_t c0 = 0; c0 < std::max(n_in, std::size_t(1)); c0 += kChunk) {
        const std::size_t len = std::min(kChunk, n_in - c0);
        drawn.resize(len);
        want.resize(len);
        for (int r = 0; r < world_; ++r) {
          inputs(r, c0, len, drawn.data());
          if (r == 0)
            for (std::size_t i = 0; i < len; ++i) want[i] = Conv<T>::load(drawn[i]);
          else if (spec_.op == ReduceOp::kSum)  // reference_combine's sum, in a loop that vectorises
            for (std::size_t i = 0; i < len; ++i) want[i] += double(Conv<T>::load(drawn[i]));
          else
            for (std::size_t i = 0; i < len; ++i)
              want[i] = reference_combine(spec_.op, want[i], double(Conv<T>::load(drawn[i])));
        }
        compare(c0, len, [&](int) -> const std::vector<double>& { return want; });
      }
      return;
    }
    std::vector<std::vector<double>> in(static_cast<std::size_t>(world_));
    drawn.resize(n_in);
    for (int r = 0; r < world_; ++r) {
      inputs(r, 0, n_in, drawn.data());
      in[r].resize(n_in);
      for (std::size_t i = 0; i < n_in; ++i) in[r][i] = Conv<T>::load(drawn[i]);
    }
    const auto want = reference(op, spec_.op, in);
    compare(0, n_out, [&](int r) -> const std::vector<double>& { return want[std::size_t(r)]; });
  });
  // The program's bytes to the caller, once its inputs are no longer needed (out may be in).
  for (std::size_t r = 0; r < spec_.user_out.size(); ++r) std::memcpy(spec_.user_out[r], outs[r], out_bytes_);
  return worst;
}

namespace detail {
RunResult run_with(const RunSpec& spec, ProgramFn fn, const std::vector<int>& blocks_per_call, PlanFn plan) {
  const Machine& m = spec.machine;
  SYMM_REQUIRE(spec.algo, ErrorCode::kInvalidArgument, "no algorithm given");
  SYMM_REQUIRE(m.gpus > 0, ErrorCode::kInvalidArgument, "no machine loaded (Machine::by_name)");
  SYMM_REQUIRE(spec.calls >= 1, ErrorCode::kInvalidArgument, "calls=" + std::to_string(spec.calls) + " must be >= 1");
  if (!spec.user_in.empty() || !spec.user_out.empty()) {
    SYMM_REQUIRE(!spec.timing_only && spec.calls == 1, ErrorCode::kInvalidArgument,
                 "your buffers (RunSpec::user_in / user_out) need one call with data");
    SYMM_REQUIRE(spec.user_in.size() == std::size_t(spec.world) &&
                     (spec.user_out.empty() || spec.user_out.size() == std::size_t(spec.world)),
                 ErrorCode::kInvalidArgument, "RunSpec::user_in / user_out need one buffer per rank");
    for (std::size_t r = 0; r < spec.user_in.size(); ++r)
      SYMM_REQUIRE(spec.user_in[r] && (spec.user_out.empty() || spec.user_out[r]), ErrorCode::kInvalidArgument,
                   "rank " + std::to_string(r) + ": null buffer");
  }
  std::vector<int> call_blocks = blocks_per_call;
  if (call_blocks.empty()) {
    const int blocks = spec.blocks > 0   ? spec.blocks
                       : spec.blocks < 0 ? spec.blocks
                                         : spec.algo->default_blocks(spec.bytes, spec.world);
    call_blocks.assign(std::size_t(spec.calls), blocks);
  }
  for (int blocks : call_blocks) {
    check_args(*spec.algo, spec.dtype, spec.bytes, spec.world, blocks, spec.op);
    if (blocks > m.sms)
      fail(ErrorCode::kUnsupported, "blocks=" + std::to_string(blocks) + " exceeds machine " + m.name + "'s " +
                                        std::to_string(m.sms) + " SMs (a program's blocks must all be resident)");
  }
  if (m.team && spec.algo->needs_multicast)
    fail(ErrorCode::kUnsupported, spec.algo->id + " needs NVSwitch multicast, and machine " + m.name +
                                      " is an in-process team (team = 1): its ranks share " + std::to_string(m.gpus) +
                                      " GPU(s) with no switch between them");
  if (spec.world > m.gpus && !spec.timing_only && !m.team)  // a team machine's ranks share its GPUs
    fail(ErrorCode::kUnsupported, "world=" + std::to_string(spec.world) + " exceeds machine " + m.name + "'s " +
                                      std::to_string(m.gpus) + " GPUs (use --timing-only to scale past it)");
  const auto wall0 = std::chrono::steady_clock::now();
  // A device program's eager calls, back to back, pipeline: the host issues the next launch while
  // the kernel runs (and programmatic dependent launch, the CUDA bench's default, overlaps the
  // launch's GPU side with the kernel before), so a call costs the host's launch interval
  // (launch_eager_us, what back-to-back empty kernels measure) or the kernel's time as in a
  // graph plus launch_eager_gap_us (calibrate's launch_busy rows), whichever is longer. Seen on
  // 2x H200 (bench_h200x2.csv): the 4K flagged-packet all-reduce 3.31 us eager (launch_eager_us
  // 3.32) and 2.76 in a graph; the two-shot all-reduce at 4M 20.1 eager, 18.9 graph. A program
  // that publishes with a release signal (a barrier) pays eager_release_us more (sim.h). Host
  // plans issue many operations a call and keep the serial model. The timeline (trace) shows the
  // graph launch.
  const bool pipelined = !spec.graph && fn != nullptr;
  RunResult res;
  bool released = false;
  {
    RunSpec as_graph = spec;
    as_graph.graph = true;
    Simulator sim(pipelined ? as_graph : spec, plan ? Workload::plan(plan) : Workload::program(fn),
                  std::move(call_blocks));
    res = sim.run();
    released = sim.released();
  }  // set-up and tear-down count too
  const int sharing = m.ranks_per_gpu(spec.world);
  // Programmatic dependent launch (RunSpec::pdl, the CUDA bench's default for device programs;
  // never in a team, sim.h): each of the back-to-back calls the bench times starts its launch
  // under the call before, so it ends pdl_saving_us sooner than one launched without it, but no
  // sooner than a launch after the call before (an empty kernel gains nothing: calibrate's
  // launch rows, launched so, measure launch_graph_us). In either mode: the eager model below
  // starts from the graph time. Host plans launch their kernels without it. A single call's
  // timeline (trace) shows the launch whole.
  if (fn != nullptr && spec.pdl && sharing <= 1 && !m.team)
    res.time_us = std::max(res.time_us - m.pdl_saving_us, std::min(res.time_us, m.launch_graph_us));
  if (pipelined && sharing > 1)  // a team's ranks on one GPU: their launches one after another (sim.h)
    res.time_us += (sharing - 1) * m.team_launch_us;
  else if (pipelined)
    res.time_us =
        std::max(res.time_us + m.launch_eager_gap_us + (released ? m.eager_release_us : 0.0), m.launch_eager_us);
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return res;
}
}  // namespace detail

RunResult run(const RunSpec& spec) {
  SYMM_REQUIRE(spec.algo, ErrorCode::kInvalidArgument, "no algorithm given");
  if (spec.algo->plan) return with_plan(*spec.algo, [&]<class P>() { return run_plan<P>(spec); });
  return with_program(*spec.algo, [&]<class P>() { return run_program<P>(spec); });
}

}  // namespace symm::sim
