// The tile GEMM's epilogue (step 3 of tile_gemm.cuh): a consumer warpgroup's 64 x BN fp32
// accumulators to the output type, C_in added in fp32 when given, one rounding.
//   store_tile:        from registers: a transpose within each quad of threads, then 16-byte
//                      stores; pairs predicated at the matrix edges (any tile, any C_in)
//   store_tile_staged: through shared memory: stmatrix, then whole 128-byte row segments (a
//                      tile inside the matrix)
//   store_tile_plain:  the staged store inside the matrix (its inputs added in the accumulators
//                      first: add_inputs, after prefetch_inputs before the MMAs), store_tile at
//                      the edges: the same result either way
#pragma once

#include "backends/cuda/tile_gemm.cuh"

namespace symm::cuda::tile {

// ---- 3. consumers: the tile's store ---------------------------------------------------------------
template <class T>
struct Out;
template <>
struct Out<TileBF16> {
  using Pair = __nv_bfloat162;
  using One = __nv_bfloat16;
  static __device__ __forceinline__ Pair pack(float x, float y) { return __floats2bfloat162_rn(x, y); }
  static __device__ __forceinline__ float2 unpack(Pair p) { return __bfloat1622float2(p); }
  static __device__ __forceinline__ One one(float x) { return __float2bfloat16_rn(x); }
  static __device__ __forceinline__ float one(One x) { return __bfloat162float(x); }
};
template <>
struct Out<TileF16> {
  using Pair = __half2;
  using One = __half;
  static __device__ __forceinline__ Pair pack(float x, float y) { return __floats2half2_rn(x, y); }
  static __device__ __forceinline__ float2 unpack(Pair p) { return __half22float2(p); }
  static __device__ __forceinline__ One one(float x) { return __float2half_rn(x); }
  static __device__ __forceinline__ float one(One x) { return __half2float(x); }
};

// The wgmma accumulator layout: thread l of warp w of the warpgroup holds, for j < BN / 8,
// rows 16 w + l / 4 (+ 8) and columns 8 j + 2 (l % 4) (+ 1) as acc[4 j + {0, 1}] (+ {2, 3} for +8).
//
// Inside the matrix, the four threads of a quad swap values (a 4 x 4 transpose of column pairs
// over four consecutive j) so that each holds 8 consecutive columns of its row and stores them
// in one 16-byte access: a quarter of the store instructions of pairwise 4-byte stores, which
// cost the tile several microseconds at every tile's end (measured: h200x1/tile_gemm/v1). The
// edges store pairs, predicated.
// c_in (optional): n_in input tiles in_stride elements apart, added in order before the rounding.
template <int BN, class T>
__device__ __forceinline__ void store_tile(const float (&acc)[TileConfig<BN>::kAcc], void* c, const void* c_in,
                                           std::size_t ldc, int m, int n, int m0, int n0, int wg, int n_in = 1,
                                           std::size_t in_stride = 0) {
  using O = Out<T>;
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32, q = lane % 4;
  const int row = m0 + wg * 64 + warp * 16 + lane / 4;
  auto* cp = static_cast<typename O::One*>(c);
  const auto* ci = static_cast<const typename O::One*>(c_in);
  if (m0 + kTileM <= m && n0 + BN <= n) {
    static_assert(BN % 32 == 0, "the quad transpose takes j four at a time");
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const std::size_t roff = std::size_t(row + 8 * h) * ldc + std::size_t(n0);
      // The first input's vectors of this row, loaded before the row's stores: issued after a
      // store, a load may not pass it (c and c_in could alias), and each would wait out a full
      // HBM latency (~45 us over an 8B tile program's waves on 2x H100).
      uint4 pre[BN / 32];
#pragma unroll
      for (int g = 0; g < BN / 32; ++g)
        if (ci && n_in > 0) pre[g] = *reinterpret_cast<const uint4*>(ci + roff + std::size_t(8 * (4 * g + q)));
#pragma unroll
      for (int g = 0; g < BN / 32; ++g) {
        // in[i]: this lane's pair of j = 4 g + i; out[i]: lane i's pair of j = 4 g + q.
        float out[8];
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int send = (q - r) & 3, from = (q + r) & 3;
          float x = 0, y = 0;
#pragma unroll
          for (int i = 0; i < 4; ++i)
            if (i == send) x = acc[4 * (4 * g + i) + 2 * h], y = acc[4 * (4 * g + i) + 2 * h + 1];
          x = __shfl_sync(0xffffffffu, x, (lane & ~3) | from);
          y = __shfl_sync(0xffffffffu, y, (lane & ~3) | from);
#pragma unroll
          for (int i = 0; i < 4; ++i)
            if (i == from) out[2 * i] = x, out[2 * i + 1] = y;
        }
        const std::size_t off = roff + std::size_t(8 * (4 * g + q));
        for (int s = 0; ci && s < n_in; ++s) {
          const uint4 v = s == 0 ? pre[g] : *reinterpret_cast<const uint4*>(ci + std::size_t(s) * in_stride + off);
          const typename O::Pair* p = reinterpret_cast<const typename O::Pair*>(&v);
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const float2 f = O::unpack(p[i]);
            out[2 * i] += f.x, out[2 * i + 1] += f.y;
          }
        }
        uint4 w;
        typename O::Pair* pw = reinterpret_cast<typename O::Pair*>(&w);
#pragma unroll
        for (int i = 0; i < 4; ++i) pw[i] = O::pack(out[2 * i], out[2 * i + 1]);
        *reinterpret_cast<uint4*>(cp + off) = w;
      }
    }
    return;
  }
  const int col0 = n0 + q * 2;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int rr = row + 8 * h, cc = col0 + 8 * j;
      float x = acc[4 * j + 2 * h], y = acc[4 * j + 2 * h + 1];
      const std::size_t off = std::size_t(rr) * ldc + std::size_t(cc);
      if (rr < m && cc + 1 < n) {
        for (int s = 0; ci && s < n_in; ++s) {
          const float2 v = O::unpack(*reinterpret_cast<const typename O::Pair*>(ci + std::size_t(s) * in_stride + off));
          x += v.x, y += v.y;
        }
        *reinterpret_cast<typename O::Pair*>(cp + off) = O::pack(x, y);
      } else if (rr < m && cc < n) {
        for (int s = 0; ci && s < n_in; ++s) x += O::one(ci[std::size_t(s) * in_stride + off]);
        cp[off] = O::one(x);
      }
    }
  }
}

// The staged epilogue of an interior tile without C_in (the plain GEMM's common case): per pass
// of 64 columns (32 for the last of a 224-wide tile), each warp writes its 16 rows as bf16 / fp16
// into its consumer's 8 KB of shared memory with stmatrix (the wgmma accumulator layout is
// stmatrix's m8n8 fragment: acc[4j..4j+3] are the rows 0-7 and 8-15 of column group j), 16-byte
// chunks XOR-swizzled by row so that neither the stmatrix rows nor the read-back collide in banks;
// then the warpgroup reads the pass back, 16 bytes a thread, and stores whole 128-byte row
// segments. No shuffles: store_tile's quad transposes cost ~2000 instructions a thread per tile
// (128 shuffles and their selects at BN 256), this ~150. A named barrier per consumer (128 threads)
// between writing and reading, and before the buffer is written again.
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}
// Named barriers 3 and 4 (barrier 0 is __syncthreads; the fused programs' consumers_sync is 1, the
// ping-pong kernel's turns 1 and 2).
__device__ __forceinline__ void consumer_bar(int wg) { asm volatile("bar.sync %0, 128;" ::"r"(3 + wg) : "memory"); }
template <class T>
__device__ __forceinline__ uint32_t pack_u32(float x, float y) {
  const typename Out<T>::Pair p = Out<T>::pack(x, y);
  return *reinterpret_cast<const uint32_t*>(&p);
}

template <int BN, class T>
__device__ __forceinline__ void store_tile_staged(const float (&acc)[TileConfig<BN>::kAcc], void* c, std::size_t ldc,
                                                  int m0, int n0, int wg, uint8_t* staging) {
  static_assert(BN % 32 == 0, "passes of 64 columns, the last of 32");
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32, mi = lane / 8;
  const uint32_t base = smem_u32(staging);
  const int srow = warp * 16 + (mi % 2) * 8 + lane % 8;  // the row this lane addresses for stmatrix
  auto* cp = static_cast<typename Out<T>::One*>(c) + std::size_t(m0 + wg * 64) * ldc + std::size_t(n0);
#pragma unroll
  for (int c0 = 0; c0 < BN; c0 += 64) {
    constexpr int kFull = 64;
    const int w = BN - c0 < kFull ? BN - c0 : kFull;  // compile-time after unrolling
#pragma unroll
    for (int jj = 0; jj < w / 8; jj += 2) {
      const int j = c0 / 8 + jj;
      const int chunk = jj + mi / 2;
      stmatrix_x4(base + uint32_t(srow * 128 + ((chunk ^ (srow % 8)) * 16)), pack_u32<T>(acc[4 * j], acc[4 * j + 1]),
                  pack_u32<T>(acc[4 * j + 2], acc[4 * j + 3]), pack_u32<T>(acc[4 * j + 4], acc[4 * j + 5]),
                  pack_u32<T>(acc[4 * j + 6], acc[4 * j + 7]));
    }
    consumer_bar(wg);
    const int cpr = w / 8;  // 16-byte chunks per row in this pass
#pragma unroll
    for (int k = 0; k < 64 * cpr / 128; ++k) {
      const int i = t + 128 * k, row = i / cpr, ch = i % cpr;
      uint4 v;
      asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "r"(base + uint32_t(row * 128 + ((ch ^ (row % 8)) * 16))));
      *reinterpret_cast<uint4*>(cp + std::size_t(row) * ldc + std::size_t(c0 + ch * 8)) = v;
    }
    consumer_bar(wg);
  }
}

// Before a tile's MMAs (consumer wg): its rows of the n_in inputs (in_stride elements apart) into L2
// (prefetch.global.L2, two 128-byte lines a thread at BN 256), so that add_inputs' loads, long
// after, hit L2 instead of waiting on HBM. A line written after the prefetch (a copy engine's
// push landing later) is updated in L2 like any other; nothing is read into L1 here.
template <int BN, class T>
__device__ __forceinline__ void prefetch_inputs(const void* c_in, std::size_t ldc, int m, int n, int m0, int n0, int wg,
                                                int n_in, std::size_t in_stride) {
  if (!c_in || m0 + kTileM > m || n0 + BN > n) return;
  constexpr int kLines = (BN * 2 + 127) / 128;  // 128-byte lines per row of the tile
  const auto* ci = static_cast<const typename Out<T>::One*>(c_in);
  const int t = threadIdx.x % 128;
  for (int s = 0; s < n_in; ++s)
    for (int i = t; i < 64 * kLines; i += 128) {
      const int row = i / kLines, line = i % kLines;
      const auto* a =
          ci + std::size_t(s) * in_stride + std::size_t(m0 + wg * 64 + row) * ldc + std::size_t(n0 + 64 * line);
      asm volatile("prefetch.global.L2 [%0];" ::"l"(a));
    }
}

// acc += the n_in inputs at the tile, in order, in the accumulator layout (fp32: what store_tile's
// C_in path adds before its one rounding, so the result is the same bit for bit). Interior tiles
// only; 4-byte loads, eight column groups at a time.
template <int BN, class T>
__device__ __forceinline__ void add_inputs(float (&acc)[TileConfig<BN>::kAcc], const void* c_in, std::size_t ldc,
                                           int m0, int n0, int wg, int n_in, std::size_t in_stride) {
  using O = Out<T>;
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32, q = lane % 4;
  const int row = m0 + wg * 64 + warp * 16 + lane / 4;
  const auto* ci = static_cast<const typename O::One*>(c_in);
  for (int s = 0; s < n_in; ++s) {
    const auto* base = ci + std::size_t(s) * in_stride + std::size_t(row) * ldc + std::size_t(n0 + 2 * q);
#pragma unroll
    for (int j0 = 0; j0 < BN / 8; j0 += 8) {
      typename O::Pair v[8][2];
#pragma unroll
      for (int jj = 0; jj < 8; ++jj)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (j0 + jj < BN / 8)
            v[jj][h] = *reinterpret_cast<const typename O::Pair*>(base + std::size_t(8 * h) * ldc +
                                                                  std::size_t(8 * (j0 + jj)));
#pragma unroll
      for (int jj = 0; jj < 8; ++jj)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (j0 + jj < BN / 8) {
            const float2 f = O::unpack(v[jj][h]);
            acc[4 * (j0 + jj) + 2 * h] += f.x;
            acc[4 * (j0 + jj) + 2 * h + 1] += f.y;
          }
    }
  }
}

// A tile, plus n_in inputs when c_in is given: inside the matrix (m x n), the inputs added in the
// accumulators and the tile staged (store_tile_staged); at the edges, store_tile. The same result
// either way (one rounding after the inputs).
template <int BN, class T>
__device__ __forceinline__ void store_tile_plain(float (&acc)[TileConfig<BN>::kAcc], void* c, std::size_t ldc, int m,
                                                 int n, int m0, int n0, int wg, const Ring& ring,
                                                 const void* c_in = nullptr, int n_in = 1, std::size_t in_stride = 0) {
  if (m0 + kTileM <= m && n0 + BN <= n) {
    if (c_in) add_inputs<BN, T>(acc, c_in, ldc, m0, n0, wg, n_in, in_stride);
    store_tile_staged<BN, T>(acc, c, ldc, m0, n0, wg, staging_at<BN>(ring, wg));
  } else {
    store_tile<BN, T>(acc, c, c_in, ldc, m, n, m0, n0, wg, n_in, in_stride);
  }
}

}  // namespace symm::cuda::tile
