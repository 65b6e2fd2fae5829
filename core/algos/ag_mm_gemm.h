// The GEMM every ag_mm plan issues: rows [row0, row0 + m) of C = A_rows @ B on the main stream,
// A_rows read from `a` (the local shard or the gathered buffer), B and C from the call's args.
#pragma once

#include "core/fused.h"
#include "core/plan.h"

namespace symm {

template <class T, class Host>
void ag_mm_gemm(Host& h, const FusedArgs& f, const void* a, std::size_t row0, std::size_t m) {
  if (!m) return;
  GemmArgs g;
  g.a = a;
  g.b = f.b;
  g.c = static_cast<char*>(f.c) + row0 * f.n * sizeof(T);
  g.m = int(m), g.n = int(f.n), g.k = int(f.k);
  g.lda = f.k, g.ldb = f.n, g.ldc = f.n;
  g.dtype = DTypeOf<T>::value;
  h.gemm(kMainStream, g);
}

}  // namespace symm
