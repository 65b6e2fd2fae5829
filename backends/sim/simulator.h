// The simulator's engine, declared: the Simulator class and the state it drives (blocks,
// hosts, transfers, flag landings). Internal to backends/sim; users see sim.h.
//
// One engine, running one workload (workload.h: a device program, a host plan or a custom run),
// its member functions defined by concern:
//   engine.cpp       set-up and tear-down, the event loop, block fibers, deadlock reports
//   host.cpp         the per-rank host fiber: fresh inputs, launch, end of a call (its plan)
//   memory.cpp       addresses, visible memory and the race check (memory.h)
//   transfers.cpp    transfers as flows in the network (flow_net.h): start, complete, land
//   verbs.cpp        copy, reduce, multimem_reduce, signal, wait, advance (+ their timing)
//   packets.cpp      flagged packets: put_ll, reduce_ll, and the landed-packet records
//   tiles.cpp        matrix tiles: mma_tile
//   plan_record.cpp  host plans: SimHost's verbs recorded as stream items, their checks, the
//                    plans' deadlock reports
//   streams.cpp      host plans: the stream scheduler (items in order, flags, events, kernels)
//   copy_engines.cpp host plans: copy-engine allocation and the copies' flows
//   gemm.cpp         host plans: a GEMM's timing (SM share, slices) and its data (Eigen)
//   run.cpp          symm::sim::run: argument checks, the run, the output check
//   ctx.cpp          BlockCtx (ctx.h): the verbs as programs call them, forwarded to a block's verbs
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/sim/conv.h"
#include "backends/sim/ctx.h"
#include "backends/sim/event_queue.h"
#include "backends/sim/fiber_stack.h"
#include "backends/sim/flow_net.h"
#include "backends/sim/l2.h"
#include "backends/sim/memory.h"
#include "backends/sim/recycle.h"
#include "backends/sim/sim.h"
#include "backends/sim/streams.h"
#include "backends/sim/trace.h"
#include "backends/sim/vclock.h"
#include "backends/sim/workload.h"
#include "core/heap_layout.h"

namespace symm::sim {

constexpr uint32_t kNoSlice = UINT32_MAX;  // a trace slice handle: none

// The random inputs: elements i and i+1 (i even) of a rank's call come from one 64-bit hash,
// symm::splitmix64(stream + i), as two 24-bit draws (bits >> 40 and >> 8). write_inputs stores
// them; check_outputs draws them again rather than keeping a float copy of every input.
// An odd multiple of 2^-23 in (-1, 1): forcing the low bit keeps -1 out without a branch.
inline float draw_input(uint64_t bits) { return float((bits & 0xFFFFFF) | 1) * 0x1p-23f - 1.0f; }

// Elements [i0, i0 + n) (i0 even) of the inputs drawn from `stream`, stored as T: what
// draw_input gives, a batch at a time (the hashes first, then the conversions, which the
// compiler vectorises; the values are draw_input's: (bits & 0xFFFFFF) | 1 fits an int32).
template <class T>
void draw_inputs(uint64_t stream, std::size_t i0, std::size_t n, T* out) {
  constexpr std::size_t kBatch = 512;
  uint32_t bits[kBatch];
  for (std::size_t b0 = 0; b0 < n; b0 += kBatch) {
    const std::size_t len = std::min(kBatch, n - b0);
    for (std::size_t j = 0; j < len; j += 2) {
      const uint64_t z = splitmix64(stream + i0 + b0 + j);
      bits[j] = uint32_t(z >> 40);
      bits[j + 1] = uint32_t(z >> 8);  // unused past an odd n
    }
    T* o = out + b0;
    for (std::size_t j = 0; j < len; ++j)
      o[j] = Conv<T>::store(float(int32_t((bits[j] & 0xFFFFFF) | 1)) * 0x1p-23f - 1.0f);
  }
}

enum class BlockState : uint8_t { kIdle, kRunning, kTransfer, kFlag, kPackets, kStores, kLoads, kDone };

struct Block {
  // index: the block's place among its rank's (a side lane's: blocks_ + its block's);
  // lane 1: a side lane (core/verbs.h lane()), a fiber of its own beside block index - blocks_.
  int rank = 0, index = 0, tid = 0, lane = 0;
  bc::fiber self, caller;
  BlockState state = BlockState::kIdle;
  int inflight = 0;  // posted stores not landed yet
  // Remote loads whose round trip is still under way (copy from a peer into this rank: the block
  // went on to load from another peer, verbs.cpp), and the peers they load from (bit r: rank r).
  int loads_inflight = 0;
  uint64_t load_peers = 0;
  bool touched_peer = false;  // this kernel's block has accessed a peer (peer_kernel_us paid)
  // A release would fence: a data verb or an acquire since the block's last fenced release (or its
  // start: the launch's predecessors), machine key release_fence_share.
  bool fence_pending = true;
  // The block has acquired a flag since it started: its next fence pays fence_crowd_us (sim.h).
  bool acquired = false;
  // The block has stored into its own memory (a data verb's destination) since its last fenced
  // release: that release's fence pays local_store_fence_us more (machine key).
  bool stored_local = false;
  // The block's last verb (kRunSignal: a signal to run_peer; kRunWait: a wait on a flag run_peer
  // writes; kRunOther: any other verb): a signal right after a signal to another peer pays
  // signal_next_us, a wait of a flag already set right after a wait on another rank's flag
  // wait_next_us (verbs.cpp, signal and wait).
  enum : uint8_t { kRunOther, kRunSignal, kRunWait };
  uint8_t run_kind = kRunOther;
  int run_peer = -1;
  uint32_t wait_slot = 0, wait_value = 0;
  Block* next_waiter = nullptr;
  TimePs started = 0;
  uint32_t last_wait = UINT32_MAX;  // for race reports
  // reduce_ll waiting on packets: buffer [ll_buf, ll_hi) of this rank, first packet not yet valid
  // at ll_lo, awaited epoch.
  uint64_t ll_buf = 0, ll_lo = 0, ll_hi = 0;
  uint32_t ll_epoch = 0;
  uint32_t ll_from = kNoSlice;  // trace: the slice of the put_ll whose landing woke it
  // Race check.
  VClock clock;
  Snapshot release_snap;          // shared by releases with no access or acquire in between
  bool tick_before_store = true;  // a release happened: the next access starts a new epoch
  Snapshot launch_snap;           // the host's clock at launch: what this block's packets carry
  std::vector<Snapshot> ll_acq;   // launch clocks of accepted packets: joined at kernel end
};

struct Host {
  int rank = 0;
  bc::fiber self, caller;
  VClock clock;
  bool tick_before_store = true;
  int live_blocks = 0;
  int blocks = 0;                  // of the current call
  int call = 0;                    // the current call
  TimePs launched = 0, ended = 0;  // of the latest call
  TimePs chain_end = 0;            // an eager plan call: when its host enqueued the call's last item
};

enum EventKind : uint32_t {
  kResumeBlock,
  kResumeHost,
  kFlagLand,
  kTransferLand,
  kNetwork,
  kStreamFlow,
  kKickStreams,
  kKickStream,  // one stream's next item, now enqueued by the host (streams.cpp kick)
  kKernelDone
};

// One verb's data movement: a flow in the network, then a landing in the destination.
// A gemm's flow runs in this many equal slices, each at the rate of the SMs free when it starts.
inline constexpr int kGemmSlices = 16;

// Who moves a transfer's bytes: a block's verb (owner), or a stream's copy engine or GEMM
// (stream_owner; host plans).
enum class TransferKind : uint8_t { kBlock, kCopyEngine, kGemm };

struct Transfer {
  TransferKind kind = TransferKind::kBlock;
  Block* owner = nullptr;
  const char* name = "";
  TimePs issued = 0;
  bool remote_load = false;  // pays the load round trip before the block resumes
  bool posted = false;       // lands store_latency after the block resumes
  bool overlapped = false;   // a remote load whose round trip overlaps the block's next loads (verbs.cpp)
  bool ll = false;           // flagged packets of epoch ll_epoch (put_ll)
  bool local_load = false;   // sources all local (copy, reduce): pays local_load_us (sim.h) as remote loads the rtt
  uint8_t tail_trips = 0;    // a remote load's round trip paid this many times more (RunSpec::serial_tail)
  uint32_t ll_epoch = 0;
  uint32_t slice = kNoSlice;  // trace: its slice, once complete
  int dst_space = 0;          // a rank, or kMcSpace: the same offset on every rank
  uint64_t dst_off = 0;
  std::size_t bytes = 0;
  std::vector<uint8_t> data;  // data mode: what lands (put_ll: the source bytes, packed on landing)
  // A stream's transfer (kCopyEngine, kGemm: host plans): owner == nullptr.
  Stream* stream_owner = nullptr;
  int ce = 0;         // kCopyEngine: the copy engine
  int src_space = 0;  // copy engine: where it reads
  uint64_t src_off = 0;
  BytesPerPs gemm_cap = 0;  // gemm: the rate that makes its HBM flow take the compute time on all SMs
  std::size_t gemm_c_bytes = 0;
  int gemm_slices_left = 0;  // gemm: its flow runs in kGemmSlices equal parts, each at the SMs then free
  uint64_t gemm_seq = 0;     // gemm on a team machine: its start's number on its GPU (gemm.cpp)
  // A strided landing (mma_tile's C, tiles.cpp): `rows` rows of row_bytes, dst_pitch apart, packed
  // back to back in `data`; 0: the bytes land contiguously.
  uint32_t rows = 0;
  std::size_t row_bytes = 0, dst_pitch = 0;
  // The GPUs whose L2 holds its reads as active reads while it runs (l2.h; only with
  // Machine::l2_MB): released when it completes (l2_done).
  std::vector<int> l2_gpus;
};

struct FlagLand {
  int rank;
  uint32_t slot, value;
  Snapshot snap;
  uint32_t signal_slice;                 // trace
  int from_rank = -1, from_stream = -1;  // a stream's write_flag (plan flags)
};

// What a rank's blocks run: the call's device program, or the kernel a plan's stream launched.
struct Kernel {
  ProgramFn fn = nullptr;
  CollArgs args;
  int stream = -1;  // the launching stream, or -1: the host (device-program runs)
  int lanes = 1;    // 2: every block has a side lane (the program's kSideLane, where RunSpec::lanes allows)
};

class Simulator {
 public:
  // Every call runs `work` (workload.h); call_blocks[c]: the block count of call c (its size is
  // the number of calls; a plan's kernels may use up to the largest). spec.algo names the
  // registry entry of a device program or host plan, and must be null for a custom run.
  Simulator(const RunSpec& spec, Workload work, std::vector<int> call_blocks);
  // Eager plan calls whose host runs ahead of the GPU (engine.cpp): timed after an untimed call.
  static bool host_ahead(const RunSpec& spec, const Workload& work);
  ~Simulator();
  RunResult run();
  // Whether some block published with a release signal in the run (run.cpp: eager_release_us).
  bool released() const { return released_; }

  // Verbs, called from BlockCtx on a block's fiber (verbs.cpp, packets.cpp).
  int world() const { return world_; }
  int blocks(const Block& b) const { return hosts_[b.rank].blocks; }
  int lanes(const Block& b) const { return kern_[std::size_t(b.rank)].lanes; }
  // The block a block or side lane is (BlockCtx::block), and its name in reports: "block 3" or
  // "block 3's side lane".
  int block_of(const Block& b) const { return b.lane ? b.index - blocks_ : b.index; }
  std::string block_name(const Block& b) const {
    return "block " + std::to_string(block_of(b)) + (b.lane ? "'s side lane" : "");
  }
  uintptr_t peer_addr(Block& b, uintptr_t p, int r);
  void copy(Block& b, uintptr_t dst, uintptr_t src, std::size_t bytes);
  // Waits until the block's overlapped remote loads have landed (every verb but a load from a peer
  // with none in flight, and the block's end, calls it first; verbs.cpp).
  void settle_loads(Block& b) {
    if (!b.loads_inflight) return;
    b.state = BlockState::kLoads;
    yield(b);
  }
  void reduce(Block& b, DType t, uintptr_t dst, const void* const* srcs, int n, std::size_t count, ReduceOp op);
  void multimem(Block& b, DType t, uintptr_t mc, std::size_t count, ReduceOp op);
  void signal(Block& b, int peer, uint32_t slot, uint32_t value, MemOrder order);
  void wait(Block& b, uint32_t slot, uint32_t value, MemOrder order);
  uint32_t advance(Block& b, uint32_t slot);
  void put_ll(Block& b, uintptr_t dst, uintptr_t src, std::size_t bytes, uint32_t epoch);
  void reduce_ll(Block& b, DType t, uintptr_t dst, const void* const* srcs, int n, std::size_t count, uint32_t epoch,
                 ReduceOp op, int plain = -1);
  void mma_tile(Block& b, DType t, uintptr_t c, std::size_t ldc, uintptr_t a, std::size_t lda, uintptr_t bm,
                std::size_t ldb, int m, int n, int k, uintptr_t c_in = 0, int n_in = 0,
                std::size_t in_stride = 0);  // tiles.cpp

  // Host verbs, called from SimHost while a plan enqueues (streams.cpp).
  uintptr_t host_peer_addr(int rank, uintptr_t p, int r) const;
  void enqueue(int rank, int s, StreamItem& it);

 private:
  // ---- engine (engine.cpp) ----
  Block& block_at(int rank, int b) { return blocks_v_[std::size_t(rank) * stride_ + b]; }
  void yield(Block& b) { b.caller = std::move(b.caller).resume(); }
  // A block's first access to a peer (a load, store, packet, flag or multicast) in its kernel
  // goes out no earlier than peer_kernel_us after the block started (machine file: the ping-pong's
  // and the load chain's fixed cost over an empty kernel's launch, apps/harness/sim/fit.cpp): a
  // kernel's first reach to its peers costs that once, overlapped with whatever the block did
  // before (a rank that first waits for a peer pays nothing more).
  void touch_peer(Block& b) {
    if (b.touched_peer) return;
    b.touched_peer = true;
    const TimePs ready = b.started + peer_kernel_ps_;
    if (ready <= q_.now()) return;
    b.state = BlockState::kTransfer;
    q_.push(ready, kResumeBlock, uint32_t(b.rank * stride_ + b.index), 0);
    yield(b);
  }
  void resume(Block& b);
  void end_block(Block& b);
  [[noreturn]] void deadlock();

  // ---- the host of each rank (host.cpp) ----
  void resume(Host& h);
  void host_plan(Host& h);
  void launch(Host& h);
  // Starts rank h's kernel (kern_[rank]) on h.blocks blocks, launch latency from now, the blocks
  // starting from `parent` (the host's or the launching stream's clock).
  void start_blocks(Host& h, const VClock& parent, TimePs delay);
  void end_call(Host& h);
  template <class T>
  void write_inputs(Host& h, int call);
  double check_outputs(int call);  // run.cpp
  uint64_t input_stream(int call, int r) const {
    return splitmix64(spec_.seed ^ splitmix64(uint64_t(call) << 32 | uint32_t(r)));
  }

  // ---- addresses, memory and the race check (memory.cpp) ----
  static uintptr_t addr(int space, uint64_t off) { return kAddrBase + (uintptr_t(space) << kSpaceShift) + off; }
  Loc decode(const Block& b, uintptr_t a, std::size_t bytes, const char* verb) const;
  // Host plans and custom runs only (their heaps are materialised whole at set-up); device
  // programs name the bytes they read or overwrite (HeapBytes::read / write).
  uint8_t* ptr(int rank, uint64_t off) { return heaps_[rank].bytes.all() + off; }
  const uint8_t* read_heap(int rank, uint64_t off, std::size_t n) { return heaps_[rank].bytes.read(off, n); }
  std::string where(int rank, uint64_t off) const;
  std::string who(int tid) const;
  // A reader / writer is an entity (tid) with its clock; blk is the block for reports (nullptr:
  // the host).
  uint32_t access_epoch(Block& b);
  // blk == nullptr and st == nullptr: the host at the end of its call.
  void check_read(int tid, const VClock& clock, const Block* blk, int rank, uint64_t off, std::size_t bytes,
                  const Stream* st = nullptr);
  void check_read(Block& b, int rank, uint64_t off, std::size_t bytes) {
    check_read(b.tid, b.clock, &b, rank, off, bytes);
  }
  void record_read(int tid, const VClock& clock, int rank, uint64_t off, std::size_t bytes);
  // Write after read / write, then records the store (call_end: the host takes the bytes back).
  void store(int tid, const VClock& clock, int rank, uint64_t off, std::size_t bytes, bool call_end = false);
  void store(Block& b, int rank, uint64_t off, std::size_t bytes) { store(b.tid, b.clock, rank, off, bytes); }
  std::string range(int rank, uint64_t lo, uint64_t hi) const;  // "[a,b) of rank R's buf"
  // Output check: copies rank r's `out` aside if it still holds a call's unchecked output.
  void keep_output(int r) {
    if (frozen_[r] >= 0) keep_output_slow(r);
  }
  void keep_output_slow(int r);
  void keep_heap(int r);  // a custom run's: its check reads the whole heap
  void keep_outputs_under(int space, uint64_t off, std::size_t bytes);

  // ---- transfers (transfers.cpp) ----
  Transfer& take_transfer(const char* name, uint32_t& index);
  Transfer& new_transfer(Block& b, const char* name, uint32_t& index);
  void send_flag(int from_rank, FlagLand l, TimePs after = 0);
  // A stream item that takes `ps` of the stream's time from now (stream_op_us) is done then.
  void done_after(Stream& s, TimePs ps);
  void add_use(uint32_t res, float w);  // w == 0 adds nothing
  // The resources a copy-like transfer of rank `me` weighs on, per unit of progress: a remote
  // load (weight load_w) on the source's egress and my ingress, a posted store (store_w) on my
  // egress and the destination's ingress, and the local sides on my HBM.
  // With an L2 (Machine::l2_MB), a local side's HBM weight is scaled by the share of its bytes the
  // L2 misses (l2_miss), and every local side also weighs on the GPU's L2.
  void add_transfer_uses(Transfer& x, uint32_t index, int me, Loc src, std::size_t src_bytes, Loc dst,
                         std::size_t dst_bytes, float load_w, float store_w);
  // The share (0..1) of [l.off, l.off + bytes) that rank me's GPU's L2 does not hold now (1 without
  // an L2); then touches the range (a read: held as x's active read until l2_done).
  float l2_miss(Transfer& x, uint32_t index, int me, Loc l, std::size_t bytes, bool read);
  // A transfer ends: its reads stop streaming (what it touched stays resident until evicted).
  void l2_done(Transfer& x, uint32_t index);
  void start_flow(Block& b, uint32_t index, BytesPerPs cap, double size);
  void complete(uint32_t index);
  void land(uint32_t index);
  void mark_dirty();
  void on_network(uint64_t gen);
  // Resources are per GPU (Machine::team, gpu_of): a rank's are its GPU's, shared with the
  // ranks on the same GPU. Each takes a rank.
  int gpu(int rank) const { return m_.gpu_of(rank); }
  // Does a byte between ranks a and b cross NVLink? Not between two ranks on one GPU: a "peer"
  // access there is a load or store of that GPU's HBM.
  bool over_link(int a, int b) const { return gpu(a) != gpu(b); }
  uint32_t res_egress(int r) const { return uint32_t(gpu(r)); }
  uint32_t res_ingress(int r) const { return uint32_t(world_ + gpu(r)); }
  uint32_t res_hbm(int r) const { return uint32_t(2 * world_ + gpu(r)); }
  uint32_t res_nvls(int r) const { return uint32_t(3 * world_ + gpu(r)); }
  // The GPU's tensor rate, capacity 1 (the whole GPU's): a GEMM at its own full rate uses all of
  // it, so co-located ranks' GEMMs (a team machine) share it max-min fairly (gemm.cpp).
  uint32_t res_tensor(int r) const { return uint32_t(4 * world_ + gpu(r)); }
  // The GPU's L2 bandwidth (Machine::l2_GBps): every local byte's, hit or miss, with an L2 model.
  uint32_t res_l2(int r) const { return uint32_t(5 * world_ + gpu(r)); }
  static constexpr int kResourceKinds = 6;

  // ---- flags (verbs.cpp) ----
  void on_flag(uint32_t index);

  // ---- host plans (streams.cpp) ----
  Stream& stream_at(int rank, int s) { return streams_[std::size_t(rank) * std::size_t(streams_n_) + std::size_t(s)]; }
  Loc decode_host(int rank, int s, uintptr_t a, std::size_t bytes, const char* verb) const;
  uint32_t stream_epoch(Stream& s);
  void run_plan_call(Host& h);
  void kick_streams(int rank);
  void kick(Stream& s);
  void start_item(Stream& s);
  void item_done(Stream& s);
  void finish_wait_event(Stream& s);
  void consume_flag(Stream& s, uint64_t key);
  void plan_flag_landed(const FlagLand& l, uint32_t before);
  void grant_copy_engines(int rank);  // the engines of rank's GPU
  // SMs held by the device-program blocks of every rank on rank's GPU (gemm.cpp).
  int blocks_on_gpu(int rank) const;
  void start_copy(Stream& s, int engine);
  void start_stream_flow(uint32_t index);
  Transfer& new_stream_transfer(Stream& s, TransferKind kind, const char* name, uint32_t& index);
  void complete_stream(uint32_t index);
  void land_stream(Transfer& x, uint32_t index);
  // copy_engines.cpp
  void start_copy_flow(Transfer& x, uint32_t index);
  void copy_landed(int rank);
  // gemm.cpp
  void start_gemm(Stream& s);
  void start_gemm_flow(Transfer& x, uint32_t index);
  void gemm_landed(int rank, uint64_t seq);
  // A team machine: whether a GEMM runs on rank's GPU (any rank's); a kernel or a copy within the
  // GPU that comes up then waits for the GEMMs running (wait_gpu_gemms, gemm.cpp).
  bool gpu_gemm_ahead(int rank) const;
  void wait_gpu_gemms(Stream& s);
  static std::string plan_slot_name(uint32_t slot);
  bool stream_deadlock();  // throws kDeadlock naming the first stuck stream; false if none waits
  void check_stream_read(Stream& s, int rank, uint64_t off, std::size_t bytes);

  // ---- flagged packets (packets.cpp) ----
  // The first packet in [pos, end) of `rank` not holding `epoch` (end if none).
  uint64_t scan_ll(int rank, uint64_t pos, uint64_t end, uint32_t epoch) const;
  void land_ll(const Transfer& x);  // data mode: writes the packets into the heap
  void ll_landed(const Transfer& x);
  std::string ll_seen(int rank, uint64_t off) const;

  // ---- the run ----
  const RunSpec& spec_;
  const Machine& m_;
  const Workload work_;
  const std::vector<int> call_blocks_;
  const int world_, blocks_;  // blocks_: the most any call uses
  const int lanes_;           // RunSpec::lanes: 2 where kernels may run side lanes
  const int stride_;          // blocks_ * lanes_: a rank's places in blocks_v_
  const bool data_, race_;
  bool released_ = false;  // some block signalled with kRelease (released())
  const TimePs launch_ps_, rtt_ps_, store_ps_, flag_ps_, acquire_ps_, peer_kernel_ps_, stream_op_ps_,
      stream_batch_op_ps_, ll_poll_ps_, local_load_ps_;
  // acquire_us split by release_fence_share: the fence of a release with something to publish, and
  // what each acquire wait pays once its flag is seen (the two add up to acquire_us).
  const TimePs fence_ps_, acquire_wait_ps_;
  // Machine key fence_gap_us: what a release's fence pays for each other block of its GPU that is
  // fencing or waiting for a flag (syncing_[gpu]: those blocks now; verbs.cpp, signal and wait).
  const TimePs fence_gap_ps_, local_store_fence_ps_;
  // Machine keys fence_crowd_us / fence_crowd_blocks: a fence after an acquire of the kernel pays
  // fence_crowd_ps_ per other syncing block, at most crowd_blocks_ of them (verbs.cpp, signal).
  const TimePs fence_crowd_ps_;
  const int crowd_blocks_;
  // Machine keys signal_next_us and wait_next_us (Block::run_kind) and load_overlap (verbs.cpp, copy).
  const TimePs signal_next_ps_, wait_next_ps_;
  const bool load_overlap_;
  std::vector<int> syncing_;
  const TimePs plan_kernel_ps_;  // a plan kernel after its stream's earlier items: launch_graph_us, any mode
  const float ll_wire_;          // link bytes per packet byte of a remote put_ll (machine ll_wire_bytes / 8)
  const float load_link_;        // link bytes per byte a block loads from a peer (machine load_link_factor)
  const BytesPerPs block_bpp_;
  const BytesPerPs block_reduce_bpp_;  // a reduce's loads (machine block_reduce_GBps; 0 there: block_bpp_)
  // RunSpec::serial_tail: the threads of a block of the run's kernels (a device program's by
  // size, AlgoInfo::default_threads; a plan's kernels' kDefaultBlockThreads), 0 without it.
  int tail_threads_ = 0;
  int tail_trips(std::size_t bytes, int unroll) const;
  bool slow_blocks_ = false;      // block transfers slow with the GPU's memory traffic (machine load_slowdown)
  const BytesPerPs ll_read_bpp_;  // a block's packet reads in reduce_ll (machine ll_read_GBps; 0: no cap)
  std::size_t in_bytes_, out_bytes_, scratch_bytes_;
  HeapLayout layout_;  // core/heap_layout.h, this run's program alone
  uint64_t in_off_, out_off_, scratch_off_, heap_bytes_;
  std::vector<CollArgs> args_;
  EventQueue q_;
  std::unique_ptr<Trace> trace_;
  std::exception_ptr error_;

  // ---- memory and the output check ----
  std::vector<Heap> heaps_;
  std::vector<CallCheck> checks_;  // per call, released once checked
  std::vector<int> frozen_;        // per rank: the call whose output `out` still holds, or -1
  double worst_err_ = 0;

  // ---- transfers and the network ----
  std::vector<L2> l2_;  // per GPU (Machine::l2_MB), empty without an L2 model
  FlowNet net_;
  std::vector<Transfer> xfers_;
  std::vector<uint32_t> free_xfers_;
  std::vector<Use> uses_;
  std::vector<float> use_w_;
  bool net_dirty_ = false;
  uint64_t net_gen_ = 0;
  std::vector<uint64_t> done_;
  std::vector<double> last_load_;

  // ---- flags ----
  ZeroedWords flags_;  // world x kPadSlots, zeroed once
  std::unordered_map<uint64_t, Block*> waiters_;
  std::unordered_map<uint64_t, Snapshot> flag_snap_;
  std::unordered_map<uint64_t, uint32_t> flag_signal_;  // trace: the slice of the signal that set the flag
  std::vector<FlagLand> lands_;
  std::vector<uint32_t> free_lands_;

  // ---- flagged packets ----
  std::vector<std::vector<Block*>> ll_waiters_;       // per rank: blocks in reduce_ll
  std::vector<std::map<uint64_t, LlSeg>> ll_landed_;  // per rank, timing-only
  std::vector<uint8_t> ll_unpacked_;                  // reduce_ll: the data words of its sources, back to back

  // ---- host plans ----
  std::vector<Kernel> kern_;  // per rank
  int streams_n_ = 0;         // streams per rank (0: a device-program run)
  std::vector<Stream> streams_;
  std::vector<std::vector<EventRec>> events_;  // per rank, kMaxEvents
  std::vector<int> live_streams_;              // per rank: streams with items left in this call
  std::vector<int> ce_busy_, ce_next_;         // per GPU (gpu()): engines in use, round-robin pick
  std::vector<int> ce_rank_busy_;              // per rank: its copies in flight (Machine::ce_per_rank)
  std::vector<std::deque<int>> ce_waiting_;    // per GPU: streams waiting for one (rank * streams_n_ + s)
  std::vector<int> gemms_;                     // per rank: GEMMs running (they hold the SMs)
  uint64_t enqueued_ = 0;                      // host plans: items enqueued so far (host order)
  struct FlagBatch {
    int stream = -1;     // the stream of the batch the last item enqueued joined; -1: not a flag item
    bool waits = false;  // the batch holds a wait (a write after it starts a new one)
  };
  std::vector<FlagBatch> batch_;  // per rank, within a call (StreamItem::batched)
  // Per rank (per GPU on a team machine): when its flag operations and cold starts may go on.
  std::vector<TimePs> front_end_free_;
  TimePs front_end(int rank, TimePs op);
  std::vector<std::deque<int>> sm_waiting_;  // per rank: streams whose kernel waits for the SMs
  // A team machine, per GPU (gemm.cpp): GEMMs started so far, the numbers of those running, and
  // the streams whose kernel or copy waits for the GEMMs running when it came up (up to number).
  std::vector<uint64_t> gpu_gemm_seq_;
  std::vector<std::set<uint64_t>> gpu_gemms_;
  struct GpuWaiter {
    int stream;  // rank * streams_n_ + stream index
    uint64_t upto;
  };
  std::vector<std::deque<GpuWaiter>> gpu_sm_waiting_;
  std::unordered_map<uint64_t, Stream*> stream_waiters_;
  TimePs ce_startup_ps_ = 0;
  TimePs ce_launch_ps_ = 0;    // a cold peer copy's start beyond ce_startup_ps_ (copy_engines.cpp)
  TimePs plan_launch_ps_ = 0;  // launch of a call with copies: launch_eager_us, any mode
  bool host_chain_ = false;    // an eager call with Machine::host_chain(): its items wait to be enqueued
  TimePs host_launch_ps_ = 0, host_copy_ps_ = 0, host_event_ps_ = 0, host_flag_ps_ = 0, host_flag_item_ps_ = 0,
         host_call_ps_ = 0;            // Machine::host_*_us
  std::vector<TimePs> host_enqueued_;  // per rank: when its host has enqueued the call's latest item
  // Eager plan calls back to back on a machine with one rank per host thread: the host enqueues
  // the next call as soon as it has enqueued this one (streams.cpp run_plan_call; engine.cpp).
  bool host_ahead_ = false;
  TimePs queued_start_ps_ = 0;  // a call its host enqueued ahead: the GPU starts it launch_graph_us on
  BytesPerPs ce_bpp_ = 0;
  // NVLink time per byte of a copy engine's flow, per direction: the direction's rate
  // (nvlink_egress_GBps / nvlink_ingress_GBps, what SM copies reach) over the engine's own
  // (ce_GBps) where the engine goes faster (copy_engines.cpp start_copy_flow), else 1.
  float ce_egress_w_ = 1, ce_ingress_w_ = 1;

  // Last: destroyed first, unwinding fibers still suspended (deadlock, error).
  std::vector<Host> hosts_;
  std::vector<Block> blocks_v_;
};

}  // namespace symm::sim
