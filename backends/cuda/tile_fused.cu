// The tile device programs on the wgmma kernel (tile_fused.h): one persistent, warp-specialised
// kernel per (tile width, type), the program a run-time argument. Its pieces are tile_gemm.cuh's
// (TMA producer thread, shared-memory ring, two wgmma consumer warpgroups, register epilogue); what
// it adds is each core program's walk and flag protocol, taken from the core helpers (the mm_rs
// programs' release signals and reduce pieces: tile_mmrs.cuh):
//
//   TileGemm   (core/algos/tile_gemm.h): block b takes tiles b, b + blocks, ... of the grid in
//              its grouped order (symm::TileGrid), as the program does.
//   AgMmTiles  (core/algos/ag_mm_ce_tile_gemm.h): the tiles of AgMmTileWalk in arrival order. The
//              PRODUCER thread acquires a segment's data flag (ld.acquire.sys, bounded, as
//              BlockCtx::wait) before its first TMA load of that segment's rows of the gathered A,
//              then fence.proxy.async.global: the TMA loads are async-proxy reads, and the fence
//              orders them after the generic-proxy acquire. The consumers need no wait: their
//              data arrives through the ring's mbarriers, after the loads the acquire ordered.
//   MmRsTiles  (core/algos/mm_rs_tile_reduce.h): a compute block (the first nb - reduce_blocks),
//              band by band (MmRsTileLayout::grid's groups), every nc-th position of the band's
//              walk over every owner's rows (MmRsTileLayout::walk_begin / at), stored
//              into my `work` (pull) or the owner's slot (push); after each tile's stores the
//              consumer warpgroups meet on a named barrier and hand the tile to the signal warp (warp 3:
//              kBarTileDone / kBarTileTaken), whose lane 0 releases (fence.acq_rel.sys, then
//              st.relaxed.sys, as BlockCtx::signal) the tile's count into the owner's flag while the
//              consumers go on to the next tile's MMAs. A reduce block (the last reduce_blocks; no tile loads)
//              takes its tasks of every band but the last meanwhile, pulling their sources into its idle ring by bulk
//              copies (bulk_reduce_produce / bulk_reduce_consume), and every block then the last band's, by loads. That
//              last reduce, task by task: the consumer threads acquire every flag the task needs (the same slots and
//              values as the program's waits), one flag per thread, all at once; the named barrier extends the acquires
//              to the 256 threads, which sum the world sources in fp32 (rank order, as
//              BlockCtx::reduce). The epoch counter is the program's (pad::counter(b, kCounter)).
//   MmRsAccTiles (core/algos/mm_rs_gemm_ce_tile_acc.h): every blocks()-th tile of my rows, in
//              TileGrid's order. The program acquires a tile's chunk flags before its mma_tile;
//              here consumer threads acquire them (one peer's flag each) after the tile's
//              product, before its epilogue reads the peers' slots (the only reads they order: A
//              and B are local), and the named barrier extends the acquires to the 256 threads; store_tile adds the
//              world - 1 slots in order, as the verb's epilogue.
//   MmRsAccPushTiles (core/algos/mm_rs_tile_acc.h): every blocks()-th position of MmRsAccPushLayout's
//              walk (the peers' tiles, then mine). A peer's tile is stored into its slot at the
//              owner (over NVLink) and handed to the signal warp, whose lane 0 releases its wave, as
//              MmRsTiles' its count; an own tile's rows of the slots are prefetched into L2 before its MMAs, its
//              consumer threads acquire the peers' flags of it after them (one peer's per thread, then
//              the named barrier), and its epilogue adds the world - 1 slots (store_tile_plain's inputs).
//
// Every wait is bounded by the handle's timeout and, on expiry, fills the rank's error record
// (rank, block, slot, expected, seen) and poisons the rank, as BlockCtx::wait does.
#include <cuda.h>

#include <cstdlib>
#include <string>

#include "backends/cuda/block_ctx.cuh"
#include "backends/cuda/tile_epilogue.cuh"
#include "backends/cuda/tile_fused.h"
#include "backends/cuda/tile_launch.h"
#include "backends/cuda/tile_mmrs.cuh"
#include "backends/cuda/wait_report.cuh"

namespace symm::cuda::tile {
namespace {

using L = MmRsTileLayout;
using AccP = MmRsAccPushLayout;
using namespace mmrs;  // tile_mmrs.cuh: the mm_rs programs' signal and reduce pieces

struct ProgramParams {
  int program = 0;  // TileProgram
  MatArgs mat;
  // Diagnosis only (SYMM_DEBUG_MMRS_TILES, wrong results, timing runs): 1 = MmRsTiles without its
  // reduce, 2 = without its reduce and its signals; MmRsAccTiles: 1 = without its acquires, 2 =
  // without its acquires and its epilogue inputs; 3 (no-wait) = AgMmTiles without its acquires
  // (the copy engines' pushes still run beside it; the mm_rs programs take it as 2); 4
  // (own-from-work) = AgMmTiles loading my own rows from my slot of the gathered A (no plan writes
  // it; the fused bench fills it with my shard) instead of my shard (the shard the copy engines read meanwhile; the
  // mm_rs programs take it as 2); 5 (compute-plain) = MmRsTiles as 2, its tiles stored into my plain
  // C instead of the symmetric `work` (overwriting each other: timing only); MmRsTiles with its signals:
  // 6 (no-tail) without the last band's reduce, 7 (no-side) without the earlier bands' (the side
  // lanes' or the reduce blocks'), 8 (side-no-sum) the side lanes' acquires and bulk copies without
  // their sums and stores; MmRsAccPushTiles: 1 = without its acquires, 2-5 = without its acquires,
  // its epilogue inputs and its signals, 9 (acc-no-inputs) = without its epilogue inputs alone (what
  // the own tiles' reads of the peers' slots cost: the simulator's mma_in_GBps; MmRsAccTiles the same,
  // the other programs, which have no epilogue inputs, as 0); 0 = the program.
  int debug = 0;
};
// What of MmRsTiles a diagnosis mode keeps: its tiles' releases (every mode but 2-5), the earlier
// bands' reduce (side lanes or reduce blocks: the program, 6 and 8), the last band's (the program, 7
// and 8), the side lanes' sums and stores (all but 8).
__device__ __forceinline__ bool signals_on(const ProgramParams& pp) { return pp.debug < 2 || pp.debug >= 6; }
__device__ __forceinline__ bool early_reduce_on(const ProgramParams& pp) {
  return pp.debug == 0 || pp.debug == 9 || pp.debug == 6 || pp.debug == 8;  // 9: a program with no inputs
}
__device__ __forceinline__ bool tail_reduce_on(const ProgramParams& pp) {
  return pp.debug == 0 || pp.debug == 9 || pp.debug == 7 || pp.debug == 8;
}

// TT: the wgmma operand type (TileBF16 / TileF16); T: the same as core's element type.
// kFamily: 0 TileGemm, 1 AgMmTiles, 2 MmRsTiles (pull or push at run time), 3 MmRsAccTiles, 4 MmRsAccPushTiles: one
// kernel each, so a
// program's register allocation is its own (one path's registers do not spill another's).
template <int BN, class TT, class T, int kFamily>
__global__ void __launch_bounds__(384, 1)
    tile_program_kernel(const __grid_constant__ DeviceHandle h, const __grid_constant__ CUtensorMap ta,
                        const __grid_constant__ CUtensorMap ta2, const __grid_constant__ CUtensorMap tb,
                        const ProgramParams pp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Cfg = TileConfig<BN>;
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint32_t epoch;
  const Ring ring = ring_at<BN>(smem_raw);
  const MatArgs& p = pp.mat;
  const TileProgram prog = TileProgram(pp.program);
  constexpr bool mm_rs = kFamily == 2, epoch_on = kFamily == 2 || kFamily == 4;
  const uint32_t bk = blockIdx.x, nb = gridDim.x;
  const int me = h.rank, w = h.world;
  if (threadIdx.x == 0) {
    if (mm_rs) mbar_init(&side_bars(ring)[0], 1), mbar_init(&side_bars(ring)[1], 1);  // ring_init fences them
    ring_init<BN>(ring);
    if (epoch_on) {  // the program's ctx.advance(pad::counter(b, kCounter)): only this block writes it
      volatile uint32_t* ctr = h.pad_local + pad::counter(int(bk), L::kCounter);
      const uint32_t v = *ctr + 1;
      *ctr = v;
      epoch = v;
    }
  }
  __syncthreads();
  const int wg = threadIdx.x / 128;
  const int kblocks = (int(p.k) + kTileK - 1) / kTileK;

  if (wg == 0) {  // ---- the producer: one thread issues every load, in the program's tile order
    setmaxnreg_dec<40>();
    if constexpr (kFamily == 2) {  // the early tasks' sources by bulk copies: a reduce block's, or the side tasks
      const uint32_t rows = p.m / uint32_t(w), nr = p.reduce_blocks, nc = nb - nr;
      const symm::TileGrid g = L::grid(rows, p.n, p.chunk_rows, BN);
      const bool push = prog == TileProgram::kMmRsPush;
      T* work = static_cast<T*>(p.work);
      auto src_of = [&](int r, uint32_t u) { return task_src(h, work, push, r, rows, p.n, u); };
      if (bk >= nc) {  // a reduce block: every nr-th early task (bulk_reduce_produce)
        if (!early_reduce_on(pp)) return;
        RingPos pos;
        bulk_reduce_produce<BN, T>(h, ring, pos, g, 0, L::early_tasks(g), bk - nc, nr, nc, L::base(epoch), rows, p.n,
                                   src_of);
        return;
      }
      const bool sigwarp = signals_on(pp);
      if (threadIdx.x >= 96 && sigwarp) {  // warp 3: the tiles' releases, in the consumers' tile order
        const uint32_t base = L::base(epoch);
        walk_tiles(g, w, bk, nc, [&](int i, uint32_t j) {
          // warp 4 arrived: every consumer thread's stores of the tile are ordered before this
          asm volatile("bar.sync %0, 64;" ::"n"(kBarTileDone) : "memory");
          asm volatile("bar.arrive %0, 64;" ::"n"(kBarTileTaken) : "memory");
          if (threadIdx.x == 96)
            signal_release(h, L::owner(me, w, i), L::signal_slot(int(bk), me),
                           L::signal_value(base, L::count_at(g, w, nc, i, j)));
        });
        return;
      }
      if (threadIdx.x >= 32 &&
          L::side_tasks(g, nr)) {  // warps 1..3 (1..2 beside the signal warp): every nc-th early task
        if (early_reduce_on(pp) && (!sigwarp || threadIdx.x < 96))
          side_reduce<BN, T>(h, ring, g, static_cast<T*>(p.c), 0, L::early_tasks(g), bk, nc, nc, L::base(epoch), rows,
                             p.n, src_of, pp.debug != 8, sigwarp ? 64u : 96u);
        return;
      }
    }
    if constexpr (kFamily == 4) {  // warp 3: the peers' tiles' releases, in the consumers' order
      if (threadIdx.x >= 96 && signals_on(pp)) {
        const uint32_t rows = p.m / uint32_t(w), base = L::base(epoch);
        const uint32_t tiles = AccP::grid(rows, p.n, BN).tiles();
        for (uint32_t t = bk; t < AccP::positions(tiles, w); t += nb) {
          int i;
          uint32_t j;
          AccP::at(tiles, w, t, i, j);
          if (i == w) continue;  // my own tile: no release
          asm volatile("bar.sync %0, 64;" ::"n"(kBarTileDone) : "memory");
          asm volatile("bar.arrive %0, 64;" ::"n"(kBarTileTaken) : "memory");
          if (threadIdx.x == 96)
            signal_release(h, L::owner(me, w, i), AccP::signal_slot(t, nb, me), AccP::signal_value(base, t, nb));
        }
        return;
      }
    }
    if (threadIdx.x != 0) return;
    tma_prefetch_map(&ta);
    tma_prefetch_map(&tb);
    RingPos pos;
    if constexpr (kFamily == 0) {
      const symm::TileGrid g(p.m, p.n, BN);
      for (uint32_t t = bk; t < g.tiles(); t += nb)
        load_tile<BN>(ring, pos, &ta, &tb, int(g.row0(t)), int(g.col0(t)), kblocks);
    } else if constexpr (kFamily == 1) {
      tma_prefetch_map(&ta2);
      AgMmTileWalk walk(p, me, w, BN);
      uint32_t acquired = 0;  // as the program: the last segment whose flag this block acquired
      for (uint32_t t = bk; walk.seek(t); t += nb) {
        const symm::TileGrid g = walk.grid();
        const uint32_t j = walk.local(t);
        if (walk.seg == 0) {  // my own rows, from my shard
          if (pp.debug == 4)  // diagnosis: from my slot of the gathered A instead
            load_tile<BN>(ring, pos, &ta2, &tb, int(uint32_t(me) * walk.rows + g.row0(j)), int(g.col0(j)), kblocks);
          else
            load_tile<BN>(ring, pos, &ta, &tb, int(g.row0(j)), int(g.col0(j)), kblocks);
          continue;
        }
        if (acquired != walk.seg) {
          if (pp.debug != 3) detail::acquire_flag(h, walk.flag_slot(), 1);
          asm volatile("fence.proxy.async.global;" ::: "memory");
          acquired = walk.seg;
        }
        load_tile<BN>(ring, pos, &ta2, &tb, int(walk.row0() + g.row0(j)), int(g.col0(j)), kblocks);
      }
    } else if constexpr (kFamily == 3) {  // my rows of A (m x k, every rank's rows)
      const uint32_t rows = p.m / uint32_t(w);
      const symm::TileGrid g = MmRsAccLayout::grid(rows, p.n, p.chunk_rows, BN);
      for (uint32_t t = bk; t < g.tiles(); t += nb)
        load_tile<BN>(ring, pos, &ta, &tb, int(uint32_t(me) * rows + g.row0(t)), int(g.col0(t)), kblocks);
    } else if constexpr (kFamily == 4) {
      const uint32_t rows = p.m / uint32_t(w);
      const symm::TileGrid g = AccP::grid(rows, p.n, BN);
      for (uint32_t t = bk; t < AccP::positions(g.tiles(), w); t += nb) {
        int i;
        uint32_t j;
        AccP::at(g.tiles(), w, t, i, j);
        load_tile<BN>(ring, pos, &ta, &tb, int(uint32_t(L::owner(me, w, i)) * rows + g.row0(j)), int(g.col0(j)),
                      kblocks);
      }
    } else {
      const uint32_t rows = p.m / uint32_t(w), nc = nb - p.reduce_blocks;
      const symm::TileGrid g = L::grid(rows, p.n, p.chunk_rows, BN);
      if (bk < nc)  // a reduce block loads nothing
        walk_tiles(g, w, bk, nc, [&](int i, uint32_t j) {
          const int o = L::owner(me, w, i);
          load_tile<BN>(ring, pos, &ta, &tb, int(uint32_t(o) * rows + g.row0(j)), int(g.col0(j)), kblocks);
        });
    }
    return;
  }

  // ---- the consumers: the same walk, each tile's product and store (and mm_rs's signals, reduce)
  setmaxnreg_inc<232>();
  const int cw = wg - 1;
  RingPos pos;
  float acc[Cfg::kAcc];
  T* c = static_cast<T*>(p.c);
  if constexpr (kFamily == 0) {
    const symm::TileGrid g(p.m, p.n, BN);
    for (uint32_t t = bk; t < g.tiles(); t += nb) {
      mma_tile<BN, TT>(acc, ring, pos, kblocks, cw);
      store_tile_plain<BN, TT>(acc, c, p.n, int(p.m), int(p.n), int(g.row0(t)), int(g.col0(t)), cw, ring);
    }
    return;
  }
  if constexpr (kFamily == 1) {
    AgMmTileWalk walk(p, me, w, BN);
    for (uint32_t t = bk; walk.seek(t); t += nb) {
      const symm::TileGrid g = walk.grid();
      const uint32_t j = walk.local(t);
      mma_tile<BN, TT>(acc, ring, pos, kblocks, cw);
      store_tile_plain<BN, TT>(acc, c + walk.row0() * p.n, p.n, int(g.m), int(p.n), int(g.row0(j)), int(g.col0(j)), cw,
                               ring);
    }
    return;
  }
  if constexpr (kFamily == 3) {
    const uint32_t rows = p.m / uint32_t(w);
    const symm::TileGrid g = MmRsAccLayout::grid(rows, p.n, p.chunk_rows, BN);
    const T* slots = static_cast<const T*>(p.work);
    uint32_t acquired = ~0u;  // as the program: the chunk whose flags this block acquired last
    for (uint32_t t = bk; t < g.tiles(); t += nb) {
      if (pp.debug < 2)
        prefetch_inputs<BN, TT>(slots, p.n, int(rows), int(p.n), int(g.row0(t)), int(g.col0(t)), cw, w - 1,
                                std::size_t(rows) * p.n);
      mma_tile<BN, TT>(acc, ring, pos, kblocks, cw);
      const uint32_t k = g.row0(t) / p.chunk_rows;
      if (k != acquired && (pp.debug == 0 || pp.debug == 9)) {  // 9: the acquires kept, the inputs not
        // The chunk's flags, one peer's per consumer thread, all at once (not one thread's chain).
        const int i = int(threadIdx.x) - 128 + 1;
        if (i < w) detail::acquire_flag(h, pad::plan_flag(pad::kPlanData, int(k), (me + i) % w), 1);
        consumers_sync();  // extends each acquiring thread's acquire to the other consumer threads
        acquired = k;
      }
      store_tile_plain<BN, TT>(acc, c, p.n, int(rows), int(p.n), int(g.row0(t)), int(g.col0(t)), cw, ring,
                               pp.debug < 2 ? slots : nullptr, w - 1, std::size_t(rows) * p.n);
    }
    return;
  }
  if constexpr (kFamily == 4) {
    const uint32_t rows = p.m / uint32_t(w);
    const symm::TileGrid g = AccP::grid(rows, p.n, BN);
    const uint32_t base = L::base(epoch), tiles = g.tiles();
    const std::size_t slot = std::size_t(rows) * p.n;
    T* work = static_cast<T*>(p.work);
    const bool hand_over = signals_on(pp) && threadIdx.x / 32 == 4;  // as MmRsTiles' (family 2)
    uint32_t k = 0;                                                  // tiles handed over
    for (uint32_t t = bk; t < AccP::positions(tiles, w); t += nb) {
      int i;
      uint32_t j;
      AccP::at(tiles, w, t, i, j);
      const int rr0 = int(g.row0(j)), cc0 = int(g.col0(j));
      // A peer's tile goes into my slot at the owner, then to the signal warp; my own tile adds the
      // peers' slots of it after acquiring them. One epilogue call for both (two inlined copies spilled).
      const bool own = i == w;
      const int o = L::owner(me, w, i);
      T* dst = own ? static_cast<T*>(p.c) : peer_of(h, work, o) + std::size_t(MmRsAccLayout::slot(me, o, w)) * slot;
      const bool inputs = own && pp.debug < 2;
      if (inputs) prefetch_inputs<BN, TT>(work, p.n, int(rows), int(p.n), rr0, cc0, cw, w - 1, slot);
      mma_tile<BN, TT>(acc, ring, pos, kblocks, cw);
      if (own && (pp.debug == 0 || pp.debug == 9)) {  // every peer's tile j: one flag per consumer thread, all at once
        const int q = int(threadIdx.x) - 128 + 1;
        if (q < w) {
          const int r = (me + q) % w;
          detail::acquire_flag(h, AccP::wait_slot(tiles, nb, w, me, r, j),
                               AccP::wait_value(base, tiles, nb, w, me, r, j));
        }
        consumers_sync();  // extends each acquiring thread's acquire to the other consumer threads
      }
      store_tile_plain<BN, TT>(acc, dst, p.n, int(rows), int(p.n), rr0, cc0, cw, ring, inputs ? work : nullptr, w - 1,
                               slot);
      if (!own) {
        consumers_sync();  // every consumer thread's stores of the tile, before warp 4 hands it over
        if (hand_over) warp4_tile_done(k);
        ++k;
      }
    }
    if (hand_over) warp4_tiles_end(k);
    return;
  }
  if constexpr (kFamily == 2) {
    const bool push = prog == TileProgram::kMmRsPush;
    const uint32_t rows = p.m / uint32_t(w), nr = p.reduce_blocks, nc = nb - nr;
    const symm::TileGrid g = L::grid(rows, p.n, p.chunk_rows, BN);
    const uint32_t base = L::base(epoch);
    T* work = static_cast<T*>(p.work);
    // 2. reduce task u: wait for its tiles, then sum (the program's task)
    auto task = [&](uint32_t u) {
      acquire_task(h, g, u, nc, base, threadIdx.x - 128, 256);
      consumers_sync();  // extends each acquiring thread's acquire to the other consumer threads
      const uint4* src[kNodeWorld];
#pragma unroll
      for (int r = 0; r < kNodeWorld; ++r)
        src[r] = r < w ? reinterpret_cast<const uint4*>(task_src(h, work, push, r, rows, p.n, u)) : nullptr;
      reduce_vectors<T>(reinterpret_cast<uint4*>(c + std::size_t(L::task_row0(u)) * p.n), src, w,
                        std::size_t(L::task_rows(rows, u)) * p.n / 8, int(threadIdx.x) - 128, 256);
    };
    // The tasks mine, mine + step, ... of [u0, u1).
    auto reduce = [&](uint32_t u0, uint32_t u1, uint32_t mine, uint32_t step) {
      if (!tail_reduce_on(pp)) return;
      for (uint32_t u = L::first_of(u0, mine, step); u < u1; u += step) task(u);
    };
    if (bk < nc) {
      // A tile's release (its fence waits until every consumer thread's stores of it are performed: over
      // NVLink with push, a whole tile's) is the signal warp's, off the MMAs' path: per tile the
      // consumers meet, warp 4 hands the tile over (warp4_tile_done) and goes on. Before it, thread 128
      // released each tile itself (push: a tile later, after the next tile's MMAs; 2x H200,
      // experiments/results/h200x2/mmrs_sigwarp_207ac15: 70B M 16384 pull 851.5 -> 836.2 us sustained).
      const bool hand_over = signals_on(pp) && threadIdx.x / 32 == 4;
      uint32_t k = 0;  // tiles handed over
      // 1. walk_tiles' walk, written out: as a lambda over walk_tiles the 128 x 256 kernels spilled 4 bytes more
      for (uint32_t s = 0; s < L::bands(g); ++s)
        for (uint32_t t = L::first_of(L::walk_begin(g, w, s), bk, nc); t < L::walk_end(g, w, s); t += nc, ++k) {
          int i;
          uint32_t j;
          L::at(g, w, s, t, i, j);
          const int o = L::owner(me, w, i);
          // (Diagnosis 5, compute-plain: compute-only, every tile stored into my plain C at its row
          // within the owner's rows, whatever the owner: is the symmetric heap the stores' cost?)
          T* dst = pp.debug == 5 ? c : (push ? peer_of(h, work, o) : work) + L::dst_offset(push, o, me, rows, p.n);
          mma_tile<BN, TT>(acc, ring, pos, kblocks, cw);
          store_tile_plain<BN, TT>(acc, dst, p.n, int(rows), int(p.n), int(g.row0(j)), int(g.col0(j)), cw, ring);
          consumers_sync();  // every consumer thread's stores of the tile, before warp 4 hands it over
          if (hand_over) warp4_tile_done(k);
        }
      if (hand_over) warp4_tiles_end(k);
    } else if (early_reduce_on(pp)) {  // every band but the last, beside the compute, from the bulk copies
      bulk_reduce_consume<BN, T>(ring, pos, w, c, 0, L::early_tasks(g), bk - nc, nr, rows, p.n, cw);
    }
    // The rest, every block: the last band (after reduce blocks or the side tasks), or all.
    reduce(L::early_tasks(g), L::tasks(rows), bk, nb);
  }
#endif
}

// Program -> kernel family (tile_program_kernel's kFamily); -1 for a program it does not run.
int family_of(int program) {
  switch (TileProgram(program)) {
    case TileProgram::kGemm: return 0;
    case TileProgram::kAgMm: return 1;
    case TileProgram::kMmRsPull:
    case TileProgram::kMmRsPush: return 2;
    case TileProgram::kMmRsAcc: return 3;
    case TileProgram::kMmRsPushAcc: return 4;
    default: return -1;
  }
}

template <int BN, class TT, class T, int F>
cudaError_t launch_family(cudaStream_t stream, const DeviceHandle& h, const CUtensorMap& ta, const CUtensorMap& ta2,
                          const CUtensorMap& tb, const ProgramParams& pp, int blocks) {
  using Cfg = TileConfig<BN>;
  constexpr int smem = Cfg::kSmemBytes + (F == 2 ? kSideBytes : 0);  // MmRsTiles: the side reduce's buffers
  static_assert(smem <= Cfg::kSmemLimit - 1024, "the side reduce's buffers must fit beside the ring");
  const cudaError_t attr = set_max_dynamic_smem<tile_program_kernel<BN, TT, T, F>>(smem);
  if (attr != cudaSuccess) return attr;
  tile_program_kernel<BN, TT, T, F><<<blocks, 384, smem, stream>>>(h, ta, ta2, tb, pp);
  return cudaGetLastError();
}

template <int BN, class TT, class T>
const void* kernel_of(int family) {
  switch (family) {
    case 0: return reinterpret_cast<const void*>(&tile_program_kernel<BN, TT, T, 0>);
    case 1: return reinterpret_cast<const void*>(&tile_program_kernel<BN, TT, T, 1>);
    case 2: return reinterpret_cast<const void*>(&tile_program_kernel<BN, TT, T, 2>);
    case 3: return reinterpret_cast<const void*>(&tile_program_kernel<BN, TT, T, 3>);
    case 4: return reinterpret_cast<const void*>(&tile_program_kernel<BN, TT, T, 4>);
    default: return nullptr;
  }
}

template <int BN, class TT, class T>
cudaError_t launch(cudaStream_t stream, const DeviceHandle& h, const CUtensorMap& ta, const CUtensorMap& ta2,
                   const CUtensorMap& tb, const ProgramParams& pp, int blocks) {
  switch (family_of(pp.program)) {
    case 0: return launch_family<BN, TT, T, 0>(stream, h, ta, ta2, tb, pp, blocks);
    case 1: return launch_family<BN, TT, T, 1>(stream, h, ta, ta2, tb, pp, blocks);
    case 2: return launch_family<BN, TT, T, 2>(stream, h, ta, ta2, tb, pp, blocks);
    case 3: return launch_family<BN, TT, T, 3>(stream, h, ta, ta2, tb, pp, blocks);
    case 4: return launch_family<BN, TT, T, 4>(stream, h, ta, ta2, tb, pp, blocks);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

const void* program_kernel_ptr(int program, int tile_n, bool bf16) {
  const int f = family_of(program);
  if (tile_n == 256) return bf16 ? kernel_of<256, TileBF16, symm::bf16>(f) : kernel_of<256, TileF16, symm::fp16>(f);
  if (tile_n == 128) return bf16 ? kernel_of<128, TileBF16, symm::bf16>(f) : kernel_of<128, TileF16, symm::fp16>(f);
  return nullptr;
}
cudaError_t launch_program(cudaStream_t stream, const DeviceHandle& h, const CUtensorMap& ta, const CUtensorMap& ta2,
                           const CUtensorMap& tb, int program, const MatArgs& a, int tile_n, bool bf16, int blocks) {
  ProgramParams pp;
  pp.program = program;
  pp.mat = a;
  static const int debug = [] {
    const char* e = std::getenv("SYMM_DEBUG_MMRS_TILES");
    const std::string v = e ? e : "";
    return v == "no-reduce"       ? 1
           : v == "compute-only"  ? 2
           : v == "no-wait"       ? 3
           : v == "own-from-work" ? 4
           : v == "compute-plain" ? 5
           : v == "no-tail"       ? 6
           : v == "no-side"       ? 7
           : v == "side-no-sum"   ? 8
           : v == "acc-no-inputs" ? 9
                                  : 0;
  }();
  pp.debug = debug;
  if (tile_n == 256)
    return bf16 ? launch<256, TileBF16, symm::bf16>(stream, h, ta, ta2, tb, pp, blocks)
                : launch<256, TileF16, symm::fp16>(stream, h, ta, ta2, tb, pp, blocks);
  if (tile_n == 128)
    return bf16 ? launch<128, TileBF16, symm::bf16>(stream, h, ta, ta2, tb, pp, blocks)
                : launch<128, TileF16, symm::fp16>(stream, h, ta, ta2, tb, pp, blocks);
  return cudaErrorInvalidValue;
}

}  // namespace symm::cuda::tile
