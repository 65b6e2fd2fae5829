// Calibration: microbenchmark rows (what `symmcoll calibrate` measures on GPUs, or predicts on
// the simulator), their CSV, and the fit that turns them into a machine file.
//
// One row is one microbenchmark at one setting: `time_us` is the time of one call, launch to
// the end of its last block (as RunResult::time_us; CUDA: a graph replay of many calls / calls).
// What `x` means, and the parameter each bench isolates (core/calib_programs.h):
//
//   bench             x                 model of time_us                        parameter
//   launch            0                 L                                       launch_graph_us / launch_eager_us
//   pingpong_relaxed  round trips       c + 2x f                                flag_latency_us = f
//   pingpong_acqrel   round trips       c + 2x (f + a)                          acquire_us = a
//   pingpong_store    round trips       c + 2x (f + a + s + 16/B + l)           store_latency_us = s
//                                       (l: local_load_us, the hop's copy loads its vector first)
//   pingpong_relaxed_flush  round trips  the relaxed ping-pong with a local 16-byte copy after each signal:
//                                       data only, no key (a local store and load between the flag and the spin)
//   load_chain        16-byte loads     c + x (r + 16/B), back to back: two loads per 32-byte sector,
//                                       the second from the cache (data only where load_chain_lines
//                                       rows are read: its slope is the mean of a round trip and a hit)
//   load_chain_lines  16-byte loads     c + x (r + 16/B), a line apart: every load a round trip       load_rtt_us = r
//   peer_copy_chain   4 KiB copies      rank 0's copies from its peers in turn (1, 2, .., world-1), one
//                                       after another: data only, no key (what a program's successive
//                                       copies from peers cost, beside load_chain_lines' single loads)
//   peer_copy_chain_all  4 KiB copies   the same on every rank at once: data only, no key (whether
//                                       the chains slow each other; on 2x / 4x H200 by 1.7 % at most)
//   fence_chain_local / fence_chain_peer  rounds  rank 0's 16-byte copy into its own / rank 1's memory, then a
//                                       release signal to itself, every round: data only, no key (what a
//                                       release's fence costs with a local or a remote store to publish:
//                                       1.76-1.86 us a round on H100, ~1.6 of it the fence, over NVLink and
//                                       on one GPU alike, experiments/results/h100x4/calib_fence_f369908)
//   acquire_peer_flags  acquires        c + x w (x >= 16), w = (1 - share) a:   release_fence_share = 1 - w / a
//                                       waits on flags a peer set (all set when they start), one each,
//                                       after the peer's release (0.20 us each on 2x H100, 0.18 on 4x H100,
//                                       against 1.55-1.58 us for the ping-pong's acquire/release hop:
//                                       most of a hop is the release's fence)
//   acquire_chain     acquires          waits on a flag the block set itself, back to back: data only, no key
//                                       (0.18-0.19 us each on H100, as acquire_peer_flags. As a key of its
//                                       own beside a bench-fitted release_fence_share it made world 4's
//                                       barriers 15-20 % optimistic)
//   local_reduce_chain  reduces         c + x r: reduces of one local 16-byte vector, each from     local_load_us = r
//                                       a line of its own (L2, not L1), one after another
//   peer_reduce_chain   reduces         the same over lines a peer just stored (one bulk copy,   local_load_us = r
//                                       a release; the reducer acquires first): where a run has
//                                       them, these rows set the key (what st_reduce's reduce reads)
//   ll_unpack_chain   passes            a block's flagged packets (16 KiB of data, put into its own
//                                       memory once) unpacked again and again: c + x 2 x 16 KiB / R
//                                                                               ll_read_GBps = R
//   ll_reduce_chain   passes            the same reduced with a plain source (as the LL reductions at
//                                       world 2 read): data only, no key
//   exchange          rounds            every rank signals every peer and waits for them, launched as
//                                       the bench launches programs: data only, no key (the floor
//                                       under a one-kernel all-reduce: one round per call)
//   (both)            the intercepts     mean(c_relaxed, c_load) - L             peer_kernel_us
//   launch_busy       16-byte loads     a load chain launched as the bench launches device
//                                       programs, graph and eager: mean(eager - graph)  launch_eager_gap_us
//                                       and, beside load_chain's rows of the same loads (launched
//                                       without PDL), graph: mean(load_chain - launch_busy)  pdl_saving_us
//   exchange_busy     rounds            the exchange launched as launch_busy, graph and eager: data
//                                       only, no key (relaxed rounds: eager costs launch_busy's gap)
//   barrier_busy      rounds, 1 block   the collectives' barrier (barrier_landing) launched as
//                                       launch_busy, graph and eager: mean(eager - graph)
//                                       - launch_eager_gap_us                  eager_release_us
//   barrier_blocks    rounds, at 1..64  rounds of the collectives' barrier (acquire / release), every
//   barrier_blocks_relaxed    blocks    block of every rank; and relaxed: a round at B blocks over one at
//                                       1 block, less the relaxed one's, about (B - 1) g: g is the
//                                       value whose simulated rows match (n >= 16)  fence_gap_us = g
//   barrier_landing   rounds, 1 block   rounds of the collectives' barrier itself (its waits in the
//   barrier_landing_relaxed             order the flags land; barrier_blocks' wait in the order the
//                                       signals go out), world >= 3: with barrier_blocks at 1 block,
//                                       the values whose simulated rounds match   signal_next_us,
//                                                                                 wait_next_us
//   (the launch, exchange, launch_busy and barrier_blocks rows are launched with programmatic
//   dependent launch, as the bench launches device programs; every other row without it)
//   copy_peer         bytes             c + x / (blocks B), blocks <= 2          block_GBps = B
//   reduce_peers      bytes out         rank 0's blocks reduce every rank's input:  block_reduce_GBps = R
//                                       c + world x / (blocks R), blocks <= 2
//   copy_scatter      bytes out of 0    c + x / E                               nvlink_egress_GBps = E
//   copy_incast       bytes into 0      c + x / I                               nvlink_ingress_GBps = I
//   copy_local        bytes             c + x' / H, x' = x times the ranks on the GPU, rows with
//                                       2x' beyond the L2 (l2_MB)                      hbm_GBps = H
//                                       c + x' / L, rows within it (own line if two sizes, else
//                                       through H's c; only where the base has an L2)   l2_GBps = L
//   device_l2_bytes   bytes             cudaDevAttrL2CacheSize (where the base has an L2)  l2_MB
//   ce_copy           bytes             S + x / C                               ce_startup_us = S, ce_GBps = C
//   plan_flag         0                 a stream's write_flag + wait_flag: 2 o  stream_op_us = o
//   plan_flag_batch   pairs n           n write_flags, then n wait_flags (each   stream_batch_op_us = b
//                                       run one batch, one front end): c + n 2b (CUDA only; plan_flag_peers,
//                                       x = world - 1, the same with every peer's flags: data only)
//   host_copy, host_launch  items (200)  the host's time to enqueue one item, eager, onto a stream a
//   host_copy_heap / _peer / _1m        (copies: 4 KiB between cudaMalloc buffers, within the heap, into
//                                       the next rank's heap; 1 MiB within the heap)
//   host_record, host_wait_event        flag wait holds (cudaMemcpyAsync, a kernel, cudaEventRecord,
//   host_flag_write / _wait / _batch    cudaStreamWaitEvent, cuStreamWriteValue32 / WaitValue32 /
//                                       BatchMemOp): data only, no key (CUDA only,
//                                       apps/harness/cuda/host_ops_probe.h; sim.h host_launch_us says why)
//   host_plan_call    calls (100)       the host's time per eager call of plan_flag_batch at n = 1
//                                       through PlanExec: data only (CUDA only)
//   ce_link_oneway    bytes             rank 0's cudaMemcpyAsync into rank 1 alone; ce_link_twoway:
//   ce_link_twoway                      every rank into the next at once (CUDA only; data only, no
//                                       key: what a link carries one way and both ways)
//   ce_copy_local     bytes             cudaMemcpyAsync within one GPU: data only, no key (the driver
//                                       picks the engine; the conc rows show it waiting for a GEMM's SMs)
//   gemm              flops (m, n, k)   c + P(m,n,k) / (G 1e6) [+ bytes / (Bg 1e3)]   gemm_TFLOPs = G,
//                     P: padded flops of whole waves of tm x tn tiles           gemm_fixed_us = c - L,
//                     bytes: A, B and C once; the tile and the bytes term       gemm_tile_m/n = tm/tn,
//                     with the least residual                                   gemm_GBps = Bg (or 0)
//   gemm_fused        flops (m, n, k)   held out: the fused ops' shapes, never fitted
//   tile_gemm         flops (m, n, k)   our tile GEMM program (core/algos/tile_gemm.h) alone:   mma_TFLOPs = R,
//                                       c + T (2 kTileM kTileN k sms / (R 1e6) + e),            mma_tile_us = e
//                                       T: kTileM x kTileN tiles of the busiest block (graph, NNLS;
//                                       c is the launch and what else a call pays once, not a key)
//   conc_*            a GEMM beside an SM copy of `blocks` blocks (0: cudaMemcpyAsync; -1: alone),
//                     either launched first, eager, each one's own time: data for the model of a
//                     GEMM sharing the GPU (gemm.cpp), not fitted
//   device_gpus / device_sms / device_copy_engines: x = the count               gpus / sms / copy_engines
//
// copy_peer rows at more blocks are kept as the rate-vs-blocks curve; the fit uses blocks <= 2.
// A single-GPU run (world 1) has no peer rows: it calibrates the per-GPU keys only (launch, HBM,
// GEMM), and its device_gpus row does not set `gpus`.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "backends/sim/sim.h"
#include "core/calib_plan.h"

namespace symm::sim {

struct CalibRow {
  std::string bench;
  int world = 0, blocks = 0;
  bool graph = true;
  double x = 0;
  double time_us = 0;
  int m = 0, n = 0, k = 0;  // gemm rows: the shape (0 elsewhere)
  // Measured by an in-process team (ranks sharing a GPU, whose peers' memory is the GPU's own): a
  // file whose comments say "in-process team", or a simulated team machine's rows.
  bool team = false;
};

struct CalibTable {
  std::vector<std::string> comments;  // '#' lines of the CSV, without the '#' (the command first)
  std::vector<CalibRow> rows;
};

// CSV: '#' comment lines, then the header "bench,world,blocks,graph,x,time_us,m,n,k", then rows
// (`symmcoll-cuda gemm-bench`'s CSVs are read too: one GPU's rows of world 1, impl `tile` in bf16
// as `tile_gemm`, the others under names no fit reads: gemm_bench_<impl>, tile_gemm_<dtype>)
// (files written before the shape columns, "bench,world,blocks,graph,x,time_us", are read too).
void write_calibration(std::ostream& out, const CalibTable& t);
CalibTable read_calibration(const std::string& path);  // throws kIo / kInvalidArgument (line named)

using calib::CalibPlan;  // the settings (core/calib_plan.h)

// The rows the simulator predicts for `m` at `world` ranks: the programs of
// core/calib_programs.h run through sim::run (timing-only), plus the device counts.
// GEMM rows come from the simulator itself: a one-GEMM host plan per shape (gemm.cpp).
std::vector<CalibRow> simulate_calibration(const Machine& m, int world, const CalibPlan& plan = {});
// One barrier_blocks row as the simulator predicts it (acq_rel false: barrier_blocks_relaxed;
// landing: a barrier_landing row, the collectives' own barrier).
double simulate_barrier_rounds(const Machine& m, int world, int blocks, int rounds, bool acq_rel, bool landing = false);
// One fence_chain_local (peer: fence_chain_peer) row as the simulator predicts it.
double simulate_fence_chain(const Machine& m, int world, int rounds, bool peer);

// The fit: every key of a machine file from the rows, each with its provenance (which rows, the
// residual) as an INI comment. Keys no row calibrates (nvls_GBps; copy-engine and GEMM keys
// when those rows are absent) are copied from `base`, and say so. `source` names the CSV in the
// header. Deterministic: the same rows give the same bytes.
struct FitResult {
  Machine machine;
  std::string ini;
};
// `only` (empty: every key): the keys the rows may set, names or prefixes ending in '*'
// ("gemm_*"); the others keep base's values, and the file says so. For rows measured on another
// host than the machine's (a single-GPU run for a multi-GPU machine): chip properties travel,
// host ones (launch latency: driver and CPU) do not.
FitResult fit_machine(const CalibTable& t, const Machine& base, const std::string& name, const std::string& source,
                      const std::vector<std::string>& only = {});

}  // namespace symm::sim
