// The settings of the calibration microbenchmarks (core/calib_programs.h): round trips, sizes and
// block counts, shared by the CUDA run (apps/harness/cuda/calibrate.cpp) and the simulator's
// prediction of the same rows (apps/harness/sim/calib.cpp). Host-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/common.h"

namespace symm::calib {

// The comment (after its '#') that marks a calibration CSV an in-process team measured: ranks
// sharing a GPU, whose peers' memory is the GPU's own. Written by calibrate --world N (and by the
// simulator's rows of a team machine), read by the fit (apps/harness/sim/calib.h CalibRow::team).
inline constexpr const char* kTeamComment = " in-process team";

// The stride of LocalReduceChain's loads (core/calib_programs.h): one cache line each.
inline constexpr std::size_t kLineBytes = 128;
// The piece each copy of PeerCopyChain moves (core/calib_programs.h): 16 bytes per thread of 256.
inline constexpr std::size_t kCopyPieceBytes = 4096;
// The data LlReadChain (core/calib_programs.h) puts as flagged packets and reads back each pass, and
// the buffer it needs per pass of a call's size: the packets (2x) and the result.
inline constexpr std::size_t kLlChainBytes = 16 << 10;
inline constexpr std::size_t kLlChainRound = 3 * kLlChainBytes;

// The most rounds a ping-pong or exchange call may run: each call owns this many flag values
// (calib_programs.h round_value).
inline constexpr uint32_t kMaxRounds = 1024;

struct CalibPlan {
  // The rows to run (calibrate --rows): names, or prefixes ending in '*'; empty: every row. The
  // device rows (device_*) are always written.
  std::vector<std::string> only;
  bool wants(const std::string& bench) const {
    if (only.empty() || bench.starts_with("device_")) return true;
    for (const std::string& e : only)
      if (e == bench || (e.ends_with('*') && bench.starts_with(e.substr(0, e.size() - 1)))) return true;
    return false;
  }
  // Might a row whose name starts with `prefix` be wanted? (Skips a whole group of rows.)
  bool wants_group(const std::string& prefix) const {
    if (only.empty()) return true;
    for (const std::string& e : only) {
      const std::string stem = e.ends_with('*') ? e.substr(0, e.size() - 1) : e;
      if (stem.starts_with(prefix) || prefix.starts_with(stem)) return true;
    }
    return false;
  }
  std::vector<int> rounds{1, 2, 4, 8, 16, 32};                   // ping-pongs, load chains
  std::vector<double> small_bytes{1 << 20, 4 << 20, 16 << 20};   // copy_peer, ce_copy
  std::vector<double> big_bytes{16 << 20, 64 << 20, 256 << 20};  // scatter, incast, local
  // reduce_peers (bytes out; world x that loaded): within the L2 and beyond it
  std::vector<double> reduce_bytes{1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20};
  std::vector<double> l2_bytes{1 << 20, 4 << 20};                  // local copies the L2 holds (l2_GBps)
  std::vector<double> link_bytes{64 << 20, 128 << 20, 256 << 20};  // ce_link_oneway / _twoway (CUDA only)
  std::vector<int> peer_blocks{1, 2, 4, 8, 16, 32, 64};            // copy_peer's rate vs blocks
  std::vector<int> barrier_rounds{1, 4, 16};  // barrier_blocks rows: rounds per call, at each of peer_blocks
  // GEMM (cuBLASLt), graph and eager. `gemm` rows are what the fit uses: a grid over M, N and K
  // (N off the fused operations' values). `gemm_fused` rows are held out: the shapes the fused
  // operations run (core/fused.h: 8B N 1792 K 4096, 70B N 3584 K 8192; K split by the world in
  // mm_rs; M from a 512-row chunk to a whole 16384), judged against the fit's prediction.
  struct GemmShape {
    int m, n, k;
  };
  std::vector<GemmShape> gemm_fit_shapes() const {
    std::vector<GemmShape> v;
    for (int m : {256, 1024, 4096, 16384})
      for (int n : {1024, 2048, 4096, 8192})
        for (int k : {512, 2048, 8192}) v.push_back({m, n, k});
    return v;
  }
  // Concurrency (data for the model of a GEMM sharing the GPU; not fitted yet): the 70B GEMM
  // beside an SM copy kernel of each block count, and beside a copy-engine copy.
  GemmShape conc_gemm{16384, 3584, 8192};
  std::vector<int> conc_blocks{4, 16, 32, 66};
  double conc_copy_bytes = 256 << 20;
  std::vector<GemmShape> gemm_fused_shapes() const {
    std::vector<GemmShape> v;
    for (const GemmShape nk : {GemmShape{0, 1792, 4096}, GemmShape{0, 3584, 8192}})
      for (int split : {1, 2, 4, 8})
        for (int m : {512, 1024, 2048, 4096, 8192, 16384}) v.push_back({m, nk.n, nk.k / split});
    return v;
  }
#if !defined(__CUDA_ARCH__)
  // Refuses round counts the programs cannot run (kInvalidArgument).
  void check() const {
    for (int n : rounds)
      if (n < 1 || uint32_t(n) > kMaxRounds)
        fail(ErrorCode::kInvalidArgument,
             "calibration plan: " + std::to_string(n) + " rounds (1.." + std::to_string(kMaxRounds) + ")");
  }
#endif
};

}  // namespace symm::calib
