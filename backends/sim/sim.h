// The simulator's public face: run one collective on a simulated node.
//
// This header is the contract between the simulator (backends/sim, which implements it)
// and its users (apps/, tests/, experiments/). Internals live in other headers of this folder.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/coll_args.h"
#include "core/fused.h"
#include "core/registry.h"

namespace symm::sim {

// The machine model, read from an INI file (experiments/machines/<name>.ini) with
// Boost.Program_options. Every key is required; unknown keys, missing keys and non-positive
// values are errors (symm::Error, kInvalidArgument) naming the file and the key.
struct Machine {
  std::string name;  // file stem, e.g. "h200x4"
  std::string path;
  std::map<std::string, std::string> notes;  // key -> its comment in the file (provenance)
  int gpus = 0;                              // GPUs in the node (world may not exceed it... except
                                             // in timing-only runs, which may scale past it; or on a
                                             // team machine, below)
  // Where ranks run. 0: one rank per GPU, every peer over NVLink (the NVLink nodes; a world past
  // `gpus` in a timing-only run scales the node, still one GPU per rank). 1: an in-process team
  // (backends/cuda team.cpp team_gpu): any world of ranks shares the node's `gpus` GPUs, rank r
  // on GPU r % gpus; ranks on one GPU share its HBM (hbm_GBps), its copy engines, its SMs and its
  // tensor rate, and a "peer" access between them is a load or store of that GPU's HBM, never
  // NVLink. The latency keys (flag, store, load round trip, acquire, first peer access) are then
  // the team's: ranks on one GPU measured by the team calibration's ping-pongs.
  int team = 0;
  // Eager device-program calls on a GPU that k ranks share (team = 1): a call costs its graph-mode
  // time + (k - 1) x team_launch_us, in place of the pipelined max(graph + launch_eager_gap_us,
  // launch_eager_us) of one rank per GPU (run.cpp): the k ranks' threads launch through one CUDA
  // context, one after another, and teams run without programmatic dependent launch. One rank's
  // launch is issued while the previous call's kernels run, as where a rank has its GPU; each of
  // the other k - 1 follows it. (Measured on one H200, run16/run17 of the team bench, device
  // programs <= 256K: eager - graph a median 1.2-1.7 us at 2 ranks, 4.3-5.6 at 4 and 8.9-10.1 at
  // 8, a line through about zero at one rank; k x the key put 2 ranks' eager rows 14-21 % high.)
  // Unused where each rank has its GPU (0 there).
  double team_launch_us = 0;
  // The most ranks any GPU holds at `world` ranks: ceil(world / gpus) on a team machine, else 1.
  int ranks_per_gpu(int world) const { return team && gpus > 0 ? (world + gpus - 1) / gpus : 1; }
  double nvlink_egress_GBps = 0;   // per GPU, all links together
  double nvlink_ingress_GBps = 0;  // per GPU
  double store_latency_us = 0;     // one way: a remote store lands after this
  double flag_latency_us = 0;      // one way: a remote flag lands after this
  double load_rtt_us = 0;          // round trip of a remote load
  // 1: a block's copies from several peers in turn overlap their round trips (verbs.cpp, copy);
  // 0: each copy pays its own round trip before the block goes on (its stores need its loads).
  int load_overlap = 1;
  double acquire_us = 0;  // an acquire wait's own cost once its flag is seen (0: none)
  // The part of acquire_us (calibrate's acquire/release ping-pong hop over a relaxed one) that the
  // releasing block's fence pays (fence.acq_rel.sys before the flag: once per release that has
  // something to publish, i.e. a data verb or an acquire since the block's last fence, as
  // backends/cuda/block_ctx.cuh fences); the rest, (1 - share) acquire_us, each acquire wait pays
  // once its flag is seen. A hop of the ping-pong fences once and acquires once, so any share
  // predicts it the same; a barrier of n ranks fences once and acquires n - 1 times (0: every
  // acquire pays all of acquire_us).
  double release_fence_share = 0;
  // A release's fence (fence.acq_rel.sys, above) costs this much more for each other block of its
  // GPU that is fencing or spinning on a flag as it starts: at a barrier of B blocks the last to
  // fence pays (B - 1) fence_gap_us more than alone (calibrate's barrier_blocks rows, acquire /
  // release against relaxed, 1..64 blocks; 0: fences never slow each other). Flagged-packet
  // programs neither fence nor wait on flags.
  double fence_gap_us = 0;
  // A release's fence after an acquire of the same kernel (a barrier round after the first: the
  // block has seen a flag since it started) costs this much more for each other block of its GPU
  // fencing or spinning on a flag as it starts, counting at most fence_crowd_blocks of them, unless
  // the release first waited for the block's stores to land (a push), which hides it. On
  // 4x H200 a chain of acquire / release barriers (calibrate's barrier_blocks, n >= 4 rounds)
  // costs a round 0.16, 0.26, 0.67, 0.94, 0.95 and 0.97 us more at 2, 4, 8, 16, 32 and 64 blocks
  // than at one, beyond the relaxed barrier's growth, while one barrier at a kernel's start (n = 1)
  // grows about 0.2 us to 16 blocks. The collectives that pull (loads, then a barrier) pay it; the
  // pushes do not: on 4x H200 all_gather.st grows 0.3 us from 1 to 16 blocks where all_gather.ld
  // grows 1.2 (bench rows; that the push hides it is read from them, the keys from calibrate's
  // barrier_blocks rows: apps/harness/sim/fit.cpp). 0: no such cost.
  double fence_crowd_us = 0;
  int fence_crowd_blocks = 0;
  // A release's fence costs this much more when the block has stored into its own memory since its
  // last fenced release (a data verb's destination: copy, reduce, the LL verbs, a tile): the stores'
  // acknowledgement it waits for. A peer's stores it waits for as they land (store_latency_us, from
  // the ping-pong that stores before its release); after only an acquire (the other ping-pongs) no
  // more than the fence (0: no such cost). Fitted from calibrate's fence_chain_local rows (a 16-byte
  // local copy and a release, round after round) against the simulated rounds (fit.cpp).
  double local_store_fence_us = 0;
  // A signal a block issues right after its previous signal, to another peer (no other verb
  // between: a barrier's second and later signals) costs this to issue (0: nothing). The first
  // signal's issue is in flag_latency_us, which the ping-pongs measure one signal a hop. Fitted from
  // calibrate's barrier_blocks rows at a world of 3 or more (apps/harness/sim/fit.cpp).
  double signal_next_us = 0;
  // A wait right after the block's wait on a flag another rank writes (a barrier's later waits)
  // first reads its flag, which takes this, then waits for it if it has not landed; an acquire's own
  // cost is in it (0: no such read; a wait on one peer's flags in a row pays only the acquire's own
  // cost, calibrated on such a chain). Fitted with signal_next_us from barrier_blocks and
  // barrier_landing rows, whose rounds wait in two orders (fit.cpp).
  double wait_next_us = 0;
  double peer_kernel_us = 0;  // a block's first access to a peer in a kernel (0: none)
  double block_GBps = 0;      // per-block cap on any transfer
  // A block's reduce (verbs.cpp): the bytes it loads from all its sources per second, a cap apart
  // from block_GBps (a reduce keeps a load from each source in flight at once; a copy's loads wait
  // for its stores). Calibrated by reduce_peers rows (a block's reduce of every rank's input, 1-2
  // blocks: apps/harness/sim/fit.cpp). A reduce with a source across NVLink loads at block_GBps:
  // the links' round trips bind it as they bind a copy. 0: block_GBps, as before the key (no rows).
  double block_reduce_GBps = 0;
  double reduce_GBps() const { return block_reduce_GBps > 0 ? block_reduce_GBps : block_GBps; }  // the rate in use
  // A block's transfers under load (flow_net.h set_slowdown): with the GPU's memory moving T TB/s
  // (reads and writes, the L2 model's count of every local byte), a block's cap is its rate times
  // 1 - load_slowdown x T: its loads wait longer in a busier memory system. Calibrated by copy_peer and
  // reduce_peers rows at 1..32 blocks on team machines (fit.cpp; one H200: 0.053 a TB/s). 0: none.
  // Needs an L2 model.
  double load_slowdown = 0;
  int sms = 0;
  double hbm_GBps = 0;  // local read+write bandwidth
  // One GPU's L2 (backends/sim/l2.h): l2_MB of the bytes last touched there stay in it, as do bytes
  // another transfer of the GPU is reading at the time; a local read or write of such bytes is not
  // charged to hbm_GBps but only to l2_GBps (local read+write bandwidth from the L2, which every
  // local byte also uses). l2_MB 0: no L2 model (every local byte at hbm_GBps).
  double l2_MB = 0;
  double l2_GBps = 0;
  double launch_eager_us = 0;      // kernel launch, eager
  double launch_graph_us = 0;      // kernel launch inside a CUDA graph
  double launch_eager_gap_us = 0;  // eager over graph per call, for a kernel longer than launch_eager_us
  // An eager call of a device program that publishes with a release signal (a barrier with release /
  // acquire: every collective's device program but the flagged-packet ones) costs this much more
  // again (run.cpp). On 2x H200 the verb traces put it in the first barrier: its acquire waits
  // 0.85 us longer on every rank in eager calls than in graph replays, the later rounds alike.
  // Calibrated from barrier_busy (the collectives' barrier launched as the bench launches, eager -
  // graph), 1.16-1.32 us against launch_busy's and the relaxed exchange_busy's 0.4, less
  // launch_eager_gap_us (experiments/results/h200x4/eager_gap_*). 0: none.
  double eager_release_us = 0;
  // Programmatic dependent launch (PDL, the CUDA bench's default for device programs): a call
  // launched so ends this much sooner after the call before it in its stream than one launched
  // without, its launch and start overlapping the kernel before (calibrate: a load chain launched
  // without PDL, load_chain, less the same launched as the bench launches, launch_busy, graph; 0:
  // no difference). Back-to-back device-program calls only (RunSpec::pdl; not a team's, which
  // launch without it, nor a host plan's kernels).
  double pdl_saving_us = 0;
  // A stream's flag operation (a host plan's write_flag or wait_flag: cuStreamWriteValue32 /
  // cuStreamWaitValue32): the stream spends this on each (0: none).
  double stream_op_us = 0;
  // A flag operation that rides in a batch after the first (consecutive flag items of one stream:
  // one cuStreamBatchMemOp on CUDA, StreamItem::batched): the stream spends this on each (0: none).
  // Calibrated from plan_flag_batch (n flag pairs per call; a rank's flag operations take its GPU's
  // front end one at a time, streams.cpp front_end: t = c + n x 2 b).
  double stream_batch_op_us = 0;
  // Flagged packets (LL: put_ll / reduce_ll, backends/sim/packets.cpp). ll_wire_bytes: the NVLink
  // bytes one 8-byte packet store occupies (8: as bulk stores; an 8-byte store is a write request
  // of its own, with its header, where bulk stores fill whole flits). ll_poll_us: a reduce_ll that
  // waited for packets sees the last one this long after it landed (its spin's polling: re-reading
  // the packet words until every epoch matches), before its reduction starts (0: at once). That is
  // a block's look at bytes peers stored into its own memory: one load round trip of local memory
  // after they landed.
  double ll_wire_bytes = 8;
  // A byte a block loads from a peer (copy / reduce from a remote source) occupies this many bytes
  // of the link's time where a stored byte occupies one (read requests travel the other way and
  // responses carry their own headers; 1: loads stream as stores do).
  double load_link_factor = 1;
  double ll_poll_us = 0;
  // A copy or reduce whose sources are all in its rank's memory waits this long for its loads, as a
  // remote source's loads pay load_rtt_us (verbs.cpp, copy and reduce; transfers.cpp, complete):
  // a load round trip to the L2, which its stores wait for (0: none). all_reduce.st_reduce pays it
  // for each of its pushes (a copy of its input per rank) and for its reduce of the received
  // copies. Calibrated by calibrate's peer_reduce_chain (a block's reduces of one vector from each
  // of the lines a peer just stored: 0.235 us on 2x H100) or local_reduce_chain (lines of its own:
  // 0.245). ll_poll_us takes the same value (fit.cpp): the packet spin's last look is such a load.
  double local_load_us = 0;
  // A block's rate of reading packet bytes in reduce_ll (its spin loads every 8-byte packet of
  // every source, relaxed, and checks its epoch before it keeps the data word): a reduce_ll of n
  // sources reads 2 n bytes of packets per byte of result at most this fast (0: no per-block cap,
  // only the HBM's).
  double ll_read_GBps = 0;
  // Copy engines and GEMM: used by the host plans (streams.cpp, copy_engines.cpp, gemm.cpp).
  int copy_engines = 0;
  double ce_startup_us = 0;
  double ce_GBps = 0;
  // A peer copy that does not follow a copy on its stream (after a flag, an event or the call's
  // start) starts this much later than ce_startup_us: the engine starts cold, where back-to-back
  // copies (calibrate's ce_copy rows, whose intercept is ce_startup_us) overlap it with the copy
  // before (copy_engines.cpp; 0: no such cost). A cold start takes the GPU's front end, one at a
  // time with the rank's other cold starts and its stream flag operations (streams.cpp front_end).
  double ce_launch_us = 0;
  // An eager host-plan call: the host enqueues the call's items one after another and none starts
  // on the GPU before it is enqueued (streams.cpp kick); back-to-back calls, as the bench times
  // them, enqueue the next call while the GPU runs this one (engine.cpp host_ahead). What the
  // host spends, through the CUDA backend's executor (PlanExec), one host thread: a kernel
  // (host_launch_us) or a GEMM (the same), a copy (host_copy_us), an event record or wait
  // (host_event_us), a flag operation (host_flag_item_us) and one more for each batch of them
  // (host_flag_us: its cuStreamBatchMemOp, paid by the operation that starts it), and the call's
  // own begin and end (host_call_us). Measured on one H200 with the bench's host clock, the ranks
  // of a team enqueueing in turn (experiments/results/h200x1/host_ops_ff7c339/turns). All 0:
  // enqueuing is free, no host chain. Tried before and not kept: one fitted value for events and
  // flag batches, kernels and copies at launch_eager_us, each call's enqueuing from its own start
  // (2x H200 held out 5.1 %, max 44 %: the all-gather `ce_sm` at 8M eager, 26 us measured, came out
  // at 38, its enqueuing and its GPU work in series); the API calls' own costs (calibrate's host_*
  // rows, on a held stream: a copy 3.9-5.9 us, an event 0.16-0.35, a flag operation 0.7-1.3) as
  // these keys (5.4 %: `ce_sm` below 2M at its graph time, 11.8 us, against 20.5 eager).
  double host_launch_us = 0;
  double host_copy_us = 0;
  double host_event_us = 0;
  double host_flag_us = 0;
  double host_flag_item_us = 0;
  double host_call_us = 0;
  // The host's pace against the one these were measured on: every host_*_us above is multiplied by
  // it. Hosts differ (CPU, clocks, driver): on 2x H200 the all-gather `ce` at 4K takes 20.9 us a call
  // eager, where the one H200's host enqueues the same call in 28.8. No microbenchmark of the NVLink
  // machines' hosts exists: experiments/fidelity.py fits it from bench rows, held out. On a team
  // machine every item costs world x the value (engine.cpp): the ranks' threads enqueue through one
  // driver in turn (one H200: the all-gather `ce_sm` at 4K, 28.9 us a call for one thread at 2 ranks
  // and 59.2 at 4, measured eager 45 and 210 us with every rank enqueueing).
  double host_scale = 1;
  bool host_chain() const {
    return host_launch_us > 0 || host_copy_us > 0 || host_event_us > 0 || host_flag_us > 0 || host_flag_item_us > 0 ||
           host_call_us > 0;
  }
  // A rank's copies (copy_engine items) in flight at once, whatever their streams (the rest queue
  // for their turn; 0: only the GPU's copy_engines bound them). On 4x H200 a reduce-scatter's
  // copies on two side streams took as long as on one (experiments/results/h200x4/ce_small_1daa33f:
  // 40.3-40.5 us against 41.9-42.1 at 4K, where copies on separate engines would save ~8), so the
  // NVLink files say 1 (the H100 ones as the same GH100 chip, not measured there).
  int ce_per_rank = 0;
  double nvls_GBps = 0;  // NVSwitch multicast / in-switch reduction, per GPU
  // GEMM (cuBLASLt): t = gemm_fixed_us + padded flops / gemm_TFLOPs + operand bytes / gemm_GBps
  // after the launch, where the padded flops count whole waves of gemm_tile_m x gemm_tile_n
  // output tiles over the SMs (0 x 0: no tiles, the plain 2mnk) and the operand bytes are A, B
  // and C once (gemm_GBps 0: no such term). gemm_time_us() below.
  double gemm_TFLOPs = 0;    // GEMM throughput on whole waves of tiles
  double gemm_GBps = 0;      // the operands' streaming cost (0: none)
  double gemm_fixed_us = 0;  // per call beyond the launch (prologue, epilogue, tail)
  int gemm_tile_m = 0;       // output tile rows (0: no wave quantization)
  int gemm_tile_n = 0;       // output tile columns
  // Matrix tiles (the verb mma_tile, backends/sim/tiles.cpp): the GPU's tensor-core rate over all
  // its SMs in a tile program's mainloop; one block (one SM) computes at mma_TFLOPs / sms.
  double mma_TFLOPs = 0;
  // A tile's fixed cost on its block beyond the mainloop: the epilogue (the accumulators stored
  // while the tensor cores wait) and the drain of the MMA pipeline at the tile's end, per
  // mma_tile call (kTileM x kTileN). Fitted with mma_TFLOPs from the tile GEMM's rows (0: none).
  double mma_tile_us = 0;
  // The rate at which a tile's epilogue stores to a peer's memory leave its block (GB/s), the block
  // held meanwhile: what a tile stored over NVLink costs beyond a local one (0: nothing). Measured, not
  // fitted: the mm_rs tile programs' stores alone, to peers against local (tiles_push and tiles_acc
  // against tiles in their compute-only diagnosis modes, 2x H200: experiments/results/h200x2/
  // mmrs_acc_diag_9a85573). Those runs also held 2-7 % lower SM clocks than the local-store run (the
  // GPUs at their power cap): the rate lumps the stores' issue time with the power they draw.
  double mma_peer_store_GBps = 0;
  // The rate at which a tile's epilogue reads its input tiles (mma_tile's C_in: the peers' slots
  // mm_rs.tile_st_peer_acc's own tiles add), the block held meanwhile (0: free, as the tile's
  // operands are). Measured, not fitted: that program against the same without its epilogue inputs
  // (SYMM_DEBUG_MMRS_TILES=acc-no-inputs) at worlds 2 and 4 on 4x H200, 3.6-46 us over 64-768 KiB a
  // block, 15-28 GB/s (experiments/mma_in_rate.py over experiments/results/h200x4/acc_inputs_25b1d12).
  // Charged on every tile with inputs: mm_rs.gemm_ce_tile_acc's too, whose inputs the copy engines
  // pushed, though there they measured 0.5-3 us where they fit the L2 (ce_inputs_25b1d12): an L2-aware
  // charge is not modelled. Its source is a diagnosis run of the program it prices, so that
  // program's fidelity rows are not held out from it (as for mma_peer_store_GBps).
  double mma_in_GBps = 0;

  // The GPU rank `rank` runs on (team above): rank % gpus on a team machine, else its own.
  int gpu_of(int rank) const { return team ? rank % gpus : rank; }

  // Compute time of one m x n x k GEMM on one GPU, launch excluded (the model above).
  double gemm_time_us(double m, double n, double k, double elem_bytes = 2) const;
  // Padded flops: 2k x the output of whole waves of tiles (2mnk without tiles).
  double gemm_padded_flops(double m, double n, double k) const;

  // The machine-file keys, in file order.
  static std::vector<std::string> key_names();
  // One key's value as a machine file writes it: integer keys hold whole numbers; zero_ok: a cost
  // the model may leave out (0), where every other key must be positive.
  struct KeyValue {
    const char* name;
    double value;
    bool integer;
    bool zero_ok;
  };
  // Every key with this machine's value, in file order (what `symmcoll fit` writes).
  std::vector<KeyValue> key_values() const;
  // Sets key `key` (a machine-file name) to `from`'s value; false if no such key.
  bool copy_key(const Machine& from, const std::string& key);

  static Machine load(const std::string& path);
  // The text of a machine file; `path` names it (in errors, and its stem is the name).
  static Machine parse(const std::string& text, const std::string& path);
  // "h200x4" -> h200x4.ini from $SYMM_MACHINES_DIR, <exe>/../share/symmcoll/machines, the install
  // prefix's share/symmcoll/machines or the source tree's experiments/machines, first found;
  // a path ending in .ini is loaded as is. Unknown names list the machines available.
  static Machine by_name(const std::string& name_or_path);
};

// A team machine has no default world (its ranks share its GPUs): the line that asks for --world.
inline std::string team_world_hint(const Machine& m) {
  return "--world: machine " + m.name + " is an in-process team (team = 1: the ranks share its " +
         std::to_string(m.gpus) + " GPU(s)), so it has no default world; give --world N (2.." +
         std::to_string(kPadWorld) + ")";
}

struct RunSpec {
  Machine machine;
  int world = 4;
  const AlgoInfo* algo = nullptr;  // from the registry
  DType dtype = DType::kBF16;
  ReduceOp op = ReduceOp::kSum;
  std::size_t bytes = 0;  // nccl-tests size (see AlgoInfo::count)
  int blocks = 0;         // 0: algo->default_blocks(bytes, world)
  bool graph = true;      // launch latency of a CUDA-graph replay (else eager)
  bool pdl = true;        // device programs launched with programmatic dependent launch (as the CUDA bench's
                          // default, --pdl on): their back-to-back calls save Machine::pdl_saving_us each
  // The CUDA verbs' last step as the backend ran it before ec6ad13 (backends/cuda/block_ctx.cuh
  // copy, vec_math.cuh reduce_n): a thread's last vectors, fewer than a step's, one at a time, each
  // paying the remote load round trip again (Simulator::tail_trips; verbs with local sources only,
  // stores to peers included, pay nothing more: on 4x H200 all_gather.st's 16-KiB pieces ran as fast
  // as their neighbours, all_gather.ld's 2-3 us slower). Device programs and host plans' kernels
  // only (the fused operations' workloads run without it). For GPU rows measured then
  // (experiments/fidelity.py); false: one step, as the backend does now.
  bool serial_tail = false;
  bool timing_only = false;  // no data arrays: no correctness check, no race check
  bool race_check = true;    // with data: report accesses not ordered by release/acquire
                             // (read after write, write after read/write, the end of a call)
  int calls = 1;             // back-to-back calls on the same buffers (epochs must keep working);
                             // every call gets fresh inputs and every call's output is checked
  uint64_t seed = 1;         // inputs are fresh random values in (-1, 1), drawn from this seed
  std::string trace_path;    // non-empty: write a Chrome trace-event JSON (Perfetto) here
  // Host plans (AlgoInfo::plan) only:
  int streams = 3;              // streams per rank, the main one included (1..kMaxStreams)
  std::size_t chunk_bytes = 0;  // bytes per copy / progress flag (0: the plan's default)
  int sm_percent = 0;           // plans splitting SM / copy-engine bytes: the SMs' share (0: default)
  // 2: a plan's kernels whose program has a side lane (core/verbs.h kSideLane) run it, each
  // block's lane a fiber of its own beside the block (holding no SM: the CUDA kernels' spare
  // warps); 1: none, such a program does its side work itself (lanes() == 1). The fused runs: 2.
  int lanes = 1;
  // Your data (sim_node, include/symmcoll/symmcoll.h): with data and calls == 1, rank r's input is
  // read from user_in[r] (the call's in bytes, AlgoInfo::in_bytes) instead of drawn from `seed`,
  // the check compares the output with the float64 reference of those inputs, and rank r's
  // output as its call left it (the simulated program's bytes) is copied to user_out[r]
  // (AlgoInfo::out_bytes) after the check; user_out[r] may be user_in[r] (in place). Empty: drawn
  // inputs, nothing copied out.
  std::vector<const void*> user_in;
  std::vector<void*> user_out;
};

struct RunResult {
  double time_us = 0;       // simulated time of the last call: launch to the last block's end
  double max_rel_err = -1;  // vs the float64 CPU reference, the worst of every call (each rank's
                            // `out` as it was when its call ended); -1 in timing-only mode
  double err_bound = 0;     // rel_err_bound(dtype, world): what max_rel_err must stay under
  int blocks = 0;           // blocks actually used
  uint64_t events = 0;      // events processed
  double wall_s = 0;        // host wall-clock seconds spent
  uint64_t heap_bytes = 0;  // data mode: host memory the ranks' heaps held at the end (the pages
                            // read or written; a page never touched reads 0xFF and costs none)
  // Fused runs with data: rows of C (summed over the ranks) compared with the float64 product, of
  // `rows` in all. Fewer when the product is large (FusedRunSpec::check_macs); every row is
  // still scanned for unwritten values.
  std::size_t checked_rows = 0, rows = 0;
};

// Checks the arguments (check_args, machine limits), runs, and returns. Throws symm::Error:
// kInvalidArgument / kUnsupported for bad input, kDeadlock naming rank, block, slot, expected
// and seen value, kRace naming the reader, the writer and the address range (a read of bytes
// whose store is not ordered before it; a store over bytes someone may still be reading; a call
// ending while peers may still read its `in`/`out` or store into its `out`), kIo for an
// unwritable trace path (checked before the run starts), kInternal for an engine bug.
RunResult run(const RunSpec& spec);

// One fused matmul call (core/fused.h) on a simulated node: every rank's symmetric heap holds
// A, B, C and the plan's work buffers (fused_buffers); with data, A and B are seeded random
// values in (-1, 1) (the global matrices, each rank holding its shard) and every rank's C is
// checked against the float64 product (max_row_rel_err, bound matmul_err_bound).
struct FusedRunSpec {
  Machine machine;
  int world = 4;
  const FusedAlgo* algo = nullptr;  // from fused_algorithms()
  MatShape shape;                   // m, n, k (global)
  DType dtype = DType::kBF16;
  bool graph = true;
  bool timing_only = false;
  bool race_check = true;
  uint64_t seed = 1;
  std::string trace_path;
  int streams = 3;
  std::size_t chunk_rows = 0;  // rows per progress flag / GEMM (0: the plan's default)
  int blocks = 0;              // blocks of the plans' kernels (FusedArgs::blocks; 0: the plan's default)
  // Back-to-back calls on the same heaps and signal pads (each checked, the last one timed), as
  // RunSpec::calls: a call's pushes must not land in a buffer a peer's previous call still reads.
  int calls = 1;
  // The float64 reference's budget of multiply-adds (0: kFusedCheckMacs). A product within it is
  // checked whole; a larger one on a sample of C's rows (every s-th, and the first and last of
  // every rank's shard), with every row still scanned for unwritten values.
  std::size_t check_macs = 0;
  // RunSpec::lanes: 2, the tile programs' side lanes run beside their blocks, as the CUDA kernel's
  // spare warps do; 1 (tests), each block does its side work itself.
  int lanes = 2;
};

// About 1 s of Eigen's float64 GEMM on one core of the machine this was written on.
inline constexpr std::size_t kFusedCheckMacs = std::size_t(1) << 31;

// What a data-mode run costs on this host, known before it runs.
struct DataCost {
  double bytes = 0;    // host memory held at the peak
  double seconds = 0;  // wall-clock time
};

// For run_fused(spec) with data: every rank's heap, the float64 inputs and reference rows and one
// GEMM's fp32 operands (bytes); every simulated GEMM in fp32 and the reference rows in float64,
// at rates measured once per process by a short Eigen GEMM, and drawing the inputs (seconds).
// Zero for a timing-only spec. For the CLI to refuse what this host cannot afford up front.
DataCost fused_data_cost(const FusedRunSpec& spec);

// Validates (validate_fused, streams, machine limits), runs and returns: time_us, max_rel_err
// (-1 timing-only) and err_bound as run() does. Throws symm::Error as run() does.
RunResult run_fused(const FusedRunSpec& spec);

}  // namespace symm::sim
