// symmcoll as a library, on the simulator: four ranks of a simulated 4x H200 node, all-reduce,
// reduce-scatter and all-gather with "auto" selection, each result checked here.
// On GPUs the same calls go to symm::cuda_communicator(ncclComm) (symmcoll/cuda.h).
#include <symmcoll/symmcoll.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

int failures = 0;

void expect_near(float got, double want, const char* what, int rank, std::size_t i) {
  if (std::fabs(double(got) - want) > 1e-4 * std::max(1.0, std::fabs(want))) {
    if (failures++ < 5) std::printf("FAIL %s rank %d [%zu]: got %g, want %g\n", what, rank, i, double(got), want);
  }
}

void report(const char* what, const symm::CallInfo& c) {
  std::printf("%-15s %-28s %8zu bytes  predicted %8.2f us  simulated error %.2g\n", what, c.algo->id.c_str(), c.bytes,
              c.predicted_us, c.max_rel_err);
}

}  // namespace

int main() {
  symm::SimOptions options;
  options.machine = "h200x4";  // installed with symmcoll (share/symmcoll/machines)
  auto ranks = symm::sim_node(options);
  const int world = ranks[0]->world();
  const std::size_t count = 1024;  // elements per rank chunk
  const symm::DType t = symm::DType::kFP32;

  // Every rank r holds in[i] = r + i / count; the sum over ranks is world * (world - 1) / 2 + world * i /
  // count.
  std::vector<float*> in(world), out(world);
  for (int r = 0; r < world; ++r) {
    in[r] = static_cast<float*>(ranks[r]->alloc(count * world * sizeof(float)));
    out[r] = static_cast<float*>(ranks[r]->alloc(count * world * sizeof(float)));
    for (std::size_t i = 0; i < count * world; ++i) in[r][i] = float(r) + float(i) / float(count);
  }
  auto sum_at = [&](std::size_t i) { return world * (world - 1) / 2.0 + world * double(float(i) / float(count)); };

  symm::CallInfo c;
  for (int r = 0; r < world; ++r) c = ranks[r]->all_reduce(in[r], out[r], count, t);  // last call runs it
  report("all_reduce", c);
  for (int r = 0; r < world; ++r)
    for (std::size_t i = 0; i < count; ++i) expect_near(out[r][i], sum_at(i), "all_reduce", r, i);

  for (int r = 0; r < world; ++r) c = ranks[r]->reduce_scatter(in[r], out[r], count, t);
  report("reduce_scatter", c);
  for (int r = 0; r < world; ++r)
    for (std::size_t i = 0; i < count; ++i) expect_near(out[r][i], sum_at(r * count + i), "reduce_scatter", r, i);

  for (int r = 0; r < world; ++r) c = ranks[r]->all_gather(in[r], out[r], count, t, nullptr, "pull");
  report("all_gather", c);
  for (int r = 0; r < world; ++r)
    for (int q = 0; q < world; ++q)
      for (std::size_t i = 0; i < count; ++i)
        expect_near(out[r][q * count + i], q + double(float(i) / float(count)), "all_gather", r, i);

  std::printf("%s\n", failures ? "sim_hello: FAILED" : "sim_hello: all results correct");
  return failures ? 1 : 0;
}
