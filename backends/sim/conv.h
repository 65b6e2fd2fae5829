// Element conversion between a dtype's storage and fp32 (bf16 inline: it is the hot loop of
// data-mode runs), and the reduction every reducing verb computes: fp32 accumulation in source
// order, one rounding to T.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/common.h"

namespace symm::sim {

template <class T>
struct Conv;
template <>
struct Conv<float> {
  static float load(float v) { return v; }
  static float store(float f) { return f; }
};
template <>
struct Conv<bf16> {
  static float load(bf16 v) {
    const uint32_t u = uint32_t(v.bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static bf16 store(float f) {  // round to nearest even, NaN kept: as symm::from_float<bf16>
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return bf16{uint16_t((u >> 16) | 0x40)};
    u += 0x7FFF + ((u >> 16) & 1);
    return bf16{uint16_t(u >> 16)};
  }
};
template <>
struct Conv<fp16> {
  static float load(fp16 v) { return to_float(v); }
  static fp16 store(float f) { return from_float<fp16>(f); }
};

// out = the n sources (count elements each) reduced with op in fp32, a tile at a time (the
// accumulator stays in L1 while every source is added in, in source order).
template <class T>
inline void reduce_data(std::vector<uint8_t>& out, const T* const* src, int n, std::size_t count, ReduceOp op) {
  out.resize(count * sizeof(T));
  T* o = reinterpret_cast<T*>(out.data());
  constexpr std::size_t kTile = 512;
  float acc[kTile];
  for (std::size_t t0 = 0; t0 < count; t0 += kTile) {
    const std::size_t len = std::min(kTile, count - t0);
    const T* s0 = src[0] + t0;
    for (std::size_t i = 0; i < len; ++i) acc[i] = Conv<T>::load(s0[i]);
    for (int k = 1; k < n; ++k) {
      const T* s = src[k] + t0;
      if (op == ReduceOp::kSum)
        for (std::size_t i = 0; i < len; ++i) acc[i] += Conv<T>::load(s[i]);
      else
        for (std::size_t i = 0; i < len; ++i) acc[i] = combine(acc[i], Conv<T>::load(s[i]), op);
    }
    for (std::size_t i = 0; i < len; ++i) o[t0 + i] = Conv<T>::store(acc[i]);
  }
}

}  // namespace symm::sim
