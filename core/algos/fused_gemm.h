// The GEMM every fused plan issues: C (m x n, row stride n) = A (m x k, row stride k) x B (k x n,
// row stride n) on the main stream, in the plan's element type T; nothing for m = 0.
#pragma once

#include "core/plan.h"

namespace symm {

template <class T, class Host>
void main_gemm(Host& h, const void* a, const void* b, void* c, std::size_t m, std::size_t n, std::size_t k) {
  if (m) h.gemm(kMainStream, gemm_args(a, b, c, m, n, k, DTypeOf<T>::value));
}

}  // namespace symm
