// `symmcoll bench --backend cuda --op ag_mm,mm_rs`: option parsing of the fused-operation bench
// (apps/harness/cuda/bench_fused.h). apps/cmd_cuda.cpp hands over when --op names a fused op.
#include <boost/program_options.hpp>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli.h"
#include "apps/cmd_cuda.h"
#include "apps/harness/cuda/bench_fused.h"
#include "apps/harness/cuda/trace_out.h"
#include "backends/cuda/host_logic.h"
#include "core/fused.h"
#include "core/sizes.h"

namespace po = boost::program_options;

namespace symm::apps {

int cmd_bench_fused_cuda(int argc, char** argv) {
  cuda::FusedBenchOptions o;
  std::string ops, dtypes = "bf16", shapes, ms = "4096,8192,16384", n, k, mode = "both";
  po::options_description d(
      "usage: symmcoll launch -n N -- symmcoll bench --backend cuda --op ag_mm,mm_rs [options]\n"
      "       symmcoll bench --backend cuda --op ag_mm,mm_rs --world N [options]   (N ranks in this process)\n\n"
      "Matmul fused with communication, next to the matmul alone (cublaslt) and NCCL + cuBLASLt one\n"
      "after the other (nccl_cublaslt), in the same run:\n"
      "  ag_mm  C = all_gather(A) @ B: A sharded by rows (M/world x K per rank), B (K x N) replicated\n"
      "  mm_rs  C = reduce_scatter(A @ B): A (M x K/world) and B (K/world x N) sharded along K\n"
      "Shapes: --shape 8b (N 1792, K 4096) / 70b (N 3584, K 8192), or --n and --k, crossed with --m.\n"
      "Checked per row against a float64 reference (small shapes, --ref-max) and against\n"
      "nccl_cublaslt's result; timed in CUDA-graph replay and eager, per call, max over ranks.\n"
      "--world N (2..8, without launch): N ranks as threads of this process (one GPU is enough); no\n"
      "NCCL, so no nccl_cublaslt row: the plans are checked against every rank's shard copied from\n"
      "its peers + cuBLASLt (ag_mm) or the partial products summed in float64 (mm_rs).\n\noptions");
  d.add_options()("help,h", "this text")("backend", po::value<std::string>(), "cuda")("op", po::value(&ops),
                                                                                      "ag_mm, mm_rs (comma list)")(
      "algo", po::value(&o.algos)->default_value(o.algos),
      ("ids, names or aliases (" + fused_alias_list() + "), or all").c_str())(
      "dtype", po::value(&dtypes)->default_value(dtypes), "bf16, fp16 (comma list)")(
      "shape", po::value(&shapes), "named shapes: 8b, 70b (comma list)")(
      "m", po::value(&ms)->default_value(ms), "M values (comma list); world must divide each")(
      "n", po::value(&n), "N of a custom shape (with --k, instead of --shape)")(
      "k", po::value(&k), "K of a custom shape (with --n)")("mode", po::value(&mode)->default_value(mode),
                                                            "graph, eager or both")(
      "iters", po::value(&o.iters)->default_value(o.iters), "timed samples")(
      "warmup", po::value(&o.warmup)->default_value(o.warmup), "untimed samples first")(
      "calls", po::value(&o.calls)->default_value(o.calls), "calls per sample; 0: 20 small, 5 large")(
      "passes", po::value(&o.passes)->default_value(o.passes),
      "timing passes over all cases of a shape, one after the other; each row's median / p10 / p90 are the "
      "medians of its passes' (clock drift from the GPUs' power state spread over every case alike)")(
      "streams", po::value(&o.streams)->default_value(o.streams),
      "streams of the fused plans, main included (2..8); not with --csv")(
      "blocks", po::value(&o.blocks)->default_value(0),
      "blocks of the plans' kernels (the reduce after the copies, ...; the mm_rs tile programs: the blocks that "
      "reduce while the others compute); 0 = each plan's default; not with --csv")(
      "chunk-rows", po::value(&o.chunk_rows)->default_value(0),
      "rows per progress flag / GEMM (the mm_rs tile programs: rows per band); 0 = each plan's default; not with "
      "--csv")("no-baselines", "skip the cublaslt and nccl_cublaslt rows (nccl_cublaslt still runs for the check)")(
      "timing-only", "time only")("no-timing", "check only (with --replays: the GPU test suite)")(
      "ref-max", po::value(&o.ref_max)->default_value(o.ref_max),
      "float64 reference when M*N*K (mm_rs: /world) is at most this")(
      "replays", po::value(&o.replays)->default_value(0), "also replay a one-call graph this often, then check")(
      "plan-timeout", po::value(&o.plan_timeout_s)->default_value(o.plan_timeout_s),
      "seconds a sample of a fused plan may take before the rank names the flag it waits on (rank, stream, slot)")(
      "csv", po::value(&o.csv), "write rows here (rank 0); the result schema with M, N, K")(
      "trace-calls", po::value(&o.trace_calls)->default_value(1),
      "with --trace: calls traced back to back per launch mode")(
      "trace", po::value(&o.trace_dir),
      "folder (made if missing): after timing each fused plan, one call of it per launch mode traced on the GPU, "
      "<op>.<algo>.<dtype>.M<m>_N<n>_K<k>.{graph,eager}.json, a Chrome trace (Perfetto) with the simulator's "
      "tracks and names")("machine", po::value(&o.machine), "machine column; default from the device name and world")(
      "world", po::value(&o.world), "N ranks as threads of this process (2..8, without launch; one GPU is enough)")(
      "seed", po::value(&o.seed)->default_value(1), "input seed");
  po::variables_map vm;
  parse_args(argc, argv, d, vm);
  if (vm.count("help")) {
    std::cout << d << "\n";
    return kExitOk;
  }
  po::notify(vm);
  o.ops.clear();
  for (const std::string& s : split_list(ops)) {
    if (!is_fused_op(s))
      fail(ErrorCode::kInvalidArgument, "--op '" + ops +
                                            "' mixes fused ops (ag_mm, mm_rs) with collectives; "
                                            "run them in separate bench calls");
    o.ops.push_back(parse_fused_op(s));
  }
  o.dtypes.clear();
  for (const std::string& s : split_list(dtypes)) o.dtypes.push_back(parse_dtype(s));
  if (mode != "graph" && mode != "eager" && mode != "both")
    fail(ErrorCode::kInvalidArgument, "--mode '" + mode + "' is not graph, eager or both");
  o.graph = mode != "eager";
  o.eager = mode != "graph";
  if (!shapes.empty() && (vm.count("n") || vm.count("k")))
    fail(ErrorCode::kInvalidArgument, "--shape cannot go with --n/--k: name a shape or give N and K");
  if (vm.count("n") != vm.count("k")) fail(ErrorCode::kInvalidArgument, "--n and --k go together");
  std::vector<MatShape> base;
  for (const std::string& s : split_list(shapes)) base.push_back(named_shape(s));
  if (vm.count("n")) base.push_back(MatShape{0, parse_count(n, "--n"), parse_count(k, "--k"), ""});
  if (base.empty()) fail(ErrorCode::kInvalidArgument, "--op ag_mm/mm_rs needs --shape 8b,70b or --n and --k");
  const std::vector<std::string> mlist = split_list(ms);
  if (mlist.empty()) fail(ErrorCode::kInvalidArgument, "--m needs at least one value");
  for (const MatShape& b : base)
    for (const std::string& m : mlist) {
      MatShape s = b;
      s.m = parse_count(m, "--m");
      o.shapes.push_back(s);
    }
  o.baselines = !vm.count("no-baselines");
  o.check = !vm.count("timing-only");
  o.timing = !vm.count("no-timing");
  if (o.trace_calls < 1) fail(ErrorCode::kInvalidArgument, "--trace-calls must be at least 1");
  if (o.passes < 1) fail(ErrorCode::kInvalidArgument, "--passes must be at least 1");
  if (!(o.plan_timeout_s > 0)) fail(ErrorCode::kInvalidArgument, "--plan-timeout must be > 0");
  if (!o.trace_dir.empty()) cuda::prepare_trace_dir(o.trace_dir);
  if (o.streams != 3) refuse_with_csv(o.csv, "--streams", std::to_string(o.streams), "plan streams", "3");
  if (o.blocks < 0) fail(ErrorCode::kInvalidArgument, "--blocks must be 0 (the plans' defaults) or positive");
  if (o.blocks != 0) refuse_with_csv(o.csv, "--blocks", std::to_string(o.blocks), "plan kernel blocks", "0");
  if (o.chunk_rows != 0) refuse_with_csv(o.csv, "--chunk-rows", std::to_string(o.chunk_rows), "chunk rows", "0");
  if (vm.count("world")) prepare_team(o.world, "bench --backend cuda");
  try {
    return cuda::run_fused_bench(o);
  } catch (const Error& e) {
    if (o.world != 0) throw;  // a team's errors name their rank already
    const cuda::RankEnv env = cuda::rank_env(cuda::process_env());
    throw Error(e.code(), "rank " + std::to_string(env.rank) + ": " + e.what());
  }
}

}  // namespace symm::apps
