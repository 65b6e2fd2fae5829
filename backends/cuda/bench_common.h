// Pieces the collective bench (bench.cpp) and the fused-operation bench (bench_fused.cpp)
// share: reproducible inputs and NCCL type names.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <vector>

#include "core/common.h"

namespace symm::cuda {

// ---- inputs: every rank can regenerate every rank's input from (seed, rank, index), so the
// float64 reference of its own output needs no communication.
inline float gen(uint64_t seed, int rank, std::size_t i) {
  const uint64_t h = splitmix64((seed << 20) ^ (uint64_t(rank) << 56) ^ uint64_t(i));
  return float(double(h >> 11) * (2.0 / 9007199254740992.0) - 1.0);  // [-1, 1)
}
template <class T>
std::vector<T> make_input(uint64_t seed, int rank, std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = from_float<T>(gen(seed, rank, i));
  return v;
}

inline ncclDataType_t nccl_type(DType t) {
  return t == DType::kBF16 ? ncclBfloat16 : t == DType::kFP16 ? ncclFloat16 : ncclFloat32;
}

}  // namespace symm::cuda
