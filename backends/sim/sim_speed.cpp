// sim_speed: how fast the simulator itself runs (a benchmark, not a test).
//
//   sim_speed [--out experiments/results/sim/speed.csv] [--repeats 5]
//
// Targets (issue 2): 8 ranks 1 MiB bf16 one-shot with data < 50 ms; 64 ranks 256 MiB two-shot
// timing-only < 1 s; > 5 M events/s.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "backends/sim/sim.h"
#include "core/result.h"

namespace {

struct Case {
  const char* name;
  const char* machine;
  int world;
  const char* algo;
  std::size_t bytes;
  bool timing_only;
};

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  int repeats = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out = argv[++i];
    else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
      repeats = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: sim_speed [--out path.csv] [--repeats N]\n");
      return 2;
    }
  }
  const Case cases[] = {
      {"one_shot_8x1M_data", "h200x8", 8, "all_reduce.ld_reduce", std::size_t(1) << 20, false},
      {"two_shot_8x1M_data", "h200x8", 8, "all_reduce.rs_ld_ag_st", std::size_t(1) << 20, false},
      {"two_shot_64x256M_timing", "h200x8", 64, "all_reduce.rs_ld_ag_st", std::size_t(256) << 20, true},
      {"one_shot_64x1M_timing", "h200x8", 64, "all_reduce.ld_reduce", std::size_t(1) << 20, true},
      {"one_shot_ll_8x1M_data", "h200x8", 8, "all_reduce.st_ll_reduce", std::size_t(1) << 20, false},
      {"multimem_8x256M_timing", "h200x8", 8, "all_reduce.mc_ld_reduce_mc_st", std::size_t(256) << 20, true},
  };
  std::string csv = "case,world,algo,bytes,timing_only,wall_ms_median,events,events_per_s,sim_time_us,git_sha\n";
  std::printf("%-26s %5s %-30s %10s %6s %10s %10s %12s %12s\n", "case", "world", "algo", "bytes", "timing", "wall_ms",
              "events", "events/s", "sim_us");
  try {
    for (const Case& c : cases) {
      symm::sim::RunSpec s;
      s.machine = symm::sim::Machine::by_name(c.machine);
      s.world = c.world;
      s.algo = &symm::find_algo(c.algo);
      s.dtype = symm::DType::kBF16;
      s.bytes = c.bytes;
      s.timing_only = c.timing_only;
      std::vector<double> wall;
      symm::sim::RunResult r;
      for (int i = 0; i < repeats; ++i) {
        r = symm::sim::run(s);
        wall.push_back(r.wall_s * 1e3);
        if (!c.timing_only && !(r.max_rel_err <= r.err_bound)) {
          std::fprintf(stderr, "%s: wrong result (max_rel_err %g)\n", c.name, r.max_rel_err);
          return 1;
        }
      }
      std::sort(wall.begin(), wall.end());
      const double med = wall[wall.size() / 2];
      const double eps = double(r.events) / (med * 1e-3);
      char line[512];
      std::snprintf(line, sizeof line, "%s,%d,%s,%zu,%d,%.3f,%llu,%.0f,%.3f,%s\n", c.name, c.world, c.algo, c.bytes,
                    int(c.timing_only), med, (unsigned long long)r.events, eps, r.time_us, symm::git_sha());
      csv += line;
      std::printf("%-26s %5d %-30s %10zu %6d %10.2f %10llu %12.0f %12.2f\n", c.name, c.world, c.algo, c.bytes,
                  int(c.timing_only), med, (unsigned long long)r.events, eps, r.time_us);
    }
  } catch (const symm::Error& e) {
    std::fprintf(stderr, "sim_speed: %s\n", e.what());
    return 1;
  }
  if (!out.empty()) {
    std::ofstream f(out);
    f << csv;
    if (!f) {
      std::fprintf(stderr, "sim_speed: cannot write %s\n", out.c_str());
      return 1;
    }
  }
  return 0;
}
