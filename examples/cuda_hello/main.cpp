// symmcoll on GPUs, adopting NCCL communicators the program already has: every GPU of this host
// (CUDA_VISIBLE_DEVICES narrows it; 2..8), one thread each, an fp32 all-reduce of 1M elements
// with "auto" selection on buffers from the communicator's symmetric heap, and one on plain
// cudaMalloc buffers (staged), each checked against the exact sum.
//
// With one GPU (or `cuda_hello --team N`): N ranks in this process (symm::cuda_node, default 4),
// driven from this one thread: every rank's calls enqueued, then every rank synchronized.
#include <cuda_runtime.h>
#include <nccl.h>
#include <symmcoll/cuda.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#define CHECK(call)                                                        \
  do {                                                                     \
    if (auto e = (call); int(e) != 0) {                                    \
      std::fprintf(stderr, "cuda_hello: %s failed (%d)\n", #call, int(e)); \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

namespace {

// Rank r's input: (r + 1) x (i % 7); the sum over n ranks is n (n + 1) / 2 x (i % 7).
bool correct(const std::vector<float>& got, int n) {
  const double ranks_sum = n * (n + 1) / 2.0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - ranks_sum * double(i % 7)) > 1e-3) return false;
  return true;
}

// N ranks of one process (one GPU is enough).
int run_team(int world) {
  const std::size_t count = 1 << 20, bytes = count * sizeof(float);
  int failures = 0, gpus = 1;
  CHECK(cudaGetDeviceCount(&gpus));
  try {
    auto comms = symm::cuda_node({.world = world});
    std::vector<float*> in, out, plain_in, plain_out;
    for (int r = 0; r < world; ++r) {  // buffers and inputs first: nothing runs yet
      std::vector<float> host(count);
      for (std::size_t i = 0; i < count; ++i) host[i] = float(r + 1) * float(i % 7);
      in.push_back(static_cast<float*>(comms[std::size_t(r)]->alloc(bytes)));
      out.push_back(static_cast<float*>(comms[std::size_t(r)]->alloc(bytes)));
      float *pi = nullptr, *po = nullptr;
      CHECK(cudaSetDevice(r % gpus));  // rank r's GPU (cuda_node's round-robin)
      CHECK(cudaMalloc(&pi, bytes));
      CHECK(cudaMalloc(&po, bytes));
      plain_in.push_back(pi);
      plain_out.push_back(po);
      CHECK(cudaMemcpy(in.back(), host.data(), bytes, cudaMemcpyHostToDevice));
      CHECK(cudaMemcpy(pi, host.data(), bytes, cudaMemcpyHostToDevice));
    }
    std::string algo;
    for (int r = 0; r < world; ++r) {  // every rank's calls, then every rank's synchronize
      auto& c = comms[std::size_t(r)];
      algo = c->all_reduce(in[std::size_t(r)], out[std::size_t(r)], count, symm::DType::kFP32).algo->id;
      c->all_reduce(plain_in[std::size_t(r)], plain_out[std::size_t(r)], count, symm::DType::kFP32);
    }
    for (auto& c : comms) c->synchronize();
    std::vector<float> host(count);
    for (int r = 0; r < world; ++r)
      for (float* result : {out[std::size_t(r)], plain_out[std::size_t(r)]}) {
        CHECK(cudaMemcpy(host.data(), result, bytes, cudaMemcpyDeviceToHost));
        failures += !correct(host, world);
      }
    for (int r = 0; r < world; ++r) {
      CHECK(cudaFree(plain_in[std::size_t(r)]));
      CHECK(cudaFree(plain_out[std::size_t(r)]));
    }
    std::printf("cuda_hello: %d ranks in one process, all_reduce %zu floats by %s\n", world, count, algo.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_hello: %s\n", e.what());
    ++failures;
  }
  std::printf("%s\n", failures ? "cuda_hello: FAILED" : "cuda_hello: all results correct");
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
    std::fprintf(stderr, "cuda_hello: needs a GPU\n");
    return 2;
  }
  if (argc == 3 && std::string(argv[1]) == "--team") return run_team(std::atoi(argv[2]));
  if (n < 2) return run_team(4);
  n = std::min(n, 8);
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
  std::vector<int> devs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) devs[std::size_t(i)] = i;
  CHECK(ncclCommInitAll(comms.data(), n, devs.data()));  // the program's own communicators

  const std::size_t count = 1 << 20;
  std::vector<int> bad(static_cast<std::size_t>(n), 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        CHECK(cudaSetDevice(r));
        auto comm = symm::cuda_communicator(comms[std::size_t(r)]);
        std::vector<float> host(count);
        for (std::size_t i = 0; i < count; ++i) host[i] = float(r + 1) * float(i % 7);
        float* in = static_cast<float*>(comm->alloc(count * sizeof(float)));  // symmetric: in place
        float* out = static_cast<float*>(comm->alloc(count * sizeof(float)));
        float *plain_in = nullptr, *plain_out = nullptr;  // plain: staged
        CHECK(cudaMalloc(&plain_in, count * sizeof(float)));
        CHECK(cudaMalloc(&plain_out, count * sizeof(float)));
        CHECK(cudaMemcpy(in, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(plain_in, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
        const symm::CallInfo c = comm->all_reduce(in, out, count, symm::DType::kFP32);
        comm->all_reduce(plain_in, plain_out, count, symm::DType::kFP32);
        comm->synchronize();
        for (float* result : {out, plain_out}) {
          CHECK(cudaMemcpy(host.data(), result, count * sizeof(float), cudaMemcpyDeviceToHost));
          if (!correct(host, n)) ++bad[std::size_t(r)];
        }
        if (r == 0) std::printf("cuda_hello: %d ranks, all_reduce %zu floats by %s\n", n, count, c.algo->id.c_str());
        CHECK(cudaFree(plain_in));
        CHECK(cudaFree(plain_out));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "cuda_hello: rank %d: %s\n", r, e.what());
        ++bad[std::size_t(r)];
      }
    });
  for (auto& t : threads) t.join();
  for (ncclComm_t c : comms) ncclCommDestroy(c);
  int failures = 0;
  for (int b : bad) failures += b;
  std::printf("%s\n", failures ? "cuda_hello: FAILED" : "cuda_hello: all results correct");
  return failures ? 1 : 0;
}
