// The engine: event loop, fibers, flows, visible memory, race and deadlock checks, trace.
// Verb timing semantics are documented in ctx.h; the network model in flow_net.h.
//
// Addresses: programs only do pointer arithmetic on the pointers of CollArgs and pass them
// back to verbs, so the simulator hands out *synthetic* addresses, never dereferenced by the
// program: space s (rank s's symmetric heap; kMcSpace = the multicast view of every rank's
// heap) starts at kAddrBase + (s << kSpaceShift). With data the engine maps (space, offset)
// onto a host byte array per rank; timing-only runs have no arrays at all.
//
// Race check (data mode): happens-before with vector clocks, FastTrack style. Every rank's
// host (stream) and every (rank, block) has an entry. An access (load or store) after a release
// starts a new epoch of the accessor's own entry, so a release publishes exactly what came
// before it. A release signal carries a snapshot of the signaller's clock in the flag; an
// acquire wait that observes the flag joins it; a launch inherits the host's clock and the
// kernel's end joins its blocks back (stream order).
//   - read after write: a read of bytes whose last writer is neither the reader nor
//     happens-before it is a race;
//   - write after read / write: every byte range keeps its reads since the last store (per
//     reader entity the latest epoch; reads that happen-before a newer read are dropped); a
//     store requires every recorded read and the last store of its bytes to happen-before it
//     (or to be its own);
//   - end of a call = the host takes `in` and `out` back: when a rank's kernel has ended, its
//     host reads its whole `out` (every peer store into it must be ordered before the end),
//     every read of its `in` and `out` by anyone must be ordered before the end (the caller may
//     overwrite them once the call returns), and both are recorded as written by the host at
//     that moment (a peer that reads them later without being ordered after it is a race).
// The output is checked against the reference per call, as the host saw it at its call's end
// (a store that lands later does not count).
//
// Flagged packets (put_ll / reduce_ll): a put_ll's packets are ordinary stores for the race
// check (a plain read of packet memory is checked like any other), but reduce_ll's reads of its
// packet buffers are exempt from the read-after-write check: each 8-byte packet is single-copy
// atomic and carries its own epoch, so a packet seen with the awaited epoch is complete. Within
// the kernel they create no happens-before for other memory (no fence). They are recorded as
// reads (a later store over them must be ordered after them), and for ordering they count at
// kernel granularity: a put_ll carries its block's *launch* clock (the kernel boundary is a full
// fence before the packet), and a reduce_ll that accepts packets joins that clock into its
// host's clock when its kernel ends (a full fence after). That is core/algos/block_regions.h's
// two-halves argument in clocks: rank P rewrites half h of rank Q's region two epochs after Q
// read it, after P's kernel accepted packets that Q sent from a kernel launched after Q's reads.
// reduce_ll waits on *memory* with data (the epoch words in the heap), and on a per-rank record
// of landed packet ranges and their epochs in timing-only runs.
#include <boost/context/fiber.hpp>
#include <chrono>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>

#include "backends/sim/ctx.h"
#include "backends/sim/event_queue.h"
#include "backends/sim/flow_net.h"
#include "backends/sim/testing.h"
#include "backends/sim/trace.h"
#include "core/dispatch.h"
#include "core/heap_layout.h"
#include "core/reference.h"
#include "core/signal_pad.h"

namespace symm::sim {
namespace {

namespace bc = boost::context;

constexpr uintptr_t kAddrBase = uintptr_t(1) << 44;
constexpr int kSpaceShift = 37;  // 128 GiB of symmetric heap per rank
constexpr int kMcSpace = kPadWorld;

// ---- fiber stacks: pooled, because a 64-rank run starts thousands of fibers ----------------
class StackPool {
 public:
  static constexpr std::size_t kSize = 64 << 10;
  ~StackPool() {
    for (void* p : free_) std::free(p);
  }
  void* take() {
    if (free_.empty()) {
      void* p = std::malloc(kSize);
      if (!p) throw std::bad_alloc();
      return p;
    }
    void* p = free_.back();
    free_.pop_back();
    return p;
  }
  void give(void* p) { free_.push_back(p); }

 private:
  std::vector<void*> free_;
};
StackPool& stack_pool() {
  thread_local StackPool pool;
  return pool;
}
struct PooledStack {
  bc::stack_context allocate() {
    bc::stack_context s;
    s.size = StackPool::kSize;
    s.sp = static_cast<char*>(stack_pool().take()) + StackPool::kSize;
    return s;
  }
  void deallocate(bc::stack_context& s) noexcept { stack_pool().give(static_cast<char*>(s.sp) - s.size); }
};

// ---- element conversion (bf16 inline: it is the hot loop of data-mode runs) ----------------
template <class T>
struct Conv;
template <>
struct Conv<float> {
  static float load(float v) { return v; }
  static float store(float f) { return f; }
};
template <>
struct Conv<bf16> {
  static float load(bf16 v) {
    const uint32_t u = uint32_t(v.bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static bf16 store(float f) {  // round to nearest even, NaN kept: as symm::from_float<bf16>
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return bf16{uint16_t((u >> 16) | 0x40)};
    u += 0x7FFF + ((u >> 16) & 1);
    return bf16{uint16_t(u >> 16)};
  }
};
template <>
struct Conv<fp16> {
  static float load(fp16 v) { return to_float(v); }
  static fp16 store(float f) { return from_float<fp16>(f); }
};

// Big arrays (heaps, flags) are recycled across runs on this thread: a sweep or a test suite
// runs thousands of simulations, and fresh pages (faults + zeroing) cost more than the
// simulation of a small collective.
template <class T>
std::vector<std::vector<T>>& recycled() {
  thread_local std::vector<std::vector<T>> cache;
  return cache;
}
// The largest one: runs of different sizes and worlds share the pool, and a small buffer
// taken for a large heap would be reallocated (fresh pages) anyway.
template <class T>
std::vector<T> take_buffer() {
  auto& c = recycled<T>();
  if (c.empty()) return {};
  auto big = std::max_element(c.begin(), c.end(),
                              [](const std::vector<T>& a, const std::vector<T>& b) { return a.capacity() < b.capacity(); });
  std::vector<T> v = std::move(*big);
  *big = std::move(c.back());
  c.pop_back();
  return v;
}
template <class T>
void give_buffer(std::vector<T>&& v) {
  auto& c = recycled<T>();
  if (c.size() < std::size_t(kPadWorld) && v.capacity() * sizeof(T) <= (std::size_t(256) << 20))
    c.push_back(std::move(v));
}

using VClock = std::vector<uint32_t>;
using Snapshot = std::shared_ptr<const VClock>;

// Joins b into a; true if a changed.
bool join(VClock& a, const VClock& b) {
  bool changed = false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (b[i] > a[i]) a[i] = b[i], changed = true;
  return changed;
}

}  // namespace

enum class BlockState : uint8_t { kIdle, kRunning, kTransfer, kFlag, kPackets, kStores, kDone };

struct Block {
  int rank = 0, index = 0, tid = 0;
  bc::fiber self, caller;
  BlockState state = BlockState::kIdle;
  int inflight = 0;  // posted stores not landed yet
  uint32_t wait_slot = 0, wait_value = 0;
  Block* next_waiter = nullptr;
  TimePs started = 0;
  uint32_t last_wait = UINT32_MAX;  // for race reports
  // reduce_ll waiting on packets: buffer [ll_buf, ll_hi) of this rank, first packet not yet valid
  // at ll_lo, awaited epoch.
  uint64_t ll_buf = 0, ll_lo = 0, ll_hi = 0;
  uint32_t ll_epoch = 0;
  int ll_from_rank = -1, ll_from_block = 0;  // trace: the put_ll whose landing woke it
  TimePs ll_from_t = 0;
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
};

namespace {

enum EventKind : uint32_t { kResumeBlock, kResumeHost, kFlagLand, kTransferLand, kNetwork };

struct Loc {
  int space;
  uint64_t off;
};

struct Transfer {
  Block* owner = nullptr;
  const char* name = "";
  TimePs issued = 0;
  bool remote_load = false;  // pays the load round trip before the block resumes
  bool posted = false;       // lands store_latency after the block resumes
  bool ll = false;           // flagged packets of epoch ll_epoch (put_ll)
  uint32_t ll_epoch = 0;
  TimePs done_at = 0;  // when the issuing block resumed (trace)
  int dst_space = 0;   // a rank, or kMcSpace: the same offset on every rank
  uint64_t dst_off = 0;
  std::size_t bytes = 0;
  std::vector<uint8_t> data;  // data mode: what lands
};

struct FlagLand {
  int rank;
  uint32_t slot, value;
  Snapshot snap;
  uint64_t signal_id;
};

struct WriteSeg {
  uint64_t end;
  int tid;
  uint32_t epoch;
  bool call_end = false;  // not a store: the host took the buffer back at the end of a call
};

struct Access {
  int tid;
  uint32_t epoch;
};

struct ReadSeg {  // the reads of [key, end) since its last store, none happening-before another
  uint64_t end;
  std::vector<Access> reads;
};

struct LlSrcSeg {  // packets [key, end) were last put by a block launched with this clock
  uint64_t end;
  Snapshot launch;
};

struct LlSeg {  // timing-only: packets [key, end) landed with `epoch`
  uint64_t end;
  uint32_t epoch;
};

// Sets [b, e) of an interval map (key = begin, value has .end) to v, splitting what overlaps.
template <class Seg>
void assign_range(std::map<uint64_t, Seg>& m, uint64_t b, uint64_t e, Seg v) {
  auto it = m.lower_bound(b);
  if (it != m.begin()) {
    auto p = std::prev(it);
    if (p->second.end > b) {
      const Seg whole = p->second;
      p->second.end = b;
      if (whole.end > e) m.emplace(e, whole);
    }
  }
  it = m.lower_bound(b);
  while (it != m.end() && it->first < e) {
    if (it->second.end > e) {
      const Seg rest = it->second;
      m.erase(it);
      m.emplace(e, rest);
      break;
    }
    it = m.erase(it);
  }
  v.end = e;
  m.emplace(b, v);
}

// Splits the segment of an interval map that straddles x (if any) at x.
template <class Seg>
void split_at(std::map<uint64_t, Seg>& m, uint64_t x) {
  auto it = m.upper_bound(x);
  if (it == m.begin()) return;
  --it;
  if (it->first < x && it->second.end > x) {
    Seg rest = it->second;
    it->second.end = x;
    m.emplace_hint(std::next(it), x, std::move(rest));
  }
}

struct Heap {
  std::vector<uint8_t> bytes;
  // Race check: last writer of every byte range, reads since, and who put the packets.
  std::map<uint64_t, WriteSeg> writes;
  std::map<uint64_t, ReadSeg> reads;
  std::map<uint64_t, LlSrcSeg> ll_src;
};

// What one call leaves for its output check: every rank's inputs (as stored, in float) and, for
// a rank whose `out` was written after its call ended, `out` as it was at that end.
struct CallCheck {
  std::vector<std::vector<float>> in;
  std::vector<std::vector<uint8_t>> out;  // empty: the heap still holds it
  int ended = 0;
};

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

class Simulator {
 public:
  // call_blocks[c]: the block count of call c (spec.calls is its size).
  Simulator(const RunSpec& spec, ProgramFn fn, std::vector<int> call_blocks);
  ~Simulator();
  RunResult run();

  // Verbs, called from BlockCtx on a block's fiber.
  int world() const { return world_; }
  int blocks(const Block& b) const { return hosts_[b.rank].blocks; }
  uintptr_t peer_addr(Block& b, uintptr_t p, int r);
  void copy(Block& b, uintptr_t dst, uintptr_t src, std::size_t bytes);
  void reduce(Block& b, DType t, uintptr_t dst, const void* const* srcs, int n, std::size_t count,
              ReduceOp op);
  void multimem(Block& b, DType t, uintptr_t mc, std::size_t count, ReduceOp op);
  void signal(Block& b, int peer, uint32_t slot, uint32_t value, MemOrder order);
  void wait(Block& b, uint32_t slot, uint32_t value, MemOrder order);
  uint32_t advance(Block& b, uint32_t slot);
  void put_ll(Block& b, uintptr_t dst, uintptr_t src, std::size_t bytes, uint32_t epoch);
  void reduce_ll(Block& b, DType t, uintptr_t dst, const void* const* srcs, int n, std::size_t count,
                 uint32_t epoch, ReduceOp op);

 private:
  static uintptr_t addr(int space, uint64_t off) {
    return kAddrBase + (uintptr_t(space) << kSpaceShift) + off;
  }
  Loc decode(const Block& b, uintptr_t a, std::size_t bytes, const char* verb) const;
  uint8_t* ptr(int rank, uint64_t off) { return heaps_[rank].bytes.data() + off; }
  std::string where(int rank, uint64_t off) const;
  std::string who(int tid) const;

  Block& block_at(int rank, int b) { return blocks_v_[std::size_t(rank) * blocks_ + b]; }
  void yield(Block& b) { b.caller = std::move(b.caller).resume(); }
  void resume(Block& b);
  void resume(Host& h);
  void host_plan(Host& h);
  void launch(Host& h);
  void end_block(Block& b);
  void end_call(Host& h);
  template <class T>
  void write_inputs(Host& h, int call);

  // Memory and the race check. A reader / writer is an entity (tid) with its clock; blk is the
  // block for reports (nullptr: the host).
  uint32_t access_epoch(Block& b);
  void check_read(int tid, const VClock& clock, const Block* blk, int rank, uint64_t off, std::size_t bytes);
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
  void keep_outputs_under(int space, uint64_t off, std::size_t bytes);
  // Flagged packets: the first packet in [pos, end) of `rank` not holding `epoch` (end if none).
  uint64_t scan_ll(int rank, uint64_t pos, uint64_t end, uint32_t epoch) const;
  void ll_landed(const Transfer& x);
  std::string ll_seen(int rank, uint64_t off) const;

  // Transfers.
  Transfer& new_transfer(Block& b, const char* name, uint32_t& index);
  void add_use(uint32_t res, float w);  // w == 0 adds nothing
  // The resources a copy-like transfer of rank `me` weighs on, per unit of progress: a remote
  // load (weight load_w) on the source's egress and my ingress, a posted store (store_w) on my
  // egress and the destination's ingress, and the local sides on my HBM.
  void add_transfer_uses(const Transfer& x, int me, int src, int dst, float load_w, float store_w);
  void start_flow(Block& b, uint32_t index, BytesPerPs cap, double size);
  void complete(uint32_t index);
  void land(uint32_t index);
  void mark_dirty();
  void on_network(uint64_t gen);
  void on_flag(uint32_t index);
  [[noreturn]] void deadlock();
  double check_outputs(int call);

  uint32_t res_egress(int g) const { return uint32_t(g); }
  uint32_t res_ingress(int g) const { return uint32_t(world_ + g); }
  uint32_t res_hbm(int g) const { return uint32_t(2 * world_ + g); }
  uint32_t res_nvls(int g) const { return uint32_t(3 * world_ + g); }

  const RunSpec& spec_;
  const Machine& m_;
  ProgramFn fn_;
  const std::vector<int> call_blocks_;
  const int world_, blocks_;  // blocks_: the most any call uses (the stride of blocks_v_)
  const bool data_, race_;
  const TimePs launch_ps_, rtt_ps_, store_ps_, flag_ps_;
  const BytesPerPs block_bpp_;
  std::size_t in_bytes_, out_bytes_, scratch_bytes_;
  HeapLayout layout_;  // core/heap_layout.h, this run's program alone
  uint64_t in_off_, out_off_, scratch_off_, heap_bytes_;
  std::vector<CollArgs> args_;

  EventQueue q_;
  FlowNet net_;
  std::vector<Heap> heaps_;
  std::vector<uint32_t> flags_;  // world x kPadSlots, zeroed once
  std::unordered_map<uint64_t, Block*> waiters_;
  std::vector<std::vector<Block*>> ll_waiters_;       // per rank: blocks in reduce_ll
  std::vector<std::map<uint64_t, LlSeg>> ll_landed_;  // per rank, timing-only
  std::unordered_map<uint64_t, Snapshot> flag_snap_;
  std::unordered_map<uint64_t, uint64_t> flag_signal_;  // trace: which signal set the flag
  std::vector<Transfer> xfers_;
  std::vector<uint32_t> free_xfers_;
  std::vector<FlagLand> lands_;
  std::vector<uint32_t> free_lands_;
  std::vector<Use> uses_;
  std::vector<float> use_w_;
  bool net_dirty_ = false;
  uint64_t net_gen_ = 0;
  std::vector<uint64_t> done_;
  std::vector<double> last_load_;
  uint64_t signal_ids_ = 0;
  std::vector<CallCheck> checks_;  // per call, released once checked
  std::vector<int> frozen_;        // per rank: the call whose output `out` still holds, or -1
  double worst_err_ = 0;
  std::vector<float> acc_;
  std::vector<uint8_t> ll_unpacked_;  // reduce_ll: the data words of its sources, back to back
  std::unique_ptr<Trace> trace_;
  std::exception_ptr error_;
  // Last: destroyed first, unwinding fibers still suspended (deadlock, error).
  std::vector<Host> hosts_;
  std::vector<Block> blocks_v_;
};

// ---- set-up --------------------------------------------------------------------------------

Simulator::Simulator(const RunSpec& spec, ProgramFn fn, std::vector<int> call_blocks)
    : spec_(spec),
      m_(spec.machine),
      fn_(fn),
      call_blocks_(std::move(call_blocks)),
      world_(spec.world),
      blocks_(*std::max_element(call_blocks_.begin(), call_blocks_.end())),
      data_(!spec.timing_only),
      race_(!spec.timing_only && spec.race_check),
      launch_ps_(us_to_ps(spec.graph ? spec.machine.launch_graph_us : spec.machine.launch_eager_us)),
      rtt_ps_(us_to_ps(spec.machine.load_rtt_us)),
      store_ps_(us_to_ps(spec.machine.store_latency_us)),
      flag_ps_(us_to_ps(spec.machine.flag_latency_us)),
      block_bpp_(gbps_to_bpp(spec.machine.block_GBps)),
      net_([&] {
        std::vector<BytesPerPs> cap;
        const Machine& m = spec.machine;
        for (double g : {m.nvlink_egress_GBps, m.nvlink_ingress_GBps, m.hbm_GBps, m.nvls_GBps})
          cap.insert(cap.end(), std::size_t(spec.world), gbps_to_bpp(g));
        return cap;
      }()) {
  const AlgoInfo& a = *spec.algo;
  in_bytes_ = a.in_bytes(spec.bytes, world_);
  out_bytes_ = a.out_bytes(spec.bytes, world_);
  scratch_bytes_ = a.scratch_bytes(spec.bytes, world_);
  layout_ = heap_layout(a, spec.bytes, world_, HeapUse::kOneProgram);
  in_off_ = layout_.in;
  out_off_ = layout_.out;
  scratch_off_ = layout_.scratch;
  heap_bytes_ = layout_.total;
  if (heap_bytes_ >= (uint64_t(1) << kSpaceShift))
    fail(ErrorCode::kUnsupported,
         "bytes=" + std::to_string(spec.bytes) + " needs a symmetric heap over 128 GiB");
  args_.resize(std::size_t(world_));
  for (int r = 0; r < world_; ++r) {
    CollArgs& c = args_[r];
    c.in = reinterpret_cast<const void*>(addr(r, in_off_));
    c.out = reinterpret_cast<void*>(addr(r, out_off_));
    c.scratch = reinterpret_cast<void*>(addr(r, scratch_off_));
    c.out_mc = reinterpret_cast<void*>(addr(kMcSpace, out_off_));
    c.count = a.count(spec.bytes, spec.dtype, world_);
    c.op = spec.op;
  }
  // Transfers keep their staging buffers' capacity from earlier runs (no fresh pages).
  xfers_ = take_buffer<Transfer>();
  for (std::size_t i = xfers_.size(); i-- > 0;) free_xfers_.push_back(uint32_t(i));
  flags_ = take_buffer<uint32_t>();
  flags_.assign(std::size_t(world_) * pad::kPadSlots, 0);
  use_w_.assign(std::size_t(4 * world_), 0);
  last_load_.assign(std::size_t(2 * world_), -1);
  ll_waiters_.resize(std::size_t(world_));
  if (!data_) ll_landed_.resize(std::size_t(world_));
  if (data_) {
    heaps_.resize(std::size_t(world_));
    for (Heap& h : heaps_) {
      h.bytes = take_buffer<uint8_t>();
      // Room for a slightly larger run later: reserving costs no pages until they are touched,
      // and a reallocation touches them all again.
      if (h.bytes.capacity() < heap_bytes_) h.bytes.reserve(align_up(heap_bytes_ + heap_bytes_ / 4, 1 << 20));
      h.bytes.assign(heap_bytes_, 0xFF);  // NaN in every dtype: unwritten = wrong
    }
    checks_.resize(call_blocks_.size());
    frozen_.assign(std::size_t(world_), -1);
  }
  const std::size_t tids = std::size_t(world_) * (1 + std::size_t(blocks_));
  hosts_.resize(std::size_t(world_));
  blocks_v_.resize(std::size_t(world_) * blocks_);
  for (int r = 0; r < world_; ++r) {
    hosts_[r].rank = r;
    if (race_) hosts_[r].clock.assign(tids, 0);
    for (int b = 0; b < blocks_; ++b) {
      Block& blk = block_at(r, b);
      blk.rank = r;
      blk.index = b;
      blk.tid = world_ + r * blocks_ + b;
    }
  }
  if (!spec.trace_path.empty()) {
    trace_ = std::make_unique<Trace>(spec.trace_path);
    for (int r = 0; r < world_; ++r) {
      trace_->process_name(r, "rank " + std::to_string(r));
      trace_->thread_name(r, Trace::kHostTid, "host");
      trace_->thread_name(r, Trace::kStreamTid, "stream 0");
      trace_->thread_name(r, Trace::kLinkTid, "nvlink");
      for (int b = 0; b < blocks_; ++b) trace_->thread_name(r, b, "block " + std::to_string(b));
    }
  }
}

Simulator::~Simulator() {
  // Fibers still suspended (after an error) unwind their stacks here, before anything they use.
  blocks_v_.clear();
  hosts_.clear();
  give_buffer(std::move(flags_));
  give_buffer(std::move(xfers_));
  for (Heap& h : heaps_) give_buffer(std::move(h.bytes));
  for (CallCheck& c : checks_)
    for (auto& v : c.in) give_buffer(std::move(v));
}

// ---- engine --------------------------------------------------------------------------------

void Simulator::resume(Block& b) {
  if (b.state == BlockState::kIdle) {
    b.state = BlockState::kRunning;
    b.started = q_.now();
    b.self = bc::fiber(std::allocator_arg, PooledStack{}, [this, &b](bc::fiber&& caller) {
      b.caller = std::move(caller);
      try {
        BlockCtx ctx(this, &b);
        fn_(ctx, args_[b.rank]);
        if (b.inflight) {  // kernel end flushes: the block's posted stores land first
          b.state = BlockState::kStores;
          yield(b);
        }
        end_block(b);
      } catch (const bc::detail::forced_unwind&) {
        throw;
      } catch (...) {
        if (!error_) error_ = std::current_exception();
      }
      b.state = BlockState::kDone;
      return std::move(b.caller);
    });
  }
  b.state = BlockState::kRunning;
  b.self = std::move(b.self).resume();
}

void Simulator::resume(Host& h) {
  if (!h.self) {
    h.self = bc::fiber(std::allocator_arg, PooledStack{}, [this, &h](bc::fiber&& caller) {
      h.caller = std::move(caller);
      try {
        host_plan(h);
      } catch (const bc::detail::forced_unwind&) {
        throw;
      } catch (...) {
        if (!error_) error_ = std::current_exception();
      }
      return std::move(h.caller);
    });
  }
  h.self = std::move(h.self).resume();
}

// One host plan per rank: for each call, fresh inputs, launch, wait for the stream. Later
// plans (copy engines, stream flags, GEMMs) add host verbs here.
void Simulator::host_plan(Host& h) {
  for (int call = 0; call < int(call_blocks_.size()); ++call) {
    h.call = call;
    h.blocks = call_blocks_[std::size_t(call)];
    if (data_) with_type(spec_.dtype, [&]<class T>() { write_inputs<T>(h, call); });
    launch(h);
    h.caller = std::move(h.caller).resume();  // until the kernel's last block ends
    end_call(h);
  }
}

// The kernel of rank h's current call has ended and the host resumes: the caller gets `out`
// (and may overwrite `in` and `out` from now on). See the race check at the top of this file.
void Simulator::end_call(Host& h) {
  const int r = h.rank;
  if (race_) {
    check_read(r, h.clock, nullptr, r, out_off_, out_bytes_);
    ++h.clock[r];
    h.tick_before_store = false;
    store(r, h.clock, r, in_off_, in_bytes_, /*call_end=*/true);
    store(r, h.clock, r, out_off_, out_bytes_, /*call_end=*/true);
  }
  if (!data_ || spec_.algo->op == Op::kBarrier) return;
  // Rank r's output of this call is what `out` holds now: kept there until something writes it.
  const int call = h.call;
  frozen_[r] = call;
  CallCheck& c = checks_[std::size_t(call)];
  if (++c.ended < world_) return;
  worst_err_ = std::max(worst_err_, check_outputs(call));
  for (auto& v : c.in) give_buffer(std::move(v));
  c = CallCheck{};
  for (int& f : frozen_)
    if (f == call) f = -1;
}

void Simulator::keep_output_slow(int r) {
  CallCheck& c = checks_[std::size_t(frozen_[r])];
  if (c.out.empty()) c.out.resize(std::size_t(world_));
  // Not from the heap pool: these are small and rare (outputs of calls before the last).
  c.out[std::size_t(r)].assign(ptr(r, out_off_), ptr(r, out_off_) + out_bytes_);
  frozen_[r] = -1;
}

void Simulator::keep_outputs_under(int space, uint64_t off, std::size_t bytes) {
  if (off >= out_off_ + out_bytes_ || off + bytes <= out_off_) return;
  if (space != kMcSpace) return keep_output(space);
  for (int r = 0; r < world_; ++r) keep_output(r);
}

template <class T>
void Simulator::write_inputs(Host& h, int call) {
  const int r = h.rank;
  const std::size_t n = in_bytes_ / sizeof(T);
  T* p = reinterpret_cast<T*>(ptr(r, in_off_));
  // Kept (rounded to T, exact in float) for this call's reference check.
  CallCheck& c = checks_[std::size_t(call)];
  if (c.in.empty()) c.in.resize(std::size_t(world_));
  std::vector<float>& keep = c.in[std::size_t(r)];
  keep = take_buffer<float>();
  keep.resize(n);
  float* const k = keep.data();
  const uint64_t stream = splitmix64(spec_.seed ^ splitmix64(uint64_t(call) << 32 | uint32_t(r)));
  // Two 24-bit draws per 64-bit hash, as odd multiples of 2^-23 in (-1, 1): forcing the low
  // bit keeps -1 out without a branch.
  auto draw = [](uint64_t bits) { return float((bits & 0xFFFFFF) | 1) * 0x1p-23f - 1.0f; };
  // One pass: draw, round to T, and keep what was stored (the reference sees rounded values).
  auto put = [&](std::size_t i, float f) {
    p[i] = Conv<T>::store(f);
    k[i] = Conv<T>::load(p[i]);
  };
  std::size_t i = 0;
  for (; i + 1 < n; i += 2) {
    const uint64_t z = splitmix64(stream + i);
    put(i, draw(z >> 40));
    put(i + 1, draw(z >> 8));
  }
  if (i < n) put(i, draw(splitmix64(stream + i) >> 40));
  // The previous call's output is garbage for this one: poison it so an unwritten element fails.
  keep_output(r);
  std::memset(ptr(r, out_off_), 0xFF, out_bytes_);
  if (race_) {
    if (h.tick_before_store) ++h.clock[r], h.tick_before_store = false;
    store(r, h.clock, r, in_off_, in_bytes_);
    store(r, h.clock, r, out_off_, out_bytes_);
  }
}

void Simulator::launch(Host& h) {
  h.launched = q_.now();
  h.live_blocks = h.blocks;
  const TimePs start = q_.now() + launch_ps_;
  Snapshot launch_snap;
  if (race_) launch_snap = std::make_shared<const VClock>(h.clock);
  for (int b = 0; b < h.blocks; ++b) {
    Block& blk = block_at(h.rank, b);
    blk.state = BlockState::kIdle;
    blk.inflight = 0;
    blk.last_wait = UINT32_MAX;
    if (race_) {
      blk.clock = h.clock;
      blk.release_snap.reset();
      blk.tick_before_store = true;
      blk.launch_snap = launch_snap;
      blk.ll_acq.clear();
    }
    q_.push(start, kResumeBlock, uint32_t(h.rank * blocks_ + b), 0);
  }
  h.tick_before_store = true;  // host stores after the launch are not ordered before it
}

void Simulator::end_block(Block& b) {
  Host& h = hosts_[b.rank];
  if (race_) {
    join(h.clock, b.clock);
    for (const Snapshot& s : b.ll_acq) join(h.clock, *s);
    b.ll_acq.clear();
  }
  if (trace_) trace_->slice(b.rank, b.index, "block", b.started, q_.now());
  if (--h.live_blocks == 0) {
    h.ended = q_.now();
    if (trace_)
      trace_->slice(h.rank, Trace::kStreamTid, spec_.algo->id.c_str(), h.launched + launch_ps_, h.ended);
    q_.push(q_.now(), kResumeHost, uint32_t(h.rank), 0);
  }
}

RunResult Simulator::run() {
  for (int r = 0; r < world_; ++r) q_.push(0, kResumeHost, uint32_t(r), 0);
  Event e;
  while (!error_ && q_.pop(e)) {
    switch (e.kind) {
      case kResumeBlock: resume(blocks_v_[e.a]); break;
      case kResumeHost: resume(hosts_[e.a]); break;
      case kFlagLand: on_flag(uint32_t(e.b)); break;
      case kTransferLand: land(uint32_t(e.b)); break;
      case kNetwork: on_network(e.b); break;
    }
  }
  if (error_) std::rethrow_exception(error_);
  // Blocks a call did not launch stay idle (or done from an earlier call); any other is stuck.
  for (const Block& b : blocks_v_)
    if (b.state != BlockState::kDone && b.state != BlockState::kIdle) deadlock();

  RunResult res;
  res.blocks = call_blocks_.back();
  res.events = q_.processed();
  TimePs first = hosts_[0].launched, last = hosts_[0].ended;
  for (const Host& h : hosts_) first = std::min(first, h.launched), last = std::max(last, h.ended);
  res.time_us = ps_to_us(last - first);
  res.err_bound = rel_err_bound(spec_.dtype, world_);
  if (data_) res.max_rel_err = worst_err_;  // every call's, checked as each one ended
  if (trace_) trace_->finish();
  return res;
}

// All ranks' outputs of one call (as each host saw them at its call's end) against
// symm::reference. all_reduce is elementwise, so it is checked a chunk at a time: the float64
// copies of 8 ranks x 1 MiB would otherwise dominate the run (and chunks under malloc's mmap
// threshold cost no fresh pages).
double Simulator::check_outputs(int call) {
  const Op op = spec_.algo->op;
  const CallCheck& cc = checks_[std::size_t(call)];
  const std::vector<std::vector<float>>& inputs = cc.in;
  std::vector<const uint8_t*> outs(static_cast<std::size_t>(world_));
  for (int r = 0; r < world_; ++r)
    outs[r] = cc.out.empty() || cc.out[r].empty() ? ptr(r, out_off_) : cc.out[r].data();
  const std::size_t n_in = inputs[0].size(), n_out = out_bytes_ / dtype_size(spec_.dtype);
  const std::size_t chunk = op == Op::kAllReduce ? std::size_t(1) << 12 : std::max<std::size_t>(n_in, 1);
  std::vector<std::vector<double>> in(static_cast<std::size_t>(world_));
  std::vector<double> got;
  double worst = 0;
  for (std::size_t c0 = 0; c0 < std::max(n_in, std::size_t(1)); c0 += chunk) {
    const std::size_t len = std::min(chunk, n_in - c0);
    for (int r = 0; r < world_; ++r) in[r].assign(inputs[r].begin() + c0, inputs[r].begin() + c0 + len);
    const auto want = reference(op, spec_.op, in);
    const std::size_t o0 = op == Op::kAllReduce ? c0 : 0, olen = op == Op::kAllReduce ? len : n_out;
    // all_reduce and all_gather give every rank the same answer: a rank whose bytes equal rank
    // 0's has rank 0's error, so only differing ranks are converted and compared again.
    const bool same_answer = op == Op::kAllReduce || op == Op::kAllGather;
    const std::size_t obytes = olen * dtype_size(spec_.dtype), oskip = o0 * dtype_size(spec_.dtype);
    for (int r = 0; r < world_; ++r) {
      if (same_answer && r > 0 &&
          std::memcmp(outs[r] + oskip, outs[0] + oskip, obytes) == 0)
        continue;
      got.resize(olen);
      with_type(spec_.dtype, [&]<class T>() {
        const T* p = reinterpret_cast<const T*>(outs[r]) + o0;
        for (std::size_t i = 0; i < olen; ++i) got[i] = Conv<T>::load(p[i]);
      });
      worst = std::max(worst, max_rel_err(got, want[r]));
    }
  }
  return worst;
}

void Simulator::deadlock() {
  const Block* first = nullptr;
  int others = 0;
  for (const Block& b : blocks_v_) {
    if (b.state != BlockState::kFlag && b.state != BlockState::kPackets) continue;
    if (!first)
      first = &b;
    else
      ++others;
  }
  if (!first)
    fail(ErrorCode::kInternal, "simulation stopped with blocks unfinished but none waiting on a flag");
  const std::string and_others =
      " (and " + std::to_string(others) + " other blocked wait" + (others == 1 ? "" : "s") + ")";
  if (first->state == BlockState::kPackets) {
    const std::string who = "rank " + std::to_string(first->rank) + " block " + std::to_string(first->index);
    const uint64_t base = layout_.buffer_at(first->ll_buf).base;
    const std::string buf = where(first->rank, first->ll_buf);  // "rank R's scratch at byte N"
    fail(ErrorCode::kDeadlock,
         "deadlock: " + who + " waits in reduce_ll for epoch " + std::to_string(first->ll_epoch) +
             " on the packet buffer " + buf.substr(0, buf.find(" at byte")) + " bytes [" +
             std::to_string(first->ll_buf - base) + "," + std::to_string(first->ll_hi - base) +
             ") but the packet at byte " + std::to_string(first->ll_lo - base) + " " +
             ll_seen(first->rank, first->ll_lo) + and_others);
  }
  const uint32_t s = first->wait_slot;
  std::string slot = "slot " + std::to_string(s);
  if (s < pad::kFlagSlots) {
    const uint32_t from = s % kPadWorld, blk = (s / kPadWorld) % kPadBlocks,
                   ch = s / (kPadWorld * kPadBlocks);
    slot += " (channel " + std::to_string(ch) + ", block " + std::to_string(blk) + ", from rank " +
            std::to_string(from) + ")";
  }
  fail(ErrorCode::kDeadlock,
       "deadlock: rank " + std::to_string(first->rank) + " block " + std::to_string(first->index) +
           " waits on " + slot + " for value >= " + std::to_string(first->wait_value) + " but sees " +
           std::to_string(flags_[std::size_t(first->rank) * pad::kPadSlots + s]) + and_others);
}

// ---- addresses and memory ------------------------------------------------------------------

Loc Simulator::decode(const Block& b, uintptr_t a, std::size_t bytes, const char* verb) const {
  const uintptr_t rel = a - kAddrBase;
  const Loc l{int(rel >> kSpaceShift), uint64_t(rel & ((uintptr_t(1) << kSpaceShift) - 1))};
  const bool space_ok = a >= kAddrBase && (l.space < world_ || l.space == kMcSpace);
  if (!space_ok || l.off + bytes > heap_bytes_ || l.off % kVecBytes || bytes % kVecBytes)
    fail(ErrorCode::kInvalidArgument,
         "rank " + std::to_string(b.rank) + " block " + std::to_string(b.index) + ": " + verb + " of " +
             std::to_string(bytes) +
             " bytes at an address outside the symmetric heap or not 16-byte aligned");
  return l;
}

std::string Simulator::where(int rank, uint64_t off) const {
  const HeapLayout::Buffer b = layout_.buffer_at(off);
  return "rank " + std::to_string(rank) + "'s " + b.name + " at byte " + std::to_string(off - b.base);
}

std::string Simulator::who(int tid) const {
  if (tid < world_) return "the host of rank " + std::to_string(tid);
  const int t = tid - world_;
  return "rank " + std::to_string(t / blocks_) + " block " + std::to_string(t % blocks_);
}

uint32_t Simulator::access_epoch(Block& b) {
  if (b.tick_before_store) {
    ++b.clock[b.tid];
    b.tick_before_store = false;
    b.release_snap.reset();
  }
  return b.clock[b.tid];
}

std::string Simulator::range(int rank, uint64_t lo, uint64_t hi) const {
  const auto [buf, base] = layout_.buffer_at(lo);
  std::string s = "[";  // appended piecewise: GCC 12 warns (-Wrestrict) on one long "+" chain here
  s += std::to_string(lo - base);
  s += ',';
  s += std::to_string(hi - base);
  s += ") of rank ";
  s += std::to_string(rank);
  s += "'s ";
  s += buf;
  return s;
}

void Simulator::check_read(int tid, const VClock& clock, const Block* blk, int rank, uint64_t off,
                           std::size_t bytes) {
  const auto& m = heaps_[rank].writes;
  const uint64_t e = off + bytes;
  auto it = m.upper_bound(off);
  if (it != m.begin()) --it;
  for (; it != m.end() && it->first < e; ++it) {
    const WriteSeg& s = it->second;
    if (s.end <= off || s.tid == tid || clock[s.tid] >= s.epoch) continue;
    const uint64_t lo = std::max(off, it->first), hi = std::min(e, s.end);
    if (!blk)  // the host at the end of its call: a store into its `out` not ordered before it
      fail(ErrorCode::kRace, "race: the host of rank " + std::to_string(rank) + " reads " + range(rank, lo, hi) +
                                 " at the end of its call, written by " + who(s.tid) +
                                 " without a release/acquire chain (the store is not ordered before "
                                 "the end of the call: missing end barrier?)");
    if (s.call_end)
      fail(ErrorCode::kRace, "race: " + who(tid) + " reads " + range(rank, lo, hi) + " after " + who(s.tid) +
                                 " ended its call, without a release/acquire chain from that end to the "
                                 "read (the caller may have overwritten it)");
    std::string last = "no wait before the read";
    if (blk->last_wait != UINT32_MAX) {
      const uint32_t w = blk->last_wait;
      last = "last wait: slot " + std::to_string(w);
      if (w < pad::kFlagSlots)
        last += " = channel " + std::to_string(w / (kPadWorld * kPadBlocks)) + ", block " +
                std::to_string((w / kPadWorld) % kPadBlocks) + ", from rank " + std::to_string(w % kPadWorld);
    }
    fail(ErrorCode::kRace, "race: " + who(tid) + " reads [" + std::to_string(lo) + "," + std::to_string(hi) +
                               ") of " + where(rank, lo) + " written by " + who(s.tid) +
                               " without a release/acquire chain (" + last + ")");
  }
}

void Simulator::record_read(int tid, const VClock& clock, int rank, uint64_t off, std::size_t bytes) {
  if (bytes == 0) return;
  auto& m = heaps_[rank].reads;
  const uint64_t e = off + bytes;
  const uint32_t epoch = clock[tid];
  split_at(m, off);
  split_at(m, e);
  uint64_t pos = off;
  auto it = m.lower_bound(off);
  while (pos < e) {
    if (it == m.end() || it->first > pos) {  // a gap: nothing read there since the last store
      const uint64_t gap_end = it == m.end() ? e : std::min(e, it->first);
      it = m.emplace_hint(it, pos, ReadSeg{gap_end, {Access{tid, epoch}}});
      pos = gap_end;
      ++it;
      continue;
    }
    // Reads that happen-before this one are implied by it (this one included, by program order).
    std::vector<Access>& rs = it->second.reads;
    std::size_t keep = 0;
    for (const Access& a : rs)
      if (clock[a.tid] < a.epoch) rs[keep++] = a;
    rs.resize(keep);
    rs.push_back(Access{tid, epoch});
    pos = it->second.end;
    ++it;
  }
}

void Simulator::store(int tid, const VClock& clock, int rank, uint64_t off, std::size_t bytes, bool call_end) {
  if (bytes == 0) return;
  Heap& heap = heaps_[rank];
  const uint64_t e = off + bytes;
  auto writer = [&] { return who(tid) + (call_end ? " ends its call" : " overwrites " + range(rank, off, e)); };
  // Write after write: the last store of these bytes must be ordered before this one.
  {
    auto it = heap.writes.upper_bound(off);
    if (it != heap.writes.begin()) --it;
    for (; it != heap.writes.end() && it->first < e; ++it) {
      const WriteSeg& s = it->second;
      if (s.end <= off || s.tid == tid || clock[s.tid] >= s.epoch) continue;
      const uint64_t lo = std::max(off, it->first), hi = std::min(e, s.end);
      fail(ErrorCode::kRace, "race: " + writer() + " while " + range(rank, lo, hi) + " was last " +
                                 (s.call_end ? "taken back by " + who(s.tid) + " at the end of its call"
                                             : "written by " + who(s.tid)) +
                                 " (no release/acquire chain from that to this write)");
    }
  }
  // Write after read: every read since must be ordered before this store.
  auto& m = heap.reads;
  auto it = m.upper_bound(off);
  if (it != m.begin()) --it;
  for (; it != m.end() && it->first < e; ++it) {
    if (it->second.end <= off) continue;
    for (const Access& a : it->second.reads) {
      if (a.tid == tid || clock[a.tid] >= a.epoch) continue;
      const uint64_t lo = std::max(off, it->first), hi = std::min(e, it->second.end);
      fail(ErrorCode::kRace,
           "race: " + (call_end ? who(tid) + " ends its call while " + who(a.tid) + " may still be reading " +
                                      range(rank, lo, hi) +
                                      " (no release/acquire chain from the read to the end of the call, "
                                      "after which the caller may overwrite it: missing end barrier?)"
                                : who(tid) + " overwrites " + range(rank, lo, hi) + " while " + who(a.tid) +
                                      " may still be reading it (no release/acquire chain from the read to "
                                      "this write)"));
    }
  }
  // The store supersedes them: later stores are checked against it (and it against them).
  split_at(m, off);
  split_at(m, e);
  m.erase(m.lower_bound(off), m.lower_bound(e));
  assign_range(heap.writes, off, e, WriteSeg{0, tid, clock[tid], call_end});
}

// ---- transfers -----------------------------------------------------------------------------

Transfer& Simulator::new_transfer(Block& b, const char* name, uint32_t& index) {
  if (free_xfers_.empty()) {
    free_xfers_.push_back(uint32_t(xfers_.size()));
    xfers_.emplace_back();
  }
  index = free_xfers_.back();
  free_xfers_.pop_back();
  Transfer& x = xfers_[index];
  x.owner = &b;
  x.name = name;
  x.issued = q_.now();
  x.remote_load = x.posted = x.ll = false;
  return x;
}

void Simulator::add_use(uint32_t res, float w) {
  if (w == 0) return;
  if (use_w_[res] == 0) uses_.push_back(Use{res, 0});
  use_w_[res] += w;
}

void Simulator::start_flow(Block& b, uint32_t index, BytesPerPs cap, double size) {
  for (Use& u : uses_) u.weight = use_w_[u.res], use_w_[u.res] = 0;
  net_.start(q_.now(), uses_, cap, size, index);
  uses_.clear();
  mark_dirty();
  if (xfers_[index].posted) ++b.inflight;
  b.state = BlockState::kTransfer;
  yield(b);
}

void Simulator::mark_dirty() {
  if (net_dirty_) return;
  net_dirty_ = true;
  q_.push(q_.now(), kNetwork, 0, ++net_gen_, /*late=*/true);
}

void Simulator::on_network(uint64_t gen) {
  if (gen != net_gen_) return;  // superseded by a later re-solve
  net_dirty_ = false;
  done_.clear();
  const TimePs next = net_.resolve(q_.now(), done_);
  for (uint64_t token : done_) complete(uint32_t(token));
  if (next >= 0) q_.push(next, kNetwork, 0, ++net_gen_, /*late=*/true);
  if (trace_) {
    const std::vector<double>& load = net_.load();
    for (int g = 0; g < world_; ++g) {
      const double eg = load[res_egress(g)] * 1e3, in = load[res_ingress(g)] * 1e3;  // bytes/ps -> GB/s
      if (eg == last_load_[2 * g] && in == last_load_[2 * g + 1]) continue;
      last_load_[2 * g] = eg, last_load_[2 * g + 1] = in;
      trace_->counter(g, "nvlink GB/s", q_.now(), eg, in);
    }
  }
}

void Simulator::complete(uint32_t index) {
  Transfer& x = xfers_[index];
  const TimePs resume_at = q_.now() + (x.remote_load ? rtt_ps_ : 0);
  if (trace_)
    trace_->slice(x.owner->rank, x.owner->index, x.name, x.issued, resume_at,
                  "\"bytes\":" + std::to_string(x.bytes));
  x.done_at = resume_at;
  if (x.posted) {
    q_.push(resume_at, kResumeBlock, uint32_t(x.owner->rank * blocks_ + x.owner->index), 0);
    q_.push(resume_at + store_ps_, kTransferLand, 0, index);
  } else {
    q_.push(resume_at, kTransferLand, 0, index);
  }
}

void Simulator::land(uint32_t index) {
  Transfer& x = xfers_[index];
  if (data_) {
    keep_outputs_under(x.dst_space, x.dst_off, x.bytes);
    if (x.dst_space == kMcSpace) {
      for (int r = 0; r < world_; ++r) std::memcpy(ptr(r, x.dst_off), x.data.data(), x.bytes);
    } else {
      std::memcpy(ptr(x.dst_space, x.dst_off), x.data.data(), x.bytes);
    }
  }
  if (x.ll) ll_landed(x);
  Block& b = *x.owner;
  free_xfers_.push_back(index);
  if (!x.posted) {
    resume(b);
  } else if (--b.inflight == 0 && b.state == BlockState::kStores) {
    resume(b);
  }
}

// ---- verbs ---------------------------------------------------------------------------------

uintptr_t Simulator::peer_addr(Block& b, uintptr_t p, int r) {
  const Loc l = decode(b, p, 0, "peer()");
  if (l.space >= world_ || r < 0 || r >= world_)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(b.rank) + " block " + std::to_string(b.index) +
                                          ": peer(p, " + std::to_string(r) +
                                          ") needs a rank's symmetric address and 0 <= r < world");
  return addr(r, l.off);
}

void Simulator::add_transfer_uses(const Transfer& x, int me, int src, int dst, float load_w, float store_w) {
  if (x.remote_load) {
    add_use(res_egress(src), load_w);
    add_use(res_ingress(me), load_w);
  }
  if (x.posted) {
    add_use(res_egress(me), store_w);
    add_use(res_ingress(dst), store_w);
  }
  // HBM is rated for copies (read + write): a local read or a local write alone is half.
  add_use(res_hbm(me), (x.remote_load ? 0 : load_w / 2) + (x.posted ? 0 : store_w / 2));
}

void Simulator::copy(Block& b, uintptr_t dst, uintptr_t src, std::size_t bytes) {
  if (bytes == 0) return;
  const Loc s = decode(b, src, bytes, "copy"), d = decode(b, dst, bytes, "copy");
  if (s.space == kMcSpace || d.space == kMcSpace)
    fail(ErrorCode::kInvalidArgument, "copy() cannot use a multicast address (use multimem_reduce)");
  const int me = b.rank;
  uint32_t index;
  Transfer& x = new_transfer(b, "copy", index);
  x.remote_load = s.space != me;
  x.posted = d.space != me;
  x.dst_space = d.space;
  x.dst_off = d.off;
  x.bytes = bytes;
  if (data_) {
    if (race_) {
      access_epoch(b);
      check_read(b, s.space, s.off, bytes);
      record_read(b.tid, b.clock, s.space, s.off, bytes);
      store(b, d.space, d.off, bytes);
    }
    x.data.assign(ptr(s.space, s.off), ptr(s.space, s.off) + bytes);
  }
  add_transfer_uses(x, me, s.space, d.space, 1, 1);
  if (use_w_[res_hbm(me)] == 0)
    uses_.erase(
        std::remove_if(uses_.begin(), uses_.end(), [&](const Use& u) { return u.res == res_hbm(me); }),
        uses_.end());
  start_flow(b, index, block_bpp_, double(bytes));
}

namespace {
template <class T>
void reduce_data(std::vector<float>& acc, std::vector<uint8_t>& out, const T* const* src, int n,
                 std::size_t count, ReduceOp op) {
  acc.resize(count);
  for (std::size_t i = 0; i < count; ++i) acc[i] = Conv<T>::load(src[0][i]);
  for (int k = 1; k < n; ++k) {
    const T* s = src[k];
    if (op == ReduceOp::kSum)
      for (std::size_t i = 0; i < count; ++i) acc[i] += Conv<T>::load(s[i]);
    else
      for (std::size_t i = 0; i < count; ++i) acc[i] = combine(acc[i], Conv<T>::load(s[i]), op);
  }
  out.resize(count * sizeof(T));
  T* o = reinterpret_cast<T*>(out.data());
  for (std::size_t i = 0; i < count; ++i) o[i] = Conv<T>::store(acc[i]);
}
}  // namespace

void Simulator::reduce(Block& b, DType t, uintptr_t dst, const void* const* srcs, int n, std::size_t count,
                       ReduceOp op) {
  const std::size_t bytes = count * dtype_size(t);
  if (bytes == 0) return;
  if (n < 1 || n > kPadWorld)
    fail(ErrorCode::kInvalidArgument, "reduce() needs 1.." + std::to_string(kPadWorld) + " sources");
  const int me = b.rank;
  const Loc d = decode(b, dst, bytes, "reduce");
  uint32_t index;
  Transfer& x = new_transfer(b, "reduce", index);
  x.posted = d.space != me;
  x.dst_space = d.space;
  x.dst_off = d.off;
  x.bytes = bytes;
  const void* host_src[kPadWorld];
  if (race_) access_epoch(b);
  for (int k = 0; k < n; ++k) {
    const Loc s = decode(b, reinterpret_cast<uintptr_t>(srcs[k]), bytes, "reduce");
    if (s.space == kMcSpace) fail(ErrorCode::kInvalidArgument, "reduce() cannot load a multicast address");
    if (s.space != me) {
      x.remote_load = true;
      add_use(res_egress(s.space), 1);
      add_use(res_ingress(me), 1);
    } else {
      add_use(res_hbm(me), 0.5);
    }
    if (data_) {
      if (race_) {
        check_read(b, s.space, s.off, bytes);
        record_read(b.tid, b.clock, s.space, s.off, bytes);
      }
      host_src[k] = ptr(s.space, s.off);
    }
  }
  if (x.posted) {
    add_use(res_egress(me), 1);
    add_use(res_ingress(d.space), 1);
  } else {
    add_use(res_hbm(me), 0.5);
  }
  if (data_) {
    with_type(t, [&]<class T>() {
      reduce_data<T>(acc_, x.data, reinterpret_cast<const T* const*>(host_src), n, count, op);
    });
    if (race_) store(b, d.space, d.off, bytes);
  }
  // The per-block cap is on everything the block loads: n sources per unit of progress.
  start_flow(b, index, block_bpp_ / n, double(bytes));
}

void Simulator::multimem(Block& b, DType t, uintptr_t mc, std::size_t count, ReduceOp op) {
  const std::size_t bytes = count * dtype_size(t);
  if (bytes == 0) return;
  const Loc l = decode(b, mc, bytes, "multimem_reduce");
  if (l.space != kMcSpace)
    fail(ErrorCode::kInvalidArgument, "multimem_reduce() needs a multicast address (CollArgs::out_mc)");
  const int me = b.rank;
  uint32_t index;
  Transfer& x = new_transfer(b, "multimem_reduce", index);
  x.remote_load = x.posted = true;
  x.dst_space = kMcSpace;
  x.dst_off = l.off;
  x.bytes = bytes;
  // The switch pulls the range from every rank and pushes the result to every rank.
  add_use(res_nvls(me), 1);
  for (int r = 0; r < world_; ++r) {
    add_use(res_egress(r), 1);
    add_use(res_ingress(r), 1);
  }
  if (data_) {
    const void* host_src[kPadWorld];
    if (race_) access_epoch(b);
    for (int r = 0; r < world_; ++r) {
      if (race_) {
        check_read(b, r, l.off, bytes);
        record_read(b.tid, b.clock, r, l.off, bytes);
      }
      host_src[r] = ptr(r, l.off);
    }
    with_type(t, [&]<class T>() {
      reduce_data<T>(acc_, x.data, reinterpret_cast<const T* const*>(host_src), world_, count, op);
    });
    if (race_)
      for (int r = 0; r < world_; ++r) store(b, r, l.off, bytes);
  }
  start_flow(b, index, block_bpp_, double(bytes));
}

void Simulator::signal(Block& b, int peer, uint32_t slot, uint32_t value, MemOrder order) {
  if (peer < 0 || peer >= world_ || slot >= pad::kFlagSlots)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(b.rank) + " block " + std::to_string(b.index) +
                                          ": signal(peer=" + std::to_string(peer) + ", slot=" +
                                          std::to_string(slot) + ") is outside the world or the pad's flags");
  const TimePs t0 = q_.now();
  const bool release = order == MemOrder::kRelease;
  if (release && b.inflight) {
    b.state = BlockState::kStores;
    yield(b);
  }
  Snapshot snap;
  if (race_ && release) {
    if (!b.release_snap) b.release_snap = std::make_shared<const VClock>(b.clock);
    snap = b.release_snap;
    b.tick_before_store = true;
  }
  if (free_lands_.empty()) {
    free_lands_.push_back(uint32_t(lands_.size()));
    lands_.emplace_back();
  }
  const uint32_t li = free_lands_.back();
  free_lands_.pop_back();
  const uint64_t id = ++signal_ids_;
  lands_[li] = FlagLand{peer, slot, value, std::move(snap), id};
  q_.push(q_.now() + (peer == b.rank ? 0 : flag_ps_), kFlagLand, 0, li);
  if (trace_) {
    trace_->slice(b.rank, b.index, release ? "signal.release" : "signal", t0, q_.now(),
                  "\"peer\":" + std::to_string(peer) + ",\"slot\":" + std::to_string(slot) +
                      ",\"value\":" + std::to_string(value));
    trace_->flow_begin(b.rank, b.index, id, q_.now());
  }
}

void Simulator::on_flag(uint32_t index) {
  FlagLand& l = lands_[index];
  const uint64_t key = uint64_t(l.rank) * pad::kPadSlots + l.slot;
  flags_[key] = l.value;
  if (race_) flag_snap_[key] = std::move(l.snap);
  if (trace_) flag_signal_[key] = l.signal_id;
  l.snap.reset();
  free_lands_.push_back(index);
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  // Wake every waiter the new value satisfies; keep the rest in order.
  Block** link = &it->second;
  while (*link) {
    Block* w = *link;
    if (flags_[key] >= w->wait_value) {
      *link = w->next_waiter;
      w->next_waiter = nullptr;
      q_.push(q_.now(), kResumeBlock, uint32_t(w->rank * blocks_ + w->index), 0);
    } else {
      link = &w->next_waiter;
    }
  }
  if (!it->second) waiters_.erase(it);
}

void Simulator::wait(Block& b, uint32_t slot, uint32_t value, MemOrder order) {
  if (slot >= pad::kPadSlots)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(b.rank) + " block " + std::to_string(b.index) +
                                          ": wait(slot=" + std::to_string(slot) +
                                          ") is outside the signal pad");
  const uint64_t key = uint64_t(b.rank) * pad::kPadSlots + slot;
  const TimePs t0 = q_.now();
  if (flags_[key] < value) {
    b.wait_slot = slot;
    b.wait_value = value;
    Block*& head = waiters_[key];
    Block** tail = &head;
    while (*tail) tail = &(*tail)->next_waiter;
    *tail = &b;
    b.state = BlockState::kFlag;
    yield(b);
  }
  b.last_wait = slot;
  if (race_ && order == MemOrder::kAcquire) {  // a relaxed wait joins nothing
    auto it = flag_snap_.find(key);
    if (it != flag_snap_.end() && it->second && join(b.clock, *it->second)) b.release_snap.reset();
  }
  if (trace_) {
    trace_->slice(b.rank, b.index, order == MemOrder::kRelaxed ? "wait" : "wait.acquire", t0, q_.now(),
                  "\"slot\":" + std::to_string(slot) + ",\"value\":" + std::to_string(value));
    auto it = flag_signal_.find(key);
    if (it != flag_signal_.end()) trace_->flow_end(b.rank, b.index, it->second, q_.now());
  }
}

uint32_t Simulator::advance(Block& b, uint32_t slot) {
  if (slot >= pad::kPadSlots)
    fail(ErrorCode::kInvalidArgument, "advance(slot=" + std::to_string(slot) + ") is outside the signal pad");
  return ++flags_[uint64_t(b.rank) * pad::kPadSlots + slot];
}

// ---- flagged packets (LL) -------------------------------------------------------------------

void Simulator::put_ll(Block& b, uintptr_t dst, uintptr_t src, std::size_t bytes, uint32_t epoch) {
  if (bytes == 0) return;
  const std::size_t pb = ll_bytes(bytes);
  const Loc s = decode(b, src, bytes, "put_ll"), d = decode(b, dst, pb, "put_ll");
  if (s.space == kMcSpace || d.space == kMcSpace)
    fail(ErrorCode::kInvalidArgument, "put_ll() cannot use a multicast address");
  const int me = b.rank;
  uint32_t index;
  Transfer& x = new_transfer(b, "put_ll", index);
  x.remote_load = s.space != me;
  x.posted = d.space != me;
  x.ll = true;
  x.ll_epoch = epoch;
  x.dst_space = d.space;
  x.dst_off = d.off;
  x.bytes = pb;
  if (data_) {
    if (race_) {
      access_epoch(b);
      check_read(b, s.space, s.off, bytes);
      record_read(b.tid, b.clock, s.space, s.off, bytes);
    }
    x.data.resize(pb);
    const uint8_t* from = ptr(s.space, s.off);
    uint8_t* to = x.data.data();
    for (std::size_t i = 0; i < bytes / 4; ++i) {  // packet i = {data word i, epoch}
      std::memcpy(to + 8 * i, from + 4 * i, 4);
      std::memcpy(to + 8 * i + 4, &epoch, 4);
    }
    // Ordinary stores for the race check (only reduce_ll's reads of packets are exempt), which
    // carry the block's launch clock to the reduce_ll that accepts them (see the top of the file).
    if (race_) {
      store(b, d.space, d.off, pb);
      assign_range(heaps_[d.space].ll_src, d.off, d.off + pb, LlSrcSeg{0, b.launch_snap});
    }
  }
  // One unit of progress = one packet byte: half a byte of source data.
  add_transfer_uses(x, me, s.space, d.space, 0.5, 1);
  start_flow(b, index, block_bpp_, double(pb));
}

void Simulator::ll_landed(const Transfer& x) {
  const int r = x.dst_space;
  const uint64_t lo = x.dst_off, hi = x.dst_off + x.bytes;
  if (!data_) assign_range(ll_landed_[r], lo, hi, LlSeg{0, x.ll_epoch});
  // Wake the blocks of rank r whose pending packets this landing touches; they re-check.
  std::vector<Block*>& ws = ll_waiters_[r];
  std::size_t keep = 0;
  for (Block* w : ws) {
    if (w->ll_lo < hi && lo < w->ll_hi) {
      w->ll_from_rank = x.owner->rank;
      w->ll_from_block = x.owner->index;
      w->ll_from_t = x.done_at;
      q_.push(q_.now(), kResumeBlock, uint32_t(w->rank * blocks_ + w->index), 0);
    } else {
      ws[keep++] = w;
    }
  }
  ws.resize(keep);
}

uint64_t Simulator::scan_ll(int rank, uint64_t pos, uint64_t end, uint32_t epoch) const {
  if (data_) {
    const uint8_t* h = heaps_[rank].bytes.data();
    for (; pos < end; pos += 8) {
      uint32_t e;
      std::memcpy(&e, h + pos + 4, 4);
      if (e != epoch) break;  // only this epoch: an older (stale) or newer packet is not accepted
    }
    return pos;
  }
  const auto& m = ll_landed_[rank];
  auto it = m.upper_bound(pos);
  if (it != m.begin()) --it;
  for (; pos < end && it != m.end() && it->first <= pos; ++it) {
    if (it->second.end <= pos) continue;
    if (it->second.epoch != epoch) break;
    pos = std::min(end, it->second.end);
  }
  return pos;
}

std::string Simulator::ll_seen(int rank, uint64_t off) const {
  if (data_) {
    uint32_t e;
    std::memcpy(&e, heaps_[rank].bytes.data() + off + 4, 4);
    return e == 0xFFFFFFFFu ? "was never written" : "holds epoch " + std::to_string(e);
  }
  const auto& m = ll_landed_[rank];
  auto it = m.upper_bound(off);
  if (it != m.begin() && (--it)->second.end > off) return "holds epoch " + std::to_string(it->second.epoch);
  return "was never written";
}

void Simulator::reduce_ll(Block& b, DType t, uintptr_t dst, const void* const* srcs, int n, std::size_t count,
                          uint32_t epoch, ReduceOp op) {
  const std::size_t bytes = count * dtype_size(t);
  if (bytes == 0) return;
  if (n < 1 || n > kPadWorld)
    fail(ErrorCode::kInvalidArgument, "reduce_ll() needs 1.." + std::to_string(kPadWorld) + " sources");
  const int me = b.rank;
  const std::size_t pb = ll_bytes(bytes);
  const Loc d = decode(b, dst, bytes, "reduce_ll");
  if (d.space == kMcSpace)
    fail(ErrorCode::kInvalidArgument, "reduce_ll() cannot store to a multicast address");
  uint64_t off[kPadWorld];
  for (int k = 0; k < n; ++k) {
    const Loc s = decode(b, reinterpret_cast<uintptr_t>(srcs[k]), pb, "reduce_ll");
    if (s.space != me)
      fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(me) + " block " + std::to_string(b.index) +
                                            ": reduce_ll() reads local packet buffers only (source " +
                                            std::to_string(k) + " is on rank " + std::to_string(s.space) +
                                            ")");
    off[k] = s.off;
  }
  const TimePs t0 = q_.now();
  b.ll_from_rank = -1;
  // Spin: walk the sources' packets in order, waiting at the first one not yet valid; a wake-up
  // re-checks from where the walk stopped. With data, the data words are then read in one pass
  // that checks every epoch again: a packet overwritten meanwhile sends the block back to waiting.
  int k = 0;
  uint64_t pos = off[0];
  for (;;) {
    while (k < n) {
      pos = scan_ll(me, pos, off[k] + pb, epoch);
      if (pos < off[k] + pb) break;
      if (++k < n) pos = off[k];
    }
    if (k == n && data_) {
      ll_unpacked_.resize(std::size_t(n) * bytes);
      const uint8_t* h = ptr(me, 0);
      for (int s = 0; s < n && k == n; ++s) {
        uint8_t* o = ll_unpacked_.data() + std::size_t(s) * bytes;
        for (uint64_t p = off[s]; p < off[s] + pb; p += 8) {
          uint32_t e;
          std::memcpy(&e, h + p + 4, 4);
          if (e != epoch) {
            k = s, pos = p;
            break;
          }
          std::memcpy(o + (p - off[s]) / 2, h + p, 4);
        }
      }
    }
    if (k == n) break;
    b.ll_buf = off[k];
    b.ll_lo = pos;
    b.ll_hi = off[k] + pb;
    b.ll_epoch = epoch;
    ll_waiters_[me].push_back(&b);
    b.state = BlockState::kPackets;
    yield(b);
  }
  if (race_) {
    // The packets were read (a later store over them must be ordered after this); the launch
    // clocks of the blocks that put them reach this rank's host when this kernel ends.
    access_epoch(b);
    for (int k = 0; k < n; ++k) {
      record_read(b.tid, b.clock, me, off[k], pb);
      const auto& m = heaps_[me].ll_src;
      auto it = m.upper_bound(off[k]);
      if (it != m.begin()) --it;
      for (; it != m.end() && it->first < off[k] + pb; ++it) {
        if (it->second.end <= off[k] || !it->second.launch) continue;
        if (std::find(b.ll_acq.begin(), b.ll_acq.end(), it->second.launch) == b.ll_acq.end())
          b.ll_acq.push_back(it->second.launch);
      }
    }
  }
  if (trace_ && b.ll_from_rank >= 0) {
    const uint64_t id = ++signal_ids_;
    trace_->flow_begin(b.ll_from_rank, b.ll_from_block, id, b.ll_from_t);
    trace_->flow_end(me, b.index, id, q_.now());
  }
  uint32_t index;
  Transfer& x = new_transfer(b, "reduce_ll", index);
  x.issued = t0;  // the slice shows the spin too
  x.posted = d.space != me;
  x.dst_space = d.space;
  x.dst_off = d.off;
  x.bytes = bytes;
  if (data_) {
    if (n == 1) {
      x.data.assign(ll_unpacked_.begin(), ll_unpacked_.begin() + std::ptrdiff_t(bytes));
    } else {
      const void* host_src[kPadWorld];
      for (int s = 0; s < n; ++s) host_src[s] = ll_unpacked_.data() + std::size_t(s) * bytes;
      with_type(t, [&]<class T>() {
        reduce_data<T>(acc_, x.data, reinterpret_cast<const T* const*>(host_src), n, count, op);
      });
    }
    if (race_) store(b, d.space, d.off, bytes);
  }
  // A local read of the n packet buffers (2 bytes each per byte of result, half weight on HBM),
  // then the result's store; no per-block cap on local packet reads.
  add_use(res_hbm(me), float(n) + float(x.posted ? 0 : 0.5));
  if (x.posted) {
    add_use(res_egress(me), 1);
    add_use(res_ingress(d.space), 1);
  }
  start_flow(b, index, std::numeric_limits<double>::infinity(), double(bytes));
}

// ---- BlockCtx: the verbs programs see -------------------------------------------------------

int BlockCtx::rank() const { return blk_->rank; }
int BlockCtx::world() const { return sim_->world(); }
int BlockCtx::block() const { return blk_->index; }
int BlockCtx::blocks() const { return sim_->blocks(*blk_); }
uintptr_t BlockCtx::peer_addr(uintptr_t p, int r) const { return sim_->peer_addr(*blk_, p, r); }
void BlockCtx::copy(void* dst, const void* src, std::size_t bytes) {
  sim_->copy(*blk_, reinterpret_cast<uintptr_t>(dst), reinterpret_cast<uintptr_t>(src), bytes);
}
void BlockCtx::reduce_impl(DType t, void* dst, const void* const* srcs, int nsrc, std::size_t count, ReduceOp op) {
  sim_->reduce(*blk_, t, reinterpret_cast<uintptr_t>(dst), srcs, nsrc, count, op);
}
void BlockCtx::multimem_impl(DType t, void* mc, std::size_t count, ReduceOp op) {
  sim_->multimem(*blk_, t, reinterpret_cast<uintptr_t>(mc), count, op);
}
void BlockCtx::signal(int peer, uint32_t slot, uint32_t value, MemOrder order) {
  if (!is_signal_order(order)) bad_order("signal", order, "kRelaxed or kRelease");
  sim_->signal(*blk_, peer, slot, value, order);
}
void BlockCtx::wait(uint32_t slot, uint32_t value, MemOrder order) {
  if (!is_wait_order(order)) bad_order("wait", order, "kRelaxed or kAcquire");
  sim_->wait(*blk_, slot, value, order);
}
void BlockCtx::bad_order(const char* verb, MemOrder order, const char* allowed) const {
  fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank()) + " block " + std::to_string(block()) + ": " +
                                        verb + " with memory order " + order_name(order) + " (" +
                                        std::to_string(int(order)) + "): the verb contract allows " + allowed);
}
uint32_t BlockCtx::advance(uint32_t slot) { return sim_->advance(*blk_, slot); }
// The transfers are issued one after another, as the block's posted stores would be; each
// reads its source when issued (a block has all its loads in flight at once on the GPU, which
// the issue time at the block's rate already stands for).
void BlockCtx::put_ll(void* const* dsts, const void* const* srcs, int n, std::size_t bytes, uint32_t epoch) {
  for (int i = 0; i < n; ++i)
    sim_->put_ll(*blk_, reinterpret_cast<uintptr_t>(dsts[i]), reinterpret_cast<uintptr_t>(srcs[i]), bytes, epoch);
}
void BlockCtx::reduce_ll_impl(DType t, void* dst, const void* const* srcs, int nsrc, std::size_t count,
                         uint32_t epoch, ReduceOp op) {
  sim_->reduce_ll(*blk_, t, reinterpret_cast<uintptr_t>(dst), srcs, nsrc, count, epoch, op);
}

// ---- entry points --------------------------------------------------------------------------

namespace detail {
RunResult run_with(const RunSpec& spec, ProgramFn fn, const std::vector<int>& blocks_per_call) {
  const Machine& m = spec.machine;
  SYMM_REQUIRE(spec.algo, ErrorCode::kInvalidArgument, "no algorithm given");
  SYMM_REQUIRE(m.gpus > 0, ErrorCode::kInvalidArgument, "no machine loaded (Machine::by_name)");
  SYMM_REQUIRE(spec.calls >= 1, ErrorCode::kInvalidArgument,
               "calls=" + std::to_string(spec.calls) + " must be >= 1");
  std::vector<int> call_blocks = blocks_per_call;
  if (call_blocks.empty()) {
    const int blocks = spec.blocks > 0   ? spec.blocks
                       : spec.blocks < 0 ? spec.blocks
                                         : spec.algo->default_blocks(spec.bytes, spec.world);
    call_blocks.assign(std::size_t(spec.calls), blocks);
  }
  for (int blocks : call_blocks) {
    check_args(*spec.algo, spec.dtype, spec.bytes, spec.world, blocks, spec.op);
    if (blocks > m.sms)
      fail(ErrorCode::kUnsupported, "blocks=" + std::to_string(blocks) + " exceeds machine " + m.name +
                                        "'s " + std::to_string(m.sms) +
                                        " SMs (a program's blocks must all be resident)");
  }
  if (spec.world > m.gpus && !spec.timing_only)
    fail(ErrorCode::kUnsupported, "world=" + std::to_string(spec.world) + " exceeds machine " + m.name +
                                      "'s " + std::to_string(m.gpus) +
                                      " GPUs (use --timing-only to scale past it)");
  const auto wall0 = std::chrono::steady_clock::now();
  RunResult res;
  {
    Simulator sim(spec, fn, std::move(call_blocks));
    res = sim.run();
  }  // set-up and tear-down count too
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return res;
}
}  // namespace detail

RunResult run(const RunSpec& spec) {
  SYMM_REQUIRE(spec.algo, ErrorCode::kInvalidArgument, "no algorithm given");
  return with_program(*spec.algo, [&]<class P>() { return run_program<P>(spec); });
}

}  // namespace symm::sim
