// Host plans: the GEMM item (gemm), its timing and its data. One flow on my HBM of the bytes of
// A, B and C, capped so that alone it takes Machine::gemm_time_us (a fixed cost + whole waves of
// output tiles at the machine file's matmul rate + the operands' bytes at a streaming rate,
// fitted to a cuBLASLt sweep), after launch latency; C may be a peer's (its tiles stored over
// NVLink: C's share of the flow also uses my egress and the peer's ingress, and the GEMM takes
// C's bytes at the egress rate longer: the epilogue's remote stores do not overlap the mainloop;
// 2x and 4x H200 / H100, mm_rs.gemm_st_chunk_reduce: 13-37 % above the overlapped model's time at
// every shape, within 8 % with this one at 3 of 4 shapes); with data,
// C = A x B in fp32 (Eigen), stored as the element type when it ends.
// SMs (measured on one H200, experiments/results/h200x1/calibrate_h200x1.csv, conc_* rows: a copy
// kernel launched beside a running cuBLASLt GEMM ends after the GEMM, which is not slowed; a copy
// kernel launched first keeps its speed and the GEMM after it takes 7-13% longer): a kernel
// launched while a GEMM of the rank runs starts when the GEMM ends (on a team machine: when every
// GEMM that was running on its GPU, any rank's, has ended; and so does a copy between two ranks
// of one GPU, a device-to-device memcpy the driver runs as a kernel); a GEMM runs in kGemmSlices
// equal slices, each at the rate of the SMs no kernel of the rank holds when it starts (sms - B
// of sms; on a team machine the SMs the blocks of every rank on the GPU hold), and GEMMs of ranks
// sharing a GPU split its tensor rate (res_tensor). (The data also show the copy running 2.6-4x
// its own time after the GEMM ends; not modelled.)
#include <Eigen/Core>
#include <algorithm>

#include "backends/sim/conv.h"
#include "backends/sim/simulator.h"
#include "core/dispatch.h"

namespace symm::sim {

namespace {
template <class T>
void gemm_data(const uint8_t* a, const uint8_t* b, const uint8_t* c_in, uint8_t* c, const GemmArgs& g) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Mat A(g.m, g.k), B(g.k, g.n);
  const T* pa = reinterpret_cast<const T*>(a);
  const T* pb = reinterpret_cast<const T*>(b);
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.k; ++j) A(i, j) = Conv<T>::load(pa[std::size_t(i) * g.lda + std::size_t(j)]);
  for (int i = 0; i < g.k; ++i)
    for (int j = 0; j < g.n; ++j) B(i, j) = Conv<T>::load(pb[std::size_t(i) * g.ldb + std::size_t(j)]);
  Mat C = A * B;
  if (c_in) {
    const T* pi = reinterpret_cast<const T*>(c_in);
    for (int i = 0; i < g.m; ++i)
      for (int j = 0; j < g.n; ++j) C(i, j) += Conv<T>::load(pi[std::size_t(i) * g.ldc + std::size_t(j)]);
  }
  T* pc = reinterpret_cast<T*>(c);
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) pc[std::size_t(i) * g.n + std::size_t(j)] = Conv<T>::store(C(i, j));
}
}  // namespace

void Simulator::start_gemm(Stream& s) {
  const GemmArgs& g = s.items.front().gemm;
  const int me = s.rank;
  const std::size_t es = dtype_size(g.dtype);
  const std::size_t a_bytes = ((std::size_t(g.m) - 1) * g.lda + std::size_t(g.k)) * es;
  const std::size_t b_bytes = ((std::size_t(g.k) - 1) * g.ldb + std::size_t(g.n)) * es;
  const std::size_t c_bytes = std::size_t(g.m) * std::size_t(g.n) * es;
  const Loc la = decode_host(me, s.index, reinterpret_cast<uintptr_t>(g.a), 0, "gemm A");
  const Loc lb = decode_host(me, s.index, reinterpret_cast<uintptr_t>(g.b), 0, "gemm B");
  const Loc lc = decode_host(me, s.index, reinterpret_cast<uintptr_t>(g.c), 0, "gemm C");
  const Loc li = g.c_in ? decode_host(me, s.index, reinterpret_cast<uintptr_t>(g.c_in), 0, "gemm C_in") : la;
  for (const Loc* l : {&la, &lb, &li})
    if (l->space != me)
      fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(me) + ": gemm A, B and C_in must be local memory");
  if (g.c_in && li.off + c_bytes > heap_bytes_)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(me) + ": gemm C_in outside the symmetric heap");
  if (lc.space < 0 || lc.space >= world_)  // C may be a peer's: the epilogue stores over NVLink
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(me) + ": gemm C must be a rank's memory");
  if (la.off + a_bytes > heap_bytes_ || lb.off + b_bytes > heap_bytes_ || lc.off + c_bytes > heap_bytes_)
    fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(me) + ": gemm operands outside the symmetric heap");
  uint32_t index;
  Transfer& x = new_stream_transfer(s, TransferKind::kGemm, "gemm", index);
  x.dst_space = lc.space;
  x.dst_off = lc.off;
  x.bytes = a_bytes + b_bytes + c_bytes * (g.c_in ? 2 : 1);  // HBM traffic of one pass over the operands
  // A C on a peer: the epilogue's stores cross NVLink after the mainloop, not beside it (the SMs
  // that compute the tiles store them): C's bytes at the GPU's egress rate add to the GEMM's time.
  const double compute_ps = m_.gemm_time_us(g.m, g.n, g.k, double(es)) * 1e6 +
                            (over_link(me, lc.space) ? double(c_bytes) / gbps_to_bpp(m_.nvlink_egress_GBps) : 0.0);
  x.gemm_slices_left = kGemmSlices;
  ++gemms_[std::size_t(me)];
  if (m_.team) {  // numbered on its GPU: the kernels and copies that come up while it runs wait for it
    const std::size_t gi = std::size_t(gpu(me));
    x.gemm_seq = ++gpu_gemm_seq_[gi];
    gpu_gemms_[gi].insert(x.gemm_seq);
  }
  x.gemm_cap = BytesPerPs(double(x.bytes) / std::max(compute_ps, 1.0));
  x.gemm_c_bytes = c_bytes;
  if (data_) {
    if (race_) {
      stream_epoch(s);
      for (int i = 0; i < g.m; ++i) {
        const uint64_t off = la.off + std::size_t(i) * g.lda * es;
        check_stream_read(s, me, off, std::size_t(g.k) * es);
        record_read(s.tid, s.clock, me, off, std::size_t(g.k) * es);
      }
      for (int i = 0; i < g.k; ++i) {
        const uint64_t off = lb.off + std::size_t(i) * g.ldb * es;
        check_stream_read(s, me, off, std::size_t(g.n) * es);
        record_read(s.tid, s.clock, me, off, std::size_t(g.n) * es);
      }
      if (g.c_in) {
        check_stream_read(s, me, li.off, c_bytes);
        record_read(s.tid, s.clock, me, li.off, c_bytes);
      }
      store(s.tid, s.clock, lc.space, lc.off, c_bytes);
    }
    x.data.resize(c_bytes);
    with_type(g.dtype, [&]<class T>() {
      gemm_data<T>(ptr(me, la.off), ptr(me, lb.off), g.c_in ? ptr(me, li.off) : nullptr, x.data.data(), g);
    });
  }
  // As a plan kernel (streams.cpp): a GEMM that is its stream's first item starts at the kick (the
  // call's launch), a later one after the device-side gap between stream items.
  q_.push(q_.now() + (s.at_kick ? 0 : plan_kernel_ps_), kStreamFlow, 0, index);
}

// A GEMM's slice starts: HBM traffic, capped at the compute rate on the SMs no kernel holds now.
void Simulator::start_gemm_flow(Transfer& x, uint32_t index) {
  const int me = x.stream_owner->rank;
  // Weight 1/2: each operand byte is one read or one write, and hbm_GBps counts a copy's bytes
  // (a read and a write each), as a local copy's flow does (add_transfer_uses).
  add_use(res_hbm(me), 0.5f);
  // The GPU's tensor rate: at gemm_cap (alone, every SM) a GEMM takes all of it, so the GEMMs of
  // ranks sharing a GPU (a team machine) split it. Only there: a rank's own GEMMs on several
  // streams keep the model they were validated with (each at its own rate).
  if (m_.team) add_use(res_tensor(me), float(1.0 / x.gemm_cap));
  if (over_link(me, x.dst_space)) {  // C's share of the flow crosses NVLink
    const float w = float(double(x.gemm_c_bytes) / double(x.bytes));
    add_use(res_egress(me), w);
    add_use(res_ingress(x.dst_space), w);
  }
  for (Use& u : uses_) u.weight = use_w_[u.res], use_w_[u.res] = 0;
  const int held = std::min(blocks_on_gpu(me), m_.sms - 1);
  const double share = double(m_.sms - held) / double(m_.sms);
  net_.start(q_.now(), uses_, BytesPerPs(x.gemm_cap * share), double(x.bytes) / kGemmSlices, index);
}

int Simulator::blocks_on_gpu(int rank) const {
  int held = 0;
  for (const Host& h : hosts_)
    if (h.live_blocks && gpu(h.rank) == gpu(rank)) held += h.blocks;
  return held;
}

// A team machine: a GEMM started on this rank's GPU (by any rank) is still running.
bool Simulator::gpu_gemm_ahead(int rank) const { return !gpu_gemms_[std::size_t(gpu(rank))].empty(); }

// A team machine: the stream's kernel or copy within the GPU waits for every GEMM running on its
// GPU now (not for those that start later: the block scheduler serves grids in launch order).
void Simulator::wait_gpu_gemms(Stream& s) {
  const std::size_t gi = std::size_t(gpu(s.rank));
  s.waiting = true;
  gpu_sm_waiting_[gi].push_back(GpuWaiter{s.rank * streams_n_ + s.index, gpu_gemm_seq_[gi]});
}

// A GEMM's end frees the SMs first: a kernel that waited for them starts before the stream's
// next item (a next GEMM then gets the SMs the kernel leaves), as the block scheduler serves
// work in the order it was launched. On a team machine the GPU's: a waiter goes on once no GEMM
// that started before it came up runs.
void Simulator::gemm_landed(int rank, uint64_t seq) {
  if (m_.team) {
    const std::size_t gi = std::size_t(gpu(rank));
    --gemms_[std::size_t(rank)];
    gpu_gemms_[gi].erase(seq);
    const uint64_t oldest = gpu_gemms_[gi].empty() ? ~uint64_t(0) : *gpu_gemms_[gi].begin();
    std::deque<GpuWaiter>& w = gpu_sm_waiting_[gi];
    std::vector<int> go;
    for (auto it = w.begin(); it != w.end();)
      if (it->upto < oldest)
        go.push_back(it->stream), it = w.erase(it);
      else
        ++it;
    for (int id : go) {
      Stream& k = stream_at(id / streams_n_, id % streams_n_);
      k.waiting = false;
      k.sm_cleared = true;
      start_item(k);
    }
    return;
  }
  if (--gemms_[std::size_t(rank)] > 0) return;
  std::deque<int>& w = sm_waiting_[std::size_t(rank)];
  while (!w.empty()) {
    Stream& k = stream_at(rank, w.front());
    w.pop_front();
    k.waiting = false;
    start_item(k);
  }
}

}  // namespace symm::sim
