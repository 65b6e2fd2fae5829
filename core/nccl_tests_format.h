// Result rows as the table nccl-tests prints (`bench --format nccl-tests`, `sweep --format
// nccl-tests`), for the scripts that parse it: one table per (op, algorithm, dtype, launch mode),
// rows by size with nccl-tests' columns and widths for the out-of-place half (symmcoll's programs
// have no in-place variant), and its footer. Times are the median.
//
//   # symmcoll cuda h200x4 world 4: all_reduce all_reduce.ld_reduce bf16 graph
//   #                                                              out-of-place
//   #       size         count      type   redop    root     time   algbw   busbw #wrong
//   #        (B)    (elements)                               (us)  (GB/s)  (GB/s)
//          4096          2048  bfloat16     sum      -1     6.33    0.65    0.97      0
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 0.97
//   #
//
// #wrong: 0 when the row's check passed, 1 when it failed (symmcoll checks the maximum relative
// error, not each element), N/A when the row was not checked.
#pragma once

#include <cstdio>
#include <vector>

#include "core/common.h"
#include "core/result.h"

namespace symm {

// failed[i]: row i failed its check (ignored for unchecked rows, max_rel_err < 0).
void write_nccl_tests(std::FILE* out, const std::vector<ResultRow>& rows, const std::vector<bool>& failed,
                      ReduceOp rop);

}  // namespace symm
