// `symmcoll gemm-bench` (symmcoll-cuda): option parsing of apps/harness/cuda/gemm_bench.h, our tile
// GEMM beside cuBLASLt on one GPU.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>

#include "apps/cli.h"
#include "apps/cmd_cuda.h"
#include "apps/harness/cuda/gemm_bench.h"
#include "backends/cuda/tile_sched.h"

namespace po = boost::program_options;

namespace symm::apps {

int cmd_gemm_bench_cuda(int argc, char** argv) {
  cuda::GemmBenchOptions o;
  std::string shapes = "fused", dtypes = "bf16", mode = "both", impls = "tile,cublaslt", schedule = "auto",
              epilogue = "staged";
  po::options_description d(
      "usage: symmcoll gemm-bench [options]   (one GPU, one process)\n\n"
      "Our Hopper GEMM (backends/cuda/tile_gemm.h: TMA producer warp, two wgmma consumer warpgroups,\n"
      "persistent tiles, coop or ping-pong schedule) beside cuBLASLt, C (M x N) = A (M x K) x B (K x N), all\n"
      "row-major, fp32 accumulation. Per shape and type: both run on fresh random inputs into\n"
      "poisoned outputs and are checked (every element of ours written; sampled entries against a\n"
      "float64 host reference; ours against cuBLASLt's whole C; ours with C_in added); a failed check\n"
      "prints FAIL and the exit code is 1. Then both are timed, samples alternating, with cudaEvents\n"
      "around each call, in CUDA-graph replay and eager launches, inputs rotated over enough sets to\n"
      "outgrow L2. The table's ratio is cuBLASLt's median time over ours (our share of its throughput).\n\n"
      "options");
  d.add_options()("help,h", "this text")(
      "shapes", po::value(&shapes)->default_value(shapes),
      "M,N,K;M,N,K... or 'fused': M 4096, 8192, 16384 x {8B: N 1792, K 4096 and K/2 = 2048 (mm_rs,\n"
      "world 2); 70B: N 3584, K 8192 and 4096}. Any positive M, N, K; N and K multiples of 8 (TMA strides)")(
      "dtype", po::value(&dtypes)->default_value(dtypes), "bf16, fp16 (comma list)")(
      "impl", po::value(&impls)->default_value(impls), "tile, cublaslt (comma list)")(
      "mode", po::value(&mode)->default_value(mode), "graph, eager or both")(
      "iters", po::value(&o.iters)->default_value(o.iters), "timed samples per implementation and mode (>= 1)")(
      "warmup", po::value(&o.warmup)->default_value(o.warmup), "untimed samples first")(
      "schedule", po::value(&schedule)->default_value(schedule),
      "our kernel's schedule: coop (both consumer warpgroups on one 128 x BN tile, then both\n"
      "store it while the tensor cores idle), pingpong (each consumer its own 64 or 128 x BN tiles,\n"
      "taking turns: one stores while the other's MMAs run) or auto (backends/cuda/tile_sched.h\n"
      "choose_plan: a time model; ping-pong where K is short, e.g. K 2048, and the tiles fill the\n"
      "waves as well). The table's tile column names the schedule run")(
      "tile-n", po::value(&o.tile.tile_n)->default_value(0),
      "our tile width: 256, 224, 192, 128; 0 = chosen per shape (fewest waves of tiles on the SMs)")(
      "tile-m", po::value(&o.tile.tile_m)->default_value(0),
      "our tile height: coop 128; pingpong 128 (with tile width 128) or 64 (any width); 0 = chosen")(
      "group", po::value(&o.tile.group)->default_value(o.tile.group),
      "tile rows per rasterisation group (consecutive tiles share rows of A and columns of B in L2)")(
      "sms", po::value(&o.tile.max_blocks)->default_value(0), "cap on our persistent grid; 0 = every SM")(
      "epilogue", po::value(&epilogue)->default_value(epilogue),
      "coop only: staged (interior tiles through shared memory: C_in added in the accumulators,\n"
      "stmatrix, then 16-byte row stores) or registers (quad transposes by shuffles, then 16-byte\n"
      "stores); the same result either way")(
      "cluster", po::value(&o.tile.cluster)->default_value(0),
      "coop only: 1 = every block loads its own tiles; 2 = clusters of two blocks on tile pairs\n"
      "(256 x BN), each loading half of B's boxes for both (TMA multicast); 0 = chosen (2 where the\n"
      "product has two tile rows or more)")(
      "c-in", "time C = A x B + C_in (cuBLASLt's beta = 1) instead of C = A x B (op column gemm_c_in)")(
      "samples", po::value(&o.samples)->default_value(o.samples),
      "checked rows and columns (their cross product, plus the last row and column)")(
      "timing-only", "time only, no check")("no-timing", "check only")(
      "out", po::value(&o.csv),
      "write CSV rows here: backend,machine,op,impl,dtype,M,N,K,graph,\n"
      "time_us_median,time_us_p10,time_us_p90,tflops,max_rel_err,git_sha\n"
      "(max_rel_err: against float64 on the sampled entries, row-relative)")(
      "machine", po::value(&o.machine), "machine column; default from the device name, e.g. h200x1")(
      "seed", po::value(&o.seed)->default_value(o.seed), "input seed");
  po::variables_map vm;
  parse_args(argc, argv, d, vm);
  if (vm.count("help")) {
    std::cout << d << "\n";
    return kExitOk;
  }
  po::notify(vm);
  o.shapes = cuda::parse_gemm_shapes(shapes);
  o.dtypes.clear();
  for (const auto& s : split_list(dtypes)) {
    const DType t = parse_dtype(s);
    if (t == DType::kFP32) fail(ErrorCode::kInvalidArgument, "--dtype: bf16 or fp16 (the tile GEMM has no fp32)");
    o.dtypes.push_back(t);
  }
  o.impls = split_list(impls);
  for (const auto& i : o.impls)
    if (i != "tile" && i != "cublaslt")
      fail(ErrorCode::kInvalidArgument, "--impl: unknown '" + i + "' (valid: tile, cublaslt)");
  if (o.impls.empty()) fail(ErrorCode::kInvalidArgument, "--impl: none given");
  o.modes = parse_mode(mode, true);
  o.time_c_in = vm.count("c-in") > 0;
  o.check = vm.count("timing-only") == 0;
  o.timing = vm.count("no-timing") == 0;
  if (o.iters < 1 || o.warmup < 0) fail(ErrorCode::kInvalidArgument, "--iters must be >= 1 and --warmup >= 0");
  if (o.samples < 1) fail(ErrorCode::kInvalidArgument, "--samples must be >= 1");
  if (o.tile.tile_n != 0 && o.tile.tile_n != 256 && o.tile.tile_n != 224 && o.tile.tile_n != 192 &&
      o.tile.tile_n != 128)
    fail(ErrorCode::kInvalidArgument, "--tile-n " + std::to_string(o.tile.tile_n) + ": valid 0, 256, 224, 192, 128");
  if (epilogue != "staged" && epilogue != "registers")
    fail(ErrorCode::kInvalidArgument, "--epilogue '" + epilogue + "': valid staged, registers");
  o.tile.staged_epilogue = epilogue == "staged";
  if (o.tile.cluster < 0 || o.tile.cluster > 2)
    fail(ErrorCode::kInvalidArgument, "--cluster " + std::to_string(o.tile.cluster) + ": valid 0, 1, 2");
  if (!cuda::tile::parse_schedule(schedule, o.tile.schedule))
    fail(ErrorCode::kInvalidArgument, "--schedule: unknown '" + schedule + "' (valid: auto, coop, pingpong)");
  if (o.tile.tile_m != 0 && o.tile.tile_m != 64 && o.tile.tile_m != 128)
    fail(ErrorCode::kInvalidArgument, "--tile-m " + std::to_string(o.tile.tile_m) + ": valid 0, 64, 128");
  if (const std::string why = cuda::tile::plan_refusal(o.tile.schedule, o.tile.tile_m, o.tile.tile_n); !why.empty())
    fail(ErrorCode::kInvalidArgument, "--schedule " + schedule + " --tile-m " + std::to_string(o.tile.tile_m) +
                                          " --tile-n " + std::to_string(o.tile.tile_n) + ": " + why);
  if (o.tile.group < 1) fail(ErrorCode::kInvalidArgument, "--group must be >= 1");
  if (!o.csv.empty()) check_writable(o.csv);
  return cuda::run_gemm_bench(o);
}

}  // namespace symm::apps
