// Matrix tiles: the verb mma_tile (core/verbs.h) on a block, with its timing and, with data, the
// tile itself (fp32 accumulation of T products, one rounding to T), so the fused programs'
// results are checked against float64 like every other output.
//
// Timing. One flow carries the tile's operand bytes S = A (m x k) + B (k x n) + C (m x n) (+ the
// epilogue's n_in input tiles, m x n each, read as A and B are, local ones half an HBM copy) and
// is capped so that alone it takes the tile's compute time: 2 m n k flops at mma_TFLOPs / sms
// (one block holds one SM; the programs launch at most one block per SM) plus the tile's fixed
// cost mma_tile_us (its epilogue and the MMA pipeline's drain), or the time its NVLink bytes need
// at the per-block cap (block_GBps), whichever is longer. Where each byte weighs:
//   - a peer's A or B: on the peer's egress and my ingress (NVLink), and the block pays a load
//     round trip at the end, as copy's remote loads;
//   - local A or B: on nothing. A persistent GEMM's tiles in flight share A's rows and B's
//     columns, so the L2 serves most operand loads; charging every tile's operands to HBM would
//     price a 70B tile wave at ~12 TB/s of HBM reads, far above what a GEMM draws (cuBLASLt's own
//     fitted operand rate, gemm_GBps, is ~10 TB/s). Assumed, not measured: no L2 model here.
//   - C: on my HBM (half: a write) if local, else my egress and the owner's ingress (posted
//     stores: the block goes on when the flow ends and C lands store_latency_us later, so a
//     release after it waits for it, as for copy). A peer's C also holds the block after its
//     compute for C's bytes at mma_peer_store_GBps: the epilogue's stores over NVLink leave the SM
//     slower than local ones and the consumer threads wait for them to issue (measured on 2x H200:
//     ~9 us per 128 x 256 tile stored to the peer, the mm_rs push programs against the pull one).
//   - the epilogue's n_in input tiles also hold the block, for their bytes at mma_in_GBps (the
//     consumer threads load them into the accumulators: measured on 4x H200, sim.h).
// A "peer" on my own GPU (a team machine, Machine::team) is no NVLink: its A or B as a local one,
// its C on my GPU's HBM.
// With data: A and B are read when the verb is issued (reads see what has landed; the race check
// sees each row read), the tile is computed at once, and C lands row by row when its flow ends.
#include <algorithm>
#include <vector>

#include "backends/sim/conv.h"
#include "backends/sim/simulator.h"
#include "core/dispatch.h"

namespace symm::sim {

namespace {
// inrows[s][i]: row i of epilogue input s, added after the products in s order (fp32).
template <class T>
void tile_data(const std::vector<const uint8_t*>& arows, const std::vector<const uint8_t*>& brows,
               const std::vector<std::vector<const uint8_t*>>& inrows, int m, int n, int k, std::vector<uint8_t>& out) {
  std::vector<float> bf(std::size_t(k) * std::size_t(n)), acc(std::size_t(m) * std::size_t(n), 0.0f);
  for (int kk = 0; kk < k; ++kk) {
    const T* row = reinterpret_cast<const T*>(brows[std::size_t(kk)]);
    for (int j = 0; j < n; ++j) bf[std::size_t(kk) * std::size_t(n) + std::size_t(j)] = Conv<T>::load(row[j]);
  }
  for (int i = 0; i < m; ++i) {
    const T* arow = reinterpret_cast<const T*>(arows[std::size_t(i)]);
    float* c = acc.data() + std::size_t(i) * std::size_t(n);
    for (int kk = 0; kk < k; ++kk) {
      const float av = Conv<T>::load(arow[kk]);
      const float* b = bf.data() + std::size_t(kk) * std::size_t(n);
      for (int j = 0; j < n; ++j) c[j] += av * b[j];
    }
    for (const auto& in : inrows) {
      const T* row = reinterpret_cast<const T*>(in[std::size_t(i)]);
      for (int j = 0; j < n; ++j) c[j] += Conv<T>::load(row[j]);
    }
  }
  out.resize(acc.size() * sizeof(T));
  T* o = reinterpret_cast<T*>(out.data());
  for (std::size_t i = 0; i < acc.size(); ++i) o[i] = Conv<T>::store(acc[i]);
}
}  // namespace

void Simulator::mma_tile(Block& b, DType t, uintptr_t c, std::size_t ldc, uintptr_t a, std::size_t lda, uintptr_t bm,
                         std::size_t ldb, int m, int n, int k, uintptr_t c_in, int n_in, std::size_t in_stride) {
  const std::string who = "rank " + std::to_string(b.rank) + " " + block_name(b) + ": mma_tile";
  if (t == DType::kFP32) fail(ErrorCode::kInvalidArgument, who + " takes bf16 or fp16 operands");
  if (m < 1 || m > kTileM || n < 1 || n > kTileN || k < 1)
    fail(ErrorCode::kInvalidArgument, who + "(m=" + std::to_string(m) + ", n=" + std::to_string(n) +
                                          ", k=" + std::to_string(k) + ") needs 1 <= m <= " + std::to_string(kTileM) +
                                          ", 1 <= n <= " + std::to_string(kTileN) + ", k >= 1");
  const std::size_t es = dtype_size(t), vec = kVecBytes / es;
  if (n % vec || k % vec || lda % vec || ldb % vec || ldc % vec || lda < std::size_t(k) || ldb < std::size_t(n) ||
      ldc < std::size_t(n))
    fail(ErrorCode::kInvalidArgument, who + "(n=" + std::to_string(n) + ", k=" + std::to_string(k) +
                                          ", lda=" + std::to_string(lda) + ", ldb=" + std::to_string(ldb) +
                                          ", ldc=" + std::to_string(ldc) + ") needs 16-byte rows and ld >= width");
  const std::size_t um = std::size_t(m), un = std::size_t(n), uk = std::size_t(k);
  const std::size_t a_span = ((um - 1) * lda + uk) * es, b_span = ((uk - 1) * ldb + un) * es;
  const std::size_t c_span = ((um - 1) * ldc + un) * es;
  const Loc la = decode(b, a, a_span, "mma_tile A"), lb = decode(b, bm, b_span, "mma_tile B");
  const Loc lc = decode(b, c, c_span, "mma_tile C");
  if (n_in < 0 || (n_in > 0 && !c_in))
    fail(ErrorCode::kInvalidArgument, who + ": " + std::to_string(n_in) + " epilogue inputs at a null address");
  std::vector<Loc> lin;
  for (int s = 0; s < n_in; ++s)
    lin.push_back(decode(b, c_in + std::size_t(s) * in_stride * es, c_span, "mma_tile C_in"));
  for (const Loc* l : {&la, &lb, &lc})
    if (l->space < 0 || l->space >= world_) fail(ErrorCode::kInvalidArgument, who + " needs ranks' addresses");
  const int me = b.rank;
  bool remote_in = false;
  for (const Loc& l : lin) {
    if (l.space < 0 || l.space >= world_) fail(ErrorCode::kInvalidArgument, who + " needs ranks' addresses");
    remote_in |= l.space != me;
  }
  if (la.space != me || lb.space != me || lc.space != me || remote_in) touch_peer(b);

  b.fence_pending = true;
  b.stored_local |= lc.space == me;
  uint32_t index;
  Transfer& x = new_transfer(b, "mma_tile", index);
  x.remote_load = la.space != me || lb.space != me || remote_in;
  x.posted = lc.space != me;
  x.dst_space = lc.space;
  x.dst_off = lc.off;
  x.bytes = um * un * es;
  x.rows = uint32_t(m);
  x.row_bytes = un * es;
  x.dst_pitch = ldc * es;
  const double a_bytes = double(um * uk * es), b_bytes = double(uk * un * es), c_bytes = double(x.bytes);
  const double total = a_bytes + b_bytes + c_bytes * (1.0 + double(n_in));
  double link = 0;
  // An operand on a peer of my own GPU (a team machine) is read from my GPU's HBM, as a local one.
  auto far = [&](const Loc& l) { return l.space != me && over_link(l.space, me); };
  for (const Loc& l : lin)
    if (far(l)) {
      add_use(res_egress(l.space), float(c_bytes / total));
      add_use(res_ingress(me), float(c_bytes / total));
      link += c_bytes;
    } else {
      add_use(res_hbm(me), float(0.5 * c_bytes / total));
    }
  if (far(la)) add_use(res_egress(la.space), float(a_bytes / total)), link += a_bytes;
  if (far(lb)) add_use(res_egress(lb.space), float(b_bytes / total)), link += b_bytes;
  if (far(la) || far(lb)) add_use(res_ingress(me), float(((far(la) ? a_bytes : 0) + (far(lb) ? b_bytes : 0)) / total));
  if (far(lc)) {
    add_use(res_egress(me), float(c_bytes / total));
    add_use(res_ingress(lc.space), float(c_bytes / total));
    link += c_bytes;
  } else {
    add_use(res_hbm(me), float(0.5 * c_bytes / total));
  }
  if (data_) {
    std::vector<const uint8_t*> arows(um), brows(uk);
    if (race_) access_epoch(b);
    auto rows_of = [&](const Loc& l, std::size_t count, std::size_t ld, std::size_t width,
                       std::vector<const uint8_t*>& out) {
      for (std::size_t i = 0; i < count; ++i) {
        const uint64_t off = l.off + i * ld * es;
        if (race_) {
          check_read(b, l.space, off, width * es);
          record_read(b.tid, b.clock, l.space, off, width * es);
        }
        out[i] = read_heap(l.space, off, width * es);
      }
    };
    rows_of(la, um, lda, uk, arows);
    rows_of(lb, uk, ldb, un, brows);
    std::vector<std::vector<const uint8_t*>> inrows(lin.size(), std::vector<const uint8_t*>(um));
    for (std::size_t s = 0; s < lin.size(); ++s) rows_of(lin[s], um, ldc, un, inrows[s]);
    if (t == DType::kBF16)
      tile_data<bf16>(arows, brows, inrows, m, n, k, x.data);
    else
      tile_data<fp16>(arows, brows, inrows, m, n, k, x.data);
    if (race_)
      for (std::size_t i = 0; i < um; ++i) store(b, lc.space, lc.off + i * ldc * es, un * es);
  }
  // Compute time at one SM's share of the machine's rate (flops per ps = TFLOPs / sms), plus the
  // tile's fixed cost (epilogue and pipeline drain, mma_tile_us).
  double compute_ps = 2.0 * double(um * un * uk) / (m_.mma_TFLOPs / double(m_.sms)) + m_.mma_tile_us * 1e6;
  if (far(lc) && m_.mma_peer_store_GBps > 0) compute_ps += c_bytes / gbps_to_bpp(m_.mma_peer_store_GBps);
  if (n_in > 0 && m_.mma_in_GBps > 0) compute_ps += double(n_in) * c_bytes / gbps_to_bpp(m_.mma_in_GBps);
  const double link_ps = link > 0 ? link / block_bpp_ : 0;
  start_flow(b, index, BytesPerPs(total / std::max({compute_ps, link_ps, 1.0})), total);
}

}  // namespace symm::sim
