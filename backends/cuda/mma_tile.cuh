// The verb mma_tile (core/verbs.h) on CUDA: a SIMPLE, correct per-block tile loop on WMMA
// (mma.sync 16x16x16, fp32 accumulators), so that the tile device programs instantiate and run on
// both backends. It is NOT the fast path: no TMA, no wgmma, no pipelining (one shared-memory
// stage, loads then MMAs). The Hopper mainloop (wgmma + TMA, warp-specialised: issue 24 item 2)
// replaces the body of mma_tile_wmma and keeps this signature.
//
// Layout: the block stages a kTileM x kStageK slice of A and a kStageK x kTileN slice of B in shared
// memory (16-byte vector loads, zero-filled outside m, n, k), each warp owns every warps-th of the
// 8 x 8 grid of 16 x 16 accumulator fragments (8..16 warps: at most 8 fragments a warp). Epilogue:
// each fragment goes through a per-warp 16 x 16 fp32 scratch, is rounded to T and stored with
// 16-byte stores (c may be a peer's address: plain stores over NVLink, ordered by a later release).
// Included by block_ctx.cuh (after detail::pack).
#pragma once

#include <mma.h>

#include <type_traits>

namespace symm::cuda::detail {

inline constexpr int kStageK = 32;
inline constexpr int kLdA = kStageK + 8;  // padded row strides (elements, multiples of 8 for WMMA)
inline constexpr int kLdB = kTileN + 8;
inline constexpr int kFrags = (kTileM / 16) * (kTileN / 16);
inline constexpr int kMaxFragsPerWarp = 8;  // blocks of 256 .. 512 threads

template <class T>
__device__ void mma_tile_wmma(T* c, std::size_t ldc, const T* a, std::size_t lda, const T* b, std::size_t ldb, int m,
                              int n, int k, const T* c_in = nullptr, int n_in = 0, std::size_t in_stride = 0) {
  namespace wmma = nvcuda::wmma;
  static_assert(std::is_same_v<T, bf16> || std::is_same_v<T, fp16>, "mma_tile takes bf16 or fp16");
  using W = std::conditional_t<std::is_same_v<T, bf16>, __nv_bfloat16, __half>;
  __shared__ __align__(128) uint16_t sa_raw[kTileM * kLdA];
  __shared__ __align__(128) uint16_t sb_raw[kStageK * kLdB];
  __shared__ __align__(128) float scratch[16][16 * 16];
  W* sa = reinterpret_cast<W*>(sa_raw);
  W* sb = reinterpret_cast<W*>(sb_raw);
  const int warps = int(blockDim.x) / 32, warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  if (blockDim.x % 32 != 0 || warps < kFrags / kMaxFragsPerWarp || warps > 16) __trap();

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kMaxFragsPerWarp];
#pragma unroll
  for (int i = 0; i < kMaxFragsPerWarp; ++i) wmma::fill_fragment(acc[i], 0.0f);

  for (int k0 = 0; k0 < k; k0 += kStageK) {
    __syncthreads();                                    // the previous stage has been consumed
    constexpr int kAV = kStageK / 8, kBV = kTileN / 8;  // 16-byte vectors per staged row
    for (int v = int(threadIdx.x); v < kTileM * kAV; v += int(blockDim.x)) {
      const int r = v / kAV, cv = v % kAV, col = k0 + cv * 8;
      uint4 val = make_uint4(0, 0, 0, 0);
      if (r < m && col < k) val = *reinterpret_cast<const uint4*>(a + std::size_t(r) * lda + std::size_t(col));
      *reinterpret_cast<uint4*>(sa_raw + r * kLdA + cv * 8) = val;
    }
    for (int v = int(threadIdx.x); v < kStageK * kBV; v += int(blockDim.x)) {
      const int r = v / kBV, cv = v % kBV, row = k0 + r, col = cv * 8;
      uint4 val = make_uint4(0, 0, 0, 0);
      if (row < k && col < n) val = *reinterpret_cast<const uint4*>(b + std::size_t(row) * ldb + std::size_t(col));
      *reinterpret_cast<uint4*>(sb_raw + r * kLdB + cv * 8) = val;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kMaxFragsPerWarp; ++i) {
      const int f = warp + i * warps;
      if (f < kFrags) {
        const int fi = f / (kTileN / 16), fj = f % (kTileN / 16);
#pragma unroll
        for (int kk = 0; kk < kStageK; kk += 16) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, W, wmma::row_major> fa;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, W, wmma::row_major> fb;
          wmma::load_matrix_sync(fa, sa + fi * 16 * kLdA + kk, kLdA);
          wmma::load_matrix_sync(fb, sb + kk * kLdB + fj * 16, kLdB);
          wmma::mma_sync(acc[i], fa, fb, acc[i]);
        }
      }
    }
  }

  // Epilogue: one rounding to T, 16-byte stores (n is a multiple of 8: a vector is all in or out).
#pragma unroll
  for (int i = 0; i < kMaxFragsPerWarp; ++i) {
    const int f = warp + i * warps;
    if (f < kFrags) {
      const int fi = f / (kTileN / 16), fj = f % (kTileN / 16);
      wmma::store_matrix_sync(scratch[warp], acc[i], 16, wmma::mem_row_major);
      __syncwarp();
      const int row = lane / 2, c8 = (lane % 2) * 8, gr = fi * 16 + row, gc = fj * 16 + c8;
      if (gr < m && gc < n) {
        float f[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) f[e] = scratch[warp][row * 16 + c8 + e];
        const std::size_t off = std::size_t(gr) * ldc + std::size_t(gc);
        for (int s = 0; s < n_in; ++s) {  // the epilogue's inputs, in order (core/verbs.h)
          float g[8];
          unpack<T>(*reinterpret_cast<const uint4*>(c_in + std::size_t(s) * in_stride + off), g);
#pragma unroll
          for (int e = 0; e < 8; ++e) f[e] += g[e];
        }
        *reinterpret_cast<uint4*>(c + off) = pack<T>(f);
      }
      __syncwarp();
    }
  }
}

}  // namespace symm::cuda::detail
