// symmcoll on GPUs, adopting NCCL communicators the program already has: every GPU of this host
// (CUDA_VISIBLE_DEVICES narrows it; 2..8), one thread each, an fp32 all-reduce of 1M elements
// with "auto" selection on buffers from the communicator's symmetric heap, and one on plain
// cudaMalloc buffers (staged), each checked against the exact sum.
#include <cuda_runtime.h>
#include <nccl.h>
#include <symmcoll/cuda.h>

#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#define CHECK(call)                                                        \
  do {                                                                     \
    if (auto e = (call); int(e) != 0) {                                    \
      std::fprintf(stderr, "cuda_hello: %s failed (%d)\n", #call, int(e)); \
      std::exit(1);                                                        \
    }                                                                      \
  } while (0)

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
    std::fprintf(stderr, "cuda_hello: needs at least 2 GPUs\n");
    return 2;
  }
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
        const double ranks_sum = n * (n + 1) / 2.0;
        for (float* result : {out, plain_out}) {
          CHECK(cudaMemcpy(host.data(), result, count * sizeof(float), cudaMemcpyDeviceToHost));
          for (std::size_t i = 0; i < count; ++i)
            if (std::fabs(host[i] - ranks_sum * double(i % 7)) > 1e-3) {
              ++bad[std::size_t(r)];
              break;
            }
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
