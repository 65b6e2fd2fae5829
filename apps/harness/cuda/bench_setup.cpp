// `symmcoll bench --backend cuda` (bench.h) from the command's options to its ranks: which
// algorithms each op runs and how much symmetric heap a rank needs, resolved before any GPU is
// touched so that bad input fails fast and alike on every rank; then one process per GPU under a
// launcher, or an in-process team (team_run.h), each rank running the same bench_rank (bench.cpp).
#include <algorithm>
#include <string>
#include <vector>

#include "apps/harness/cuda/bench.h"
#include "apps/harness/cuda/bench_rank.h"
#include "backends/cuda/host_logic.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/runtime.h"
#include "backends/cuda/team.h"
#include "backends/cuda/team_run.h"
#include "core/heap_layout.h"
#include "core/registry.h"

namespace symm::cuda {
namespace {

BenchSetup plan_bench(const BenchOptions& o, int world, bool team, const TestRankOverrides& test) {
  if (test.algo_rank >= 0)
    for (Op op : o.ops) find_algo(op, test.algo);  // a bad name fails here, on every rank alike
  // Every rank sizes its heap for the testing size too: symmetric windows are the same everywhere.
  std::vector<std::size_t> heap_sizes = o.sizes;
  if (test.size_rank >= 0) heap_sizes.push_back(test.size);

  BenchSetup b;
  // --algo auto chooses per size on the GPU's machine (its name needs the device): the heap is
  // sized for every algorithm the table may name, those of `all`.
  b.auto_algo = std::find(o.algos.begin(), o.algos.end(), "auto") != o.algos.end();
  std::size_t need = 1u << 20;
  for (Op op : o.ops) {
    std::vector<const AlgoInfo*> list;
    for (const std::string& name : o.algos) {
      if (name == "nccl" || name == "nccl_symm" || name == "auto") continue;  // baselines: --nccl; auto below
      if (name == "all") {
        for (const AlgoInfo& a : algorithms())
          if (a.op == op && !a.needs_multicast) list.push_back(&a);
        continue;
      }
      const AlgoInfo& a = find_algo(op, name);
      // The safety variables refuse before any GPU is touched (and before NCCL is asked); a
      // team has no multicast object at all.
      if (auto why = multicast_refusal(a, process_env(), !team)) fail(ErrorCode::kUnsupported, *why);
      b.multicast = b.multicast || a.needs_multicast;
      list.push_back(&a);
    }
    std::vector<const AlgoInfo*> sized = list;
    if (b.auto_algo)
      for (const AlgoInfo& a : algorithms())
        if (a.op == op && !a.needs_multicast) sized.push_back(&a);
    if (test.algo_rank >= 0) sized.push_back(&find_algo(op, test.algo));
    for (std::size_t bytes : heap_sizes) {
      for (const AlgoInfo* a : sized) {
        if (a->max_bytes_for(world) && bytes > a->max_bytes_for(world)) continue;  // skipped in run_op
        const HeapLayout l = heap_layout(*a, bytes, world);
        if (o.heap) check_heap(*a, bytes, world, o.heap);
        need = std::max(need, l.total);
      }
      for (const AlgoInfo& a : algorithms())
        if (a.op == op) {
          b.in_max = std::max(b.in_max, a.in_bytes(bytes, world));
          b.out_max = std::max(b.out_max, a.out_bytes(bytes, world));
          need = std::max(need, heap_layout(a, bytes, world).out + a.out_bytes(bytes, world));
          break;
        }
    }
    b.per_op.push_back(list);
  }
  if (o.heap && need > o.heap)
    fail(ErrorCode::kInvalidArgument, "the sizes need " + std::to_string(need) +
                                          " bytes of symmetric heap per rank; --heap gives " + std::to_string(o.heap));
  // Whole 4 MiB granules: the heap is one NCCL window, mapped in physical-memory granules anyway.
  b.heap = o.heap ? o.heap : (need + (4u << 20) - 1) / (4u << 20) * (4u << 20);
  return b;
}

}  // namespace

// Options that mean nothing for what runs are refused, as the simulator's commands do (before any
// GPU is looked for: a typo costs nothing).
void check_bench_knobs(const BenchOptions& o) {
  const bool auto_algo = std::find(o.algos.begin(), o.algos.end(), "auto") != o.algos.end();
  bool any_plan = auto_algo, any_split = auto_algo;
  auto runs = [&](const AlgoInfo& a) {
    any_plan = any_plan || a.plan;
    any_split = any_split || a.id == "all_gather.ce_sm_st";
  };
  for (Op op : o.ops)
    for (const std::string& name : o.algos) {
      if (name == "nccl" || name == "nccl_symm" || name == "auto") continue;
      if (name != "all") {
        runs(find_algo(op, name));
        continue;
      }
      for (const AlgoInfo& a : algorithms())
        if (a.op == op && !a.needs_multicast) runs(a);
    }
  auto refuse = [](const std::string& opt, const std::string& why) {
    fail(ErrorCode::kInvalidArgument, opt + " means nothing here: " + why + "; drop it");
  };
  if (!any_plan && o.streams != 3) refuse("--streams " + std::to_string(o.streams), "no host plan runs");
  if (!any_plan && o.chunk_bytes) refuse("--chunk-bytes", "no host plan runs");
  if (!any_split && o.sm_percent) refuse("--sm-percent", "all_gather.ce_sm_st (ce_sm) does not run");
  if (o.rop != ReduceOp::kSum &&
      std::none_of(o.ops.begin(), o.ops.end(), [](Op op) { return op == Op::kAllReduce || op == Op::kReduceScatter; }))
    refuse("--reduce " + std::string(reduce_op_name(o.rop)), "no op that reduces runs");
}

int run_bench(const BenchOptions& o) {
  const RankEnv env = rank_env(process_env());
  const CommandRanks ranks = command_ranks(o.world, env.world, "bench --backend cuda");
  if (!o.probe_timeout && o.sizes.empty()) fail(ErrorCode::kInvalidArgument, "bench needs --sizes, e.g. 4K:256M");
  const TestRankOverrides test = test_rank_overrides(process_env());
  // Algorithms per op and the heap, resolved before touching a GPU, so bad input fails fast.
  const BenchSetup setup = plan_bench(o, ranks.world, ranks.team, test);
  // A team has no NCCL: no baselines, rows checked against the float64 reference.
  BenchOptions opts = o;
  if (ranks.team) opts.nccl = false;
  set_programmatic_launch(o.pdl);  // a team turns it off again (run_in_process)
  auto rank_main = [&](Runtime& rt) -> int { return bench_rank(opts, rt, test, setup); };
  // o.timeout_cycles 0: the runtime converts SYMM_WAIT_TIMEOUT_S (or the default) at the device clock.
  if (ranks.team) return run_in_process(ranks.world, setup.heap, o.timeout_cycles, rank_main);
  Runtime rt(env, setup.heap, o.timeout_cycles, setup.multicast);
  return rank_main(rt);
}

}  // namespace symm::cuda
