// The settings of the calibration microbenchmarks (core/calib_programs.h): round trips, sizes and
// block counts, shared by the CUDA run (backends/cuda/calibrate.cpp) and the simulator's
// prediction of the same rows (backends/sim/calib.cpp). Host-only.
#pragma once

#include <vector>

namespace symm::calib {

struct CalibPlan {
  std::vector<int> rounds{1, 2, 4, 8, 16, 32};                   // ping-pongs, load chains
  std::vector<double> small_bytes{1 << 20, 4 << 20, 16 << 20};   // copy_peer, ce_copy
  std::vector<double> big_bytes{16 << 20, 64 << 20, 256 << 20};  // scatter, incast, local
  std::vector<int> peer_blocks{1, 2, 4, 8, 16, 32, 64};          // copy_peer's rate vs blocks
  std::vector<int> gemm_sizes{2048, 4096, 8192};                 // m = n = k
};

}  // namespace symm::calib
