// calibrate's host_* rows (host_ops_probe.h).
#include "apps/harness/cuda/host_ops_probe.h"

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "backends/cuda/check.h"
#include "backends/cuda/driver_entry.h"

namespace symm::cuda {

std::vector<HostOpRow> probe_host_ops(Runtime& rt, const std::function<void()>& launch_empty, int samples) {
  const auto write_fn = reinterpret_cast<StreamValueFn>(driver_entry("cuStreamWriteValue32"));
  const auto wait_fn = reinterpret_cast<StreamValueFn>(driver_entry("cuStreamWaitValue32"));
  const auto batch_fn = reinterpret_cast<StreamBatchFn>(driver_entry("cuStreamBatchMemOp"));
  cudaStream_t s = rt.stream(), side = nullptr;
  SYMM_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t ev = nullptr, other = nullptr;
  SYMM_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  SYMM_CUDA_CHECK(cudaEventCreateWithFlags(&other, cudaEventDisableTiming));
  SYMM_CUDA_CHECK(cudaEventRecord(other, side));  // a wait on another stream's event, as a plan's fork and join
  // Words: [0] holds the stream, [1] takes the flag writes, [2] the satisfied waits; then copy bytes.
  constexpr std::size_t kCopy = 4096;
  char* mem = nullptr;
  SYMM_CUDA_CHECK(cudaMalloc(&mem, 256 + 2 * kCopy));
  SYMM_CUDA_CHECK(cudaMemset(mem, 0, 256 + 2 * kCopy));
  const auto word = [&](int i) { return CUdeviceptr(mem + 4 * i); };
  CUstreamBatchMemOpParams op{};
  op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  op.writeValue.address = word(1);
  op.writeValue.value = 1;
  op.writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;

  struct Kind {
    const char* bench;
    std::function<void()> one;
  };
  // The heap's copies, as the host plans make them: within this rank's heap, into the next rank's
  // (the same heap where the world is 1), and 1 MiB (does the size cost the host?).
  const DeviceHandle& dh = rt.handle();
  char* heap = dh.heap_base;
  char* next = dh.heap_peer[(dh.rank + 1) % dh.world];
  constexpr std::size_t kBig = 1 << 20;
  const bool big = dh.heap_bytes >= 4 * kBig;
  std::vector<Kind> kinds = {
      {"host_launch", launch_empty},
      {"host_copy",
       [&] { SYMM_CUDA_CHECK(cudaMemcpyAsync(mem + 256 + kCopy, mem + 256, kCopy, cudaMemcpyDeviceToDevice, s)); }},
      {"host_copy_heap",
       [&] { SYMM_CUDA_CHECK(cudaMemcpyAsync(heap + 2 * kBig, heap, kCopy, cudaMemcpyDeviceToDevice, s)); }},
      {"host_copy_peer",
       [&] { SYMM_CUDA_CHECK(cudaMemcpyAsync(next + 3 * kBig, heap, kCopy, cudaMemcpyDeviceToDevice, s)); }},
      {"host_record", [&] { SYMM_CUDA_CHECK(cudaEventRecord(ev, s)); }},
      {"host_wait_event", [&] { SYMM_CUDA_CHECK(cudaStreamWaitEvent(s, other, 0)); }},
      {"host_flag_write",
       [&] { check_cu(write_fn(s, word(1), 1, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue32"); }},
      {"host_flag_wait", [&] { check_cu(wait_fn(s, word(2), 0, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32"); }},
      {"host_flag_batch", [&] { check_cu(batch_fn(s, 1, &op, 0), "cuStreamBatchMemOp"); }},
  };
  if (big)
    kinds.push_back({"host_copy_1m", [&] {
                       SYMM_CUDA_CHECK(cudaMemcpyAsync(heap + 2 * kBig, heap, kBig, cudaMemcpyDeviceToDevice, s));
                     }});
  std::vector<HostOpRow> rows;
  for (const Kind& k : kinds) {
    std::vector<double> per_op;
    for (int i = 0; i < samples + 1; ++i) {  // the first sample warms the path up, untimed
      check_cu(wait_fn(s, word(0), 1, CU_STREAM_WAIT_VALUE_EQ), "cuStreamWaitValue32 (hold)");
      const auto t0 = std::chrono::steady_clock::now();
      for (int j = 0; j < kHostOps; ++j) k.one();
      const auto t1 = std::chrono::steady_clock::now();
      check_cu(write_fn(side, word(0), 1, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue32 (release)");
      rt.sync();  // bounded: a stream that never drains is an error naming the row
      SYMM_CUDA_CHECK(cudaStreamSynchronize(side));
      SYMM_CUDA_CHECK(cudaMemsetAsync(mem, 0, 4, s));
      rt.sync();
      if (i > 0) per_op.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kHostOps);
    }
    std::nth_element(per_op.begin(), per_op.begin() + std::ptrdiff_t(per_op.size() / 2), per_op.end());
    rows.push_back({k.bench, per_op[per_op.size() / 2]});
  }
  SYMM_CUDA_CHECK(cudaFree(mem));
  SYMM_CUDA_CHECK(cudaEventDestroy(ev));
  SYMM_CUDA_CHECK(cudaEventDestroy(other));
  SYMM_CUDA_CHECK(cudaStreamDestroy(side));
  return rows;
}

}  // namespace symm::cuda
