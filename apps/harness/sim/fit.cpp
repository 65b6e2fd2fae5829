// The fit (calib.h): machine-file keys from microbenchmark rows, by least squares (Eigen), with
// non-negative least squares where a row's time is a sum of costs (the ping-pongs).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "apps/harness/sim/calib.h"
#include "core/algos/tile_gemm.h"
#include "core/calib_plan.h"

namespace symm::sim {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// min |A x - b| subject to x >= 0 (Lawson and Hanson's active-set method).
VectorXd nnls(const MatrixXd& A, const VectorXd& b) {
  const int n = int(A.cols());
  VectorXd x = VectorXd::Zero(n);
  std::vector<bool> passive(std::size_t(n), false);
  for (int outer = 0; outer < 3 * n + 10; ++outer) {
    const VectorXd w = A.transpose() * (b - A * x);
    int j = -1;
    double best = 1e-12 * (1 + b.norm());
    for (int i = 0; i < n; ++i)
      if (!passive[std::size_t(i)] && w(i) > best) best = w(i), j = i;
    if (j < 0) break;
    passive[std::size_t(j)] = true;
    for (int inner = 0; inner < 3 * n + 10; ++inner) {
      std::vector<int> p;
      for (int i = 0; i < n; ++i)
        if (passive[std::size_t(i)]) p.push_back(i);
      MatrixXd Ap(A.rows(), Eigen::Index(p.size()));
      for (std::size_t k = 0; k < p.size(); ++k) Ap.col(Eigen::Index(k)) = A.col(p[k]);
      const VectorXd zp = Ap.colPivHouseholderQr().solve(b);
      VectorXd z = VectorXd::Zero(n);
      for (std::size_t k = 0; k < p.size(); ++k) z(p[k]) = zp(Eigen::Index(k));
      bool feasible = true;
      for (int i : p) feasible &= z(i) > 0;
      if (feasible) {
        x = z;
        break;
      }
      double alpha = 1;
      for (int i : p)
        if (z(i) <= 0) alpha = std::min(alpha, x(i) / (x(i) - z(i)));
      x += alpha * (z - x);
      for (int i : p)
        if (x(i) <= 1e-15) passive[std::size_t(i)] = false, x(i) = 0;
    }
  }
  return x;
}

struct Fit {
  VectorXd p;              // the parameters
  double rms_rel = 0;      // root mean square of (pred - meas) / meas over the rows used
  std::vector<int> lines;  // row indices used
};

// time = A p (rows given by their design row), non-negative, with the residual.
Fit solve(const std::vector<std::vector<double>>& design, const std::vector<double>& t, const std::vector<int>& idx) {
  const int m = int(design.size()), n = int(design.empty() ? 0 : design[0].size());
  MatrixXd A(m, n);
  VectorXd b(m);
  // Rows weighted by 1/time: the fit minimises relative error, as the validation judges it.
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) A(i, j) = design[std::size_t(i)][std::size_t(j)] / t[std::size_t(i)];
    b(i) = 1;
  }
  Fit f;
  f.p = nnls(A, b);
  const VectorXd r = A * f.p - b;
  f.rms_rel = m ? std::sqrt(r.squaredNorm() / m) : 0;
  f.lines = idx;
  return f;
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A residual as a percentage, to 0.01% (noise below it would make the file differ for nothing).
std::string pct(double rel) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * rel + 0.0);
  return buf;
}

// Rounds of a calibration chain against the simulator: each point's measured time a round
// ((t(n) - t(1)) / (n - 1)) less the simulated one's, squared and summed; at(p, n) is the simulated
// row of p's kind at n rounds.
template <class Round, class At>
double round_cost(const std::vector<Round>& pts, At&& at) {
  double c = 0;
  for (const Round& p : pts) {
    const double e = (at(p, p.rounds) - at(p, 1)) / (p.rounds - 1) - p.per_round;
    c += e * e;
  }
  return c;
}

// The x in [lo, hi] where a unimodal cost is least, to 1e-5 (golden-section search).
double golden_min(const std::function<double(double)>& cost, double lo, double hi) {
  const double r = 0.5 * (std::sqrt(5.0) - 1);
  double x1 = hi - r * (hi - lo), x2 = lo + r * (hi - lo), c1 = cost(x1), c2 = cost(x2);
  while (hi - lo > 1e-5) {
    if (c1 <= c2) {
      hi = x2, x2 = x1, c2 = c1, x1 = hi - r * (hi - lo), c1 = cost(x1);
    } else {
      lo = x1, x1 = x2, c1 = c2, x2 = lo + r * (hi - lo), c2 = cost(x2);
    }
  }
  return 0.5 * (lo + hi);
}

// Whether a --keys list lets the rows set `key` (an empty list: every key; "l2_*": every key so named).
bool key_allowed(const std::vector<std::string>& only, const std::string& key) {
  if (only.empty()) return true;
  for (const std::string& o : only)
    if (o == key || (o.ends_with("*") && key.starts_with(o.substr(0, o.size() - 1)))) return true;
  return false;
}

// "rows 12-17" / "rows 3, 5, 9": 1-based data-row numbers of the CSV.
std::string rows_of(const std::vector<int>& idx) {
  if (idx.empty()) return "no rows";
  std::vector<int> v = idx;
  std::sort(v.begin(), v.end());
  bool contiguous = v.back() - v.front() + 1 == int(v.size());
  if (v.size() == 1) return "data row " + std::to_string(v[0] + 1);
  if (contiguous) return "data rows " + std::to_string(v.front() + 1) + "-" + std::to_string(v.back() + 1);
  std::string s = "data rows ";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';  // not `(i ? "," : "") + ...`: GCC 12 warns (-Wrestrict, a false positive) on that
    s += std::to_string(v[i] + 1);
  }
  return s;
}

}  // namespace

FitResult fit_machine(const CalibTable& t, const Machine& base, const std::string& name, const std::string& source,
                      const std::vector<std::string>& only) {
  Machine m = base;
  m.name = name;
  std::map<std::string, std::string> why;  // key -> provenance comment
  const std::vector<CalibRow>& R = t.rows;
  auto select = [&](const std::function<bool(const CalibRow&)>& pred) {
    std::vector<int> idx;
    for (int i = 0; i < int(R.size()); ++i)
      if (pred(R[std::size_t(i)])) idx.push_back(i);
    return idx;
  };
  auto bench = [&](const char* b) { return select([&](const CalibRow& r) { return r.bench == b; }); };
  // A team machine (base.team: ranks sharing the GPU) pooled with a one-rank run of its GPU: the
  // costs a team rank pays (a launch from one of the team's threads, a stream flag operation) come
  // from the team's rows (world > 1) where there are any, not from a lone rank's.
  auto team_rows = [&](std::vector<int> idx) {
    if (!base.team) return idx;
    std::vector<int> team;
    for (int i : idx)
      if (R[std::size_t(i)].world > 1) team.push_back(i);
    return team.empty() ? idx : team;
  };
  // The GPU's own rates (the GEMM) from a lone rank's rows (world 1) where there are any: a team
  // run's ranks time their GEMMs at once, sharing the GPU, which the simulator models (gemm.cpp).
  auto gpu_rows = [&](std::vector<int> idx) {
    if (!base.team) return idx;
    std::vector<int> alone;
    for (int i : idx)
      if (R[std::size_t(i)].world == 1) alone.push_back(i);
    return alone.empty() ? idx : alone;
  };
  // The ranks on one GPU when a row ran (every rank of a team run on the base's GPUs; 1 elsewhere).
  auto ranks_on_gpu = [&](const CalibRow& r) { return double(base.ranks_per_gpu(r.world)); };
  auto note = [&](const std::string& key, const std::string& what, const Fit& f) {
    why[key] = what + ", " + rows_of(f.lines) + ", rms residual " + pct(f.rms_rel);
  };
  // Counts: the device rows.
  auto count = [&](const char* b, const char* key, int& out) {
    // A single-GPU run (world 1) sees one GPU of the machine: it does not set `gpus`.
    const std::vector<int> idx =
        select([&](const CalibRow& r) { return r.bench == b && (std::string(b) != "device_gpus" || r.world > 1); });
    if (idx.empty()) return;
    out = int(std::lround(R[std::size_t(idx.back())].x));
    why[key] = std::string("device property (") + b + "), " + rows_of({idx.back()});
  };
  count("device_gpus", "gpus", m.gpus);
  count("device_sms", "sms", m.sms);
  count("device_copy_engines", "copy_engines", m.copy_engines);

  // Linear fits t = c + s x over a row set: p = (c, s).
  auto linear = [&](const std::vector<int>& idx, const std::function<double(const CalibRow&)>& x,
                    const std::function<double(const CalibRow&)>& t_adj = nullptr) {
    std::vector<std::vector<double>> d;
    std::vector<double> tt;
    for (int i : idx) {
      const CalibRow& r = R[std::size_t(i)];
      d.push_back({1.0, x(r)});
      tt.push_back(t_adj ? t_adj(r) : r.time_us);
    }
    return solve(d, tt, idx);
  };
  auto need = [&](const std::vector<int>& idx, std::size_t n) { return idx.size() >= n; };
  // The row of `set` at x, `blocks` blocks and row i's world nearest to row i in the table (pooled
  // runs follow one another, so that is row i's own run's), or -1; nearest: at row i's x.
  auto nearest_at = [&](const std::vector<int>& set, int i, double x, int blocks) {
    int best = -1;
    for (int j : set) {
      const CalibRow& y = R[std::size_t(j)];
      if (y.x == x && y.blocks == blocks && y.world == R[std::size_t(i)].world &&
          (best < 0 || std::abs(j - i) < std::abs(best - i)))
        best = j;
    }
    return best;
  };
  auto nearest = [&](const std::vector<int>& set, int i, int blocks) {
    return nearest_at(set, i, R[std::size_t(i)].x, blocks);
  };

  // Launch: the mean of the launch rows (one parameter, intercept only).
  for (bool graph : {true, false}) {
    const std::vector<int> idx =
        team_rows(select([&](const CalibRow& r) { return r.bench == "launch" && r.graph == graph; }));
    if (idx.empty()) continue;
    std::vector<std::vector<double>> d(idx.size(), std::vector<double>{1.0});
    std::vector<double> tt;
    for (int i : idx) tt.push_back(R[std::size_t(i)].time_us);
    const Fit f = solve(d, tt, idx);
    const char* key = graph ? "launch_graph_us" : "launch_eager_us";
    (graph ? m.launch_graph_us : m.launch_eager_us) = f.p(0);
    note(key, std::string("mean of launch (empty kernel, ") + (graph ? "graph" : "eager") + ")", f);
  }

  // The L2's size as the rows below see it: the run's device_l2_bytes, else the base's l2_MB, else
  // 50 MB (Hopper's).
  const std::vector<int> dev_l2 = bench("device_l2_bytes");
  const double l2_bytes = !dev_l2.empty() && base.l2_MB > 0 ? R[std::size_t(dev_l2.back())].x
                          : base.l2_MB > 0                  ? base.l2_MB * 1e6
                                                            : 50e6;
  // A reduce_peers row's loads outgrow the L2 (world x bytes out).
  auto beyond_l2 = [&](const CalibRow& r) { return r.x * r.world > l2_bytes; };
  // A row's memory traffic, TB/s (reads and writes): a copy moves x both ways, a reduce loads
  // world x and stores x.
  auto traffic = [](const CalibRow& r) {
    return (r.bench == "copy_peer" ? 2.0 : r.world + 1.0) * r.x / r.time_us * 1e-6;
  };
  // load_slowdown (sim.h) on a team machine, where copy_peer and reduce_peers move only the GPU's own
  // memory. A block's rate at B blocks (1..32) is the slope over sizes, free of the fixed cost each
  // row carries: t = c + x n / (B r), n the bytes loaded per byte out (1 for a copy, world for a
  // reduce), copy_peer at every size, reduce_peers beyond the L2; its traffic T = B r (n + 1) / n
  // (reads and writes, TB/s). Per (bench, world): r = r0 (1 - k T), r0 from the least-loaded block
  // count, k pooled: least squares of 1 - r / r0 on T through 0, r0 and k in turn until k settles.
  // 64 blocks are left out: there a reduce's traffic meets the HBM's capacity (a resource the model
  // has), which such a line would fold into k.
  if (base.team) {
    struct Point {
      double rate, traffic;
    };
    std::map<std::pair<std::string, int>, std::map<int, Point>> sets;  // (bench, world) -> blocks -> point
    std::vector<int> used;
    std::map<std::tuple<std::string, int, int>, std::vector<int>> by_blocks;
    for (int i = 0; i < int(R.size()); ++i) {
      const CalibRow& r = R[std::size_t(i)];
      if (r.blocks <= 32 && (r.bench == "copy_peer" || (r.bench == "reduce_peers" && beyond_l2(r))))
        by_blocks[{r.bench, r.world, r.blocks}].push_back(i);
    }
    for (const auto& [key, idx] : by_blocks) {
      const auto& [name, world, blocks] = key;
      std::set<double> sizes;
      for (int i : idx) sizes.insert(R[std::size_t(i)].x);
      if (sizes.size() < 2) continue;
      const double n = name == "copy_peer" ? 1.0 : double(world);
      const Fit f = linear(idx, [&](const CalibRow& r) { return r.x * n / r.blocks; });
      if (f.p(1) <= 0) continue;
      const double rate = 1 / f.p(1);  // bytes/us
      sets[{name, world}][blocks] = Point{rate, blocks * rate * (n + 1) / n * 1e-6};
      used.insert(used.end(), idx.begin(), idx.end());
    }
    double k = 0;
    for (int pass = 0; pass < 50; ++pass) {
      double num = 0, den = 0;
      for (const auto& [key, pts] : sets) {
        if (pts.size() < 3) continue;
        const Point lo = pts.begin()->second;  // the fewest blocks: the least traffic
        const double r0 = lo.rate / (1 - k * lo.traffic);
        for (const auto& [blocks, p] : pts) {
          num += (1 - p.rate / r0) * p.traffic;
          den += p.traffic * p.traffic;
        }
      }
      const double next = den > 0 ? std::max(0.0, num / den) : 0;
      const bool still = std::abs(next - k) < 1e-9;
      k = next;
      if (still) break;
    }
    if (k > 0) {
      m.load_slowdown = k;
      std::sort(used.begin(), used.end());
      why["load_slowdown"] =
          "copy_peer and reduce_peers (loads beyond the L2) at 1..32 blocks: a block's rate r (the slope over "
          "sizes) = r0 (1 - k T) against its memory traffic T (TB/s), r0 per bench and world (its fewest blocks), "
          "k pooled, " +
          rows_of(used);
    }
  }
  // What the slowdown leaves of a block's rate in a row (1 where the machine has none).
  auto unslowed = [&](const CalibRow& r) { return m.load_slowdown > 0 ? 1 - m.load_slowdown * traffic(r) : 1.0; };
  // Per-block rate first: the ping-pong store and the load chain carry a 16-byte transfer each.
  {
    const std::vector<int> idx = select([](const CalibRow& r) { return r.bench == "copy_peer" && r.blocks <= 2; });
    if (need(idx, 2)) {
      const Fit f = linear(idx, [&](const CalibRow& r) { return r.x / (r.blocks * unslowed(r)); });
      m.block_GBps = 1e-3 / f.p(1);
      note("block_GBps",
           std::string("copy_peer at 1-2 blocks: t = c + bytes/(blocks B)") +
               (m.load_slowdown > 0 ? ", B slowed by the row's traffic (load_slowdown)" : ""),
           f);
    }
  }
  // A block's reduce rate (verbs.cpp): reduce_peers at 1-2 blocks, every rank's input reduced into
  // rank 0's own output, world sources per byte out: t = c + world x / (blocks R), the rows whose
  // loads outgrow the L2 (beyond_l2), of a team (CalibRow::team): there every source is in the GPU's
  // own memory, what the rate is of; over NVLink the rows time the links' round trips (block_GBps). Within it a block
  // with more sources loads faster (one H200: 102-130 GB/s at 4 and 8 sources, 71-78 at 2; from HBM 77-83 at each): not
  // modelled, the rate from HBM is what the bandwidth-bound calls run at. Before local_load_us: its chains' reduces run
  // at this rate.
  {
    const std::vector<int> idx =
        select([&](const CalibRow& r) { return r.bench == "reduce_peers" && r.team && r.blocks <= 2 && beyond_l2(r); });
    if (need(idx, 2)) {
      const Fit f = linear(idx, [&](const CalibRow& r) { return r.x * r.world / (r.blocks * unslowed(r)); });
      m.block_reduce_GBps = 1e-3 / f.p(1);
      note("block_reduce_GBps",
           "reduce_peers at 1-2 blocks, loads beyond the L2 (world x bytes > " + fmt(l2_bytes / 1e6) +
               " MB): t = c + world bytes/(blocks R)" +
               (m.load_slowdown > 0 ? ", R slowed by the row's traffic (load_slowdown)" : ""),
           f);
    }
  }
  const double vec_us = 16.0 / (m.block_GBps * 1e3);  // one 16-byte vector at the block rate
  // ... and reduced (a reduce's loads: block_reduce_GBps, or the copy's rate where it is 0)
  const double reduce_vec_us = 16.0 / (m.reduce_GBps() * 1e3);
  // What a copy or reduce of local sources only waits for its loads (transfers.cpp): the slope of
  // a block's reduces of one 16-byte vector one after another, each from a line of its own (a
  // round trip to L2). peer_reduce_chain's lines are a peer's stores after its flag, what the local
  // reduces read (all_reduce.st_reduce): those rows where a run has them (two ranks), else
  // local_reduce_chain's (lines the block's GPU wrote; one GPU too). Before the ping-pongs: a hop of
  // pingpong_store copies a vector from local memory, which pays it.
  // Per line the peer chain also carries the peer's copy of the line (128 B at the block rate). It
  // is fitted on n >= 16: below, the wait for the peer's flag hides the chain (flat to n 4 on 2x
  // H100), as in acquire_peer_flags.
  for (const bool peer : {true, false}) {
    const std::vector<int> idx =
        peer ? select([](const CalibRow& r) { return r.bench == "peer_reduce_chain" && r.x >= 16; })
             : bench("local_reduce_chain");
    if (!need(idx, 2)) continue;
    const double line_us = reduce_vec_us + (peer ? vec_us * double(calib::kLineBytes) / 16.0 : 0.0);
    const Fit f = linear(
        idx, [](const CalibRow& r) { return r.x; }, [&](const CalibRow& r) { return r.time_us - r.x * line_us; });
    m.local_load_us = std::max(0.0, f.p(1));
    note("local_load_us",
         peer ? "peer_reduce_chain (n >= 16): t = c + n (wait + 16 B + the peer's 128-B line at the block rate)"
              : "local_reduce_chain: t = c + n (wait + 16 B at the block rate)",
         f);
    // A reduce_ll's last look at its packets once they landed (sim.h ll_poll_us) is such a load of
    // bytes in its own memory: the same round trip (fitted on bench rows before, held out).
    m.ll_poll_us = m.local_load_us;
    note("ll_poll_us", "as local_load_us: the spin's last look at the packets is one local load round trip", f);
    break;
  }
  // A block's packet read rate (packets.cpp, reduce_ll: 2 bytes of packets per byte it unpacks):
  // ll_unpack_chain's passes each unpack kLlChainBytes of packets already valid, so the slope over
  // passes is 2 kLlChainBytes at ll_read_GBps (its HBM share is ~3 % of it at 100 GB/s, left in).
  {
    const std::vector<int> idx = bench("ll_unpack_chain");
    if (need(idx, 2)) {
      const Fit f = linear(idx, [](const CalibRow& r) { return r.x; });
      if (f.p(1) > 0) {
        m.ll_read_GBps = 2.0 * double(calib::kLlChainBytes) / f.p(1) * 1e-3;
        note("ll_read_GBps", "ll_unpack_chain: t = c + passes x 2 x 16 KiB / R", f);
      }
    }
  }
  // The intercepts of the relaxed ping-pong and the load chain: a kernel that reaches a peer,
  // with no hop (peer_kernel_us below).
  double c_pingpong = -1, c_load = -1;
  std::vector<int> c_lines;
  {
    // The three ping-pongs at once, each with its own intercept, hops sharing costs:
    //   relaxed  t = c1 + 2x f
    //   acqrel   t = c2 + 2x (f + a)           a: the acquire (acquire_us)
    //   store    t = c3 + 2x (f + a + s)       s: the store's landing before the release (+ the vector
    //                                          and its local load, local_load_us)
    // Without acqrel rows a is not separable: it is fixed at 0 and s absorbs it.
    const std::vector<int> a = bench("pingpong_relaxed"), q = bench("pingpong_acqrel"), b = bench("pingpong_store");
    if (need(a, 2) && need(b, 2)) {
      const bool acq = need(q, 2);
      std::vector<std::vector<double>> d;
      std::vector<double> tt;
      std::vector<int> idx;
      for (int i : a) d.push_back({1, 0, 0, 2 * R[std::size_t(i)].x, 0, 0}), tt.push_back(R[std::size_t(i)].time_us);
      if (acq)
        for (int i : q) {
          const double x = R[std::size_t(i)].x;
          d.push_back({0, 1, 0, 2 * x, 2 * x, 0});
          tt.push_back(R[std::size_t(i)].time_us);
        }
      for (int i : b) {
        const CalibRow& r = R[std::size_t(i)];
        d.push_back({0, 0, 1, 2 * r.x, acq ? 2 * r.x : 0, 2 * r.x});
        tt.push_back(r.time_us - 2 * r.x * (vec_us + m.local_load_us));
      }
      idx = a;
      if (acq) idx.insert(idx.end(), q.begin(), q.end());
      idx.insert(idx.end(), b.begin(), b.end());
      const Fit f = solve(d, tt, idx);
      c_pingpong = f.p(0);
      c_lines.insert(c_lines.end(), a.begin(), a.end());
      m.flag_latency_us = f.p(3);
      m.acquire_us = acq ? f.p(4) : 0;
      m.store_latency_us = f.p(5);
      const std::string names = acq ? "pingpong_relaxed/acqrel/store" : "pingpong_relaxed/store";
      note("flag_latency_us", names + " (NNLS): one-way flag f", f);
      if (acq) note("acquire_us", names + " (NNLS): acquire a per hop (acqrel - relaxed)", f);
      note("store_latency_us", names + " (NNLS): store landing s per hop (store - acqrel)", f);
    }
  }
  // The release's fence against the acquire (verbs.cpp: a release with something to publish pays
  // release_fence_share x acquire_us, each acquire wait the rest once its flag is seen).
  // acquire_peer_flags: rank 1 acquires, one after another, n flags rank 0 set over NVLink and
  // released once, all set by then: its slope over n is what an acquire wait alone pays. Fitted on
  // n >= 16 (below, the kernel's fixed cost hides the acquires: flat to n 8 on 2x and 4x H100).
  {
    const std::vector<int> idx = select([](const CalibRow& r) { return r.bench == "acquire_peer_flags" && r.x >= 16; });
    if (m.acquire_us > 0 && need(idx, 2)) {
      const Fit f = linear(idx, [](const CalibRow& r) { return r.x; });
      const double a = std::max(0.0, f.p(1));
      m.release_fence_share = std::clamp(1.0 - a / m.acquire_us, 0.0, 1.0);
      char v[96];
      std::snprintf(v, sizeof v, "1 - %.4g / acquire_us: the acquire of a flag already set, per flag", a);
      note("release_fence_share", std::string("acquire_peer_flags (n >= 16): ") + v, f);
    }
  }
  // A barrier's later signals and waits (verbs.cpp: a signal right after one to another peer pays
  // signal_next_us; a wait of a flag already set right after a wait on another rank's flag,
  // wait_next_us), from rounds of two barriers at one block and a world of 3 or more (at world 2 a
  // barrier signals and waits once): barrier_blocks waits in the order the signals go out, so every
  // later wait finds its flag set after every later signal; barrier_landing (the collectives' own
  // barrier) in the order they land, which overlaps the two. Each round's time (t(n) - t(1)) /
  // (n - 1), n >= 4, acquire / release and relaxed, against the simulated rows' (this machine,
  // fitted so far), least squares: golden-section search over [0, 2 us] for each key in turn, until
  // neither moves. Without barrier_landing rows the two cannot be told apart: signal_next_us alone carries
  // both. On 4x H200 a barrier_blocks round measured 2.52 us (acquire / release) and 2.01 (relaxed)
  // against 1.64 and 1.06 at world 2 on the same host (experiments/results/h200x4/round_605ae01).
  {
    struct Round {
      int world, rounds;
      bool acq_rel, landing;
      double per_round;
    };
    std::vector<Round> pts;
    std::vector<int> used;
    bool landing_rows = false;
    for (const char* bench :
         {"barrier_blocks", "barrier_blocks_relaxed", "barrier_landing", "barrier_landing_relaxed"}) {
      const std::string name = bench;
      const std::vector<int> idx =
          select([&](const CalibRow& r) { return r.bench == name && r.blocks == 1 && r.world >= 3; });
      for (int i : idx) {
        const CalibRow& r = R[std::size_t(i)];
        if (r.x < 4) continue;
        const int one = nearest_at(idx, i, 1, 1);  // the same run's one-round row
        if (one < 0) continue;
        const bool landing = name.starts_with("barrier_landing");
        landing_rows = landing_rows || landing;
        pts.push_back({r.world, int(r.x), !name.ends_with("_relaxed"), landing,
                       (r.time_us - R[std::size_t(one)].time_us) / (r.x - 1)});
        used.insert(used.end(), {i, one});
      }
    }
    if (!pts.empty()) {
      auto cost = [&](double sn, double wn) {
        Machine q = m;
        q.signal_next_us = sn;
        q.wait_next_us = wn;
        std::map<std::tuple<int, int, bool, bool>, double> sim;  // (world, rounds, acq_rel, landing) -> time
        auto at = [&](const Round& p, int n) {
          auto [it, fresh] = sim.try_emplace({p.world, n, p.acq_rel, p.landing}, 0.0);
          if (fresh) it->second = simulate_barrier_rounds(q, p.world, 1, n, p.acq_rel, p.landing);
          return it->second;
        };
        return round_cost(pts, at);
      };
      double sn = golden_min([&](double x) { return cost(x, 0.0); }, 0.0, 2.0), wn = 0;
      for (int pass = 0; landing_rows && pass < 40; ++pass) {  // until neither moves
        const double w1 = golden_min([&](double x) { return cost(sn, x); }, 0.0, 2.0);
        const double s1 = golden_min([&](double x) { return cost(x, w1); }, 0.0, 2.0);
        const bool still = std::abs(w1 - wn) < 1e-6 && std::abs(s1 - sn) < 1e-6;
        wn = w1, sn = s1;
        if (still) break;
      }
      m.signal_next_us = sn;
      m.wait_next_us = wn;
      std::sort(used.begin(), used.end());
      used.erase(std::unique(used.begin(), used.end()), used.end());
      const std::string what = std::string(landing_rows ? "barrier_blocks and barrier_landing" : "barrier_blocks") +
                               " (acquire / release and relaxed) at one block, world >= 3 (n >= 4 rounds): each "
                               "round's time against the simulated rows', least squares, " +
                               rows_of(used);
      why["signal_next_us"] = what;
      if (landing_rows) why["wait_next_us"] = what;
    }
  }
  // A release after the block's stores into its own memory (local_store_fence_us, verbs.cpp):
  // fence_chain_local, a 16-byte copy into the block's own memory and a release, round after round
  // at one block. Each round's time (t(n) - t(1)) / (n - 1), n >= 4, against the simulated rows'
  // (this machine, fitted so far), least squares: golden-section search over [0, 2 us]. What the
  // model charges already (the copy, its loads' round trip, the release's share of acquire_us) stays
  // out of the key: on 2x H200 a round measured 0.87 us where the model without the key gave 0.66.
  // fence_chain_peer (the copy into a peer's memory) stays data only: the peer's store lands before
  // the release (store_latency_us, from pingpong_store).
  {
    struct Round {
      int world, rounds;
      double per_round;
    };
    std::vector<Round> pts;
    std::vector<int> used;
    const std::vector<int> idx =
        select([&](const CalibRow& r) { return r.bench == "fence_chain_local" && r.blocks == 1; });
    for (int i : idx) {
      const CalibRow& r = R[std::size_t(i)];
      if (r.x < 4) continue;
      const int one = nearest_at(idx, i, 1, 1);  // the same run's one-round row
      if (one < 0) continue;
      pts.push_back({r.world, int(r.x), (r.time_us - R[std::size_t(one)].time_us) / (r.x - 1)});
      used.insert(used.end(), {i, one});
    }
    if (!pts.empty()) {
      auto cost = [&](double sf) {
        Machine q = m;
        q.local_store_fence_us = sf;
        std::map<std::pair<int, int>, double> sim;  // (world, rounds) -> time
        auto at = [&](const Round& p, int n) {
          auto [it, fresh] = sim.try_emplace({p.world, n}, 0.0);
          if (fresh) it->second = simulate_fence_chain(q, p.world, n, false);
          return it->second;
        };
        return round_cost(pts, at);
      };
      m.local_store_fence_us = golden_min(cost, 0.0, 2.0);
      std::sort(used.begin(), used.end());
      used.erase(std::unique(used.begin(), used.end()), used.end());
      char rms[64];
      std::snprintf(rms, sizeof rms, ", rms residual %.3f us a round",
                    std::sqrt(cost(m.local_store_fence_us) / double(pts.size())));
      why["local_store_fence_us"] =
          "fence_chain_local (a 16-byte local copy and a release, n >= 4 rounds at one block): each round's "
          "time against the simulated rows', least squares, " +
          rows_of(used) + rms;
    }
  }
  // A barrier crossed by B blocks at once (barrier_blocks, rounds of the collectives' acquire /
  // release barrier at 1..64 blocks): each round costs e(B) more than at one block, beyond what the
  // relaxed barrier's round gains (no fence, no acquire: its growth is the flags' and the launch's).
  // On 4x H200 e(B) is 0.16, 0.26, 0.67, 0.94, 0.95 and 0.97 us at 2, 4, 8, 16, 32 and 64 blocks: it
  // grows to about 16 blocks and then stops. Two keys in the model (verbs.cpp, signal): every fence
  // pays fence_gap_us per other block of its GPU fencing or waiting (linear in B), and a fence after
  // an acquire of its kernel (every round but the first) fence_crowd_us per such block, at most
  // fence_crowd_blocks of them. The values are those whose simulated rows (this machine, fitted so
  // far) give the measured e(B) in least squares (rows of n >= 4 rounds, each paired with the nearest
  // rows, same rounds, of one block and of the relaxed barrier): for each count up to the rows'
  // blocks (every one to 8, then sparser) a least-squares step, the three counts of least cost
  // polished by Gauss-Newton steps and the best kept. Where the file keeps the base's
  // fence_gap_us (`only` without it: the shipped NVLink files take it from bench rows,
  // experiments/fidelity.py), fence_crowd_us is fitted beside that value.
  {
    auto rows = [&](const char* b) { return select([b](const CalibRow& r) { return r.bench == b && r.x >= 4; }); };
    const std::vector<int> acq = rows("barrier_blocks"), rel = rows("barrier_blocks_relaxed");
    struct Point {
      int world, blocks, rounds;
      double e;        // measured extra per round, acquire / release less relaxed
      double relaxed;  // the simulated relaxed rows' extra (no fence: the keys do not move it)
    };
    std::vector<Point> pts;
    std::vector<int> used;
    for (int i : acq) {
      const CalibRow& r = R[std::size_t(i)];
      if (r.blocks < 2) continue;
      const int a1 = nearest(acq, i, 1), rb = nearest(rel, i, r.blocks), r1 = nearest(rel, i, 1);
      if (a1 < 0 || rb < 0 || r1 < 0) continue;
      auto t = [&](int j) { return R[std::size_t(j)].time_us; };
      const int n = int(r.x);
      pts.push_back(
          {r.world, r.blocks, n, ((r.time_us - t(a1)) - (t(rb) - t(r1))) / r.x,
           simulate_barrier_rounds(m, r.world, r.blocks, n, false) - simulate_barrier_rounds(m, r.world, 1, n, false)});
      used.insert(used.end(), {i, a1, rb, r1});
    }
    if (!pts.empty()) {
      Machine q = m;
      std::map<std::pair<int, int>, double> one;        // (world, rounds) -> the one-block row (neither key moves it)
      auto extras = [&](double g, double c, int cap) {  // the simulated e(B) of every point
        q.fence_gap_us = g;
        q.fence_crowd_us = c;
        q.fence_crowd_blocks = cap;
        std::vector<double> e;
        for (const Point& p : pts) {
          auto [it, fresh] = one.try_emplace({p.world, p.rounds}, 0.0);
          if (fresh) it->second = simulate_barrier_rounds(q, p.world, 1, p.rounds, true);
          e.push_back((simulate_barrier_rounds(q, p.world, p.blocks, p.rounds, true) - it->second - p.relaxed) /
                      p.rounds);
        }
        return e;
      };
      auto cost = [&](double g, double c, int cap) {
        const std::vector<double> e = extras(g, c, cap);
        double sum = 0;
        for (std::size_t i = 0; i < pts.size(); ++i) sum += (e[i] - pts[i].e) * (e[i] - pts[i].e);
        return sum;
      };
      int max_blocks = 2;
      for (const Point& p : pts) max_blocks = std::max(max_blocks, p.blocks);
      const bool own_gap = key_allowed(only, "fence_gap_us");
      // Each count: e(B) is close to linear in both keys, so a least-squares step from the simulated
      // rows at 0 and at 0.05 us of each (non-negative) and its cost; the best count's values then
      // polished by golden-section searches in turn.
      const double g0 = own_gap ? 0.0 : base.fence_gap_us, d = 0.05;
      struct Cand {
        double v, g, c;
        int cap;
      };
      std::vector<Cand> cands;
      for (int k = 1; k < max_blocks; k += k < 8 ? 1 : k < 16 ? 2 : k < 32 ? 4 : 8) {
        const std::vector<double> e0 = extras(g0, 0, k), ec = extras(g0, d, k), eg = own_gap ? extras(d, 0, k) : e0;
        double aa = 0, ab = 0, bb = 0, ar = 0, br = 0;
        for (std::size_t i = 0; i < pts.size(); ++i) {
          const double av = (eg[i] - e0[i]) / d, bv = (ec[i] - e0[i]) / d, r = pts[i].e - e0[i];
          aa += av * av, ab += av * bv, bb += bv * bv, ar += av * r, br += bv * r;
        }
        double gk = 0, ck = bb > 0 ? std::max(0.0, br / bb) : 0;
        if (own_gap && aa > 0) {
          const double det = aa * bb - ab * ab;
          const double gs = det > 0 ? (ar * bb - br * ab) / det : -1, cs = det > 0 ? (br * aa - ar * ab) / det : -1;
          if (gs >= 0 && cs >= 0) {
            gk = gs, ck = cs;
          } else {  // one of them at 0: the better of the two one-key fits
            const double go = std::max(0.0, ar / aa);
            if (cost(go, 0, k) < cost(0, ck, k)) gk = go, ck = 0;
          }
        }
        gk += own_gap ? 0.0 : g0;
        cands.push_back({cost(gk, ck, k), gk, ck, k});
      }
      // The three counts of least cost, each polished by Gauss-Newton steps (differences of 0.0005 us;
      // a step that does not lower the cost halves), the best kept.
      std::sort(cands.begin(), cands.end(), [](const Cand& x, const Cand& y) { return x.v < y.v; });
      if (cands.size() > 3) cands.resize(3);
      for (Cand& k : cands) {
        const double h = 0.0005;
        for (int it = 0; it < 16; ++it) {
          const std::vector<double> e0 = extras(k.g, k.c, k.cap), ec = extras(k.g, k.c + h, k.cap),
                                    eg = own_gap ? extras(k.g + h, k.c, k.cap) : e0;
          double aa = 0, ab = 0, bb = 0, ar = 0, br = 0;
          for (std::size_t i = 0; i < pts.size(); ++i) {
            const double av = (eg[i] - e0[i]) / h, bv = (ec[i] - e0[i]) / h, r = pts[i].e - e0[i];
            aa += av * av, ab += av * bv, bb += bv * bv, ar += av * r, br += bv * r;
          }
          double sg = 0, sc = bb > 0 ? br / bb : 0;
          const double det = aa * bb - ab * ab;
          if (own_gap && det > 1e-12 * aa * bb) sg = (ar * bb - br * ab) / det, sc = (br * aa - ar * ab) / det;
          bool moved = false;
          for (double f = 1; f > 1.0 / 64 && !moved; f /= 2) {
            const double ng = std::max(0.0, k.g + f * sg), nc = std::max(0.0, k.c + f * sc);
            const double v = cost(ng, nc, k.cap);
            if (v < k.v) k.v = v, k.g = ng, k.c = nc, moved = true;
          }
          if (!moved) break;
        }
      }
      const Cand& win =
          *std::min_element(cands.begin(), cands.end(), [](const Cand& x, const Cand& y) { return x.v < y.v; });
      const double g = win.g, c = win.c, best = win.v;
      const int cap = win.cap;
      std::sort(used.begin(), used.end());
      used.erase(std::unique(used.begin(), used.end()), used.end());
      const std::string what =
          "barrier_blocks against barrier_blocks_relaxed (n >= 4 rounds): a round at B blocks over one at 1 block, "
          "acquire / release less relaxed, least squares against the simulated rows, " +
          rows_of(used) + ", rms residual " + fmt(std::sqrt(best / double(pts.size()))) + " us a round";
      m.fence_gap_us = g;
      m.fence_crowd_us = c;
      m.fence_crowd_blocks = cap;
      if (own_gap) why["fence_gap_us"] = what + " (with fence_crowd_us and fence_crowd_blocks)";
      why["fence_crowd_us"] =
          what + (own_gap ? " (with fence_gap_us" : " (beside the base's fence_gap_us") +
          " and fence_crowd_blocks: the count of least cost of 1..8, then every 2nd to 16, 4th to 32, 8th to " +
          std::to_string(max_blocks - 1) + ")";
      why["fence_crowd_blocks"] = "with fence_crowd_us";
    }
  }
  {
    // A chain of remote loads: t = c + n (rtt + 16 B at the block rate).
    auto chain = [&](const std::vector<int>& idx) {
      return linear(
          idx, [](const CalibRow& r) { return r.x; }, [&](const CalibRow& r) { return r.time_us - r.x * vec_us; });
    };
    const std::vector<int> idx = bench("load_chain");
    if (need(idx, 2)) {
      const Fit f = chain(idx);
      m.load_rtt_us = f.p(1);
      note("load_rtt_us", "load_chain: t = c + n (rtt + 16 B at the block rate)", f);
      c_load = f.p(0);
      c_lines.insert(c_lines.end(), idx.begin(), idx.end());
    }
    // The same a line apart (every load a round trip; load_chain's back-to-back loads share sectors,
    // calib.h): where a run has these rows, they set the round trip (its intercept stays load_chain's,
    // the one peer_kernel_us was defined by). From 4 loads: below, the first round trips hide
    // behind the kernel's start (load_chain: 1 and 2 loads take the same time).
    const std::vector<int> lines = select([](const CalibRow& r) { return r.bench == "load_chain_lines" && r.x >= 4; });
    if (need(lines, 2)) {
      const Fit f = chain(lines);
      m.load_rtt_us = f.p(1);
      note("load_rtt_us", "load_chain_lines (n >= 4): t = c + n (rtt + 16 B at the block rate), a line apart", f);
    }
  }
  // A host plan's stream flag operation: plan_flag is a write_flag and its wait_flag per call (in a
  // graph; the fork and join are free in the model), so each costs half of it. On a team machine
  // every rank of the row's GPU runs the same call at once, and the GPU's front end takes their
  // flag operations one at a time (streams.cpp front_end): each costs half of it over the ranks
  // on the GPU (one H200: 10.2 us a call at 2 ranks, 20.1 at 4: 2.55 and 2.51 us an operation).
  {
    const std::vector<int> idx = team_rows(select([](const CalibRow& r) { return r.bench == "plan_flag" && r.graph; }));
    if (!idx.empty()) {
      double sum = 0;
      for (int i : idx) sum += R[std::size_t(i)].time_us / ranks_on_gpu(R[std::size_t(i)]);
      m.stream_op_us = 0.5 * sum / double(idx.size());
      why["stream_op_us"] = base.team
                                ? "plan_flag (a stream's write_flag + wait_flag per call, graph, every rank of "
                                  "the GPU at once) / (2 x the ranks on the GPU), " +
                                      rows_of(idx)
                                : "plan_flag (a stream's write_flag + wait_flag per call, graph) / 2, " + rows_of(idx);
    }
  }
  // A flag operation batched after the first (a stream's consecutive flag items: one
  // cuStreamBatchMemOp): plan_flag_batch is n write_flags on a side stream, then n wait_flags on the
  // main stream, per call. A rank's flag operations take its GPU's front end one at a time
  // (backends/sim/streams.cpp front_end), so every pair beyond the first adds two such operations,
  // in the simulator as in the rows (tests/sim/test_plans.cpp FlagBatchRowGrowsByTwoBatchedOperationsAPair).
  {
    const std::vector<int> idx =
        team_rows(select([](const CalibRow& r) { return r.bench == "plan_flag_batch" && r.graph; }));
    std::set<double> xs;
    for (int i : idx) xs.insert(R[std::size_t(i)].x);
    if (xs.size() >= 2) {
      const Fit f = linear(idx, [](const CalibRow& r) { return 2 * r.x; });
      m.stream_batch_op_us = f.p(1);
      note("stream_batch_op_us",
           "plan_flag_batch (n write_flags, then n wait_flags, each run one batch, one front end; graph): "
           "t = c + n (2 b)",
           f);
    }
  }
  // Sets `key` (`out`) to the mean of a - b, at least 0, over the rows of `a`, each paired with the
  // row of `b` at the same x and blocks nearest to it (`nearest`); nothing where no row pairs.
  auto paired_mean = [&](const std::vector<int>& a, const std::vector<int>& b, const char* key, double& out,
                         const std::string& what) {
    double sum = 0;
    int pairs = 0;
    std::vector<int> used;
    for (int i : a) {
      const int best = nearest(b, i, R[std::size_t(i)].blocks);
      if (best < 0) continue;
      sum += R[std::size_t(i)].time_us - R[std::size_t(best)].time_us;
      ++pairs;
      used.push_back(best), used.push_back(i);
    }
    if (!pairs) return;
    std::sort(used.begin(), used.end());
    out = std::max(0.0, sum / double(pairs));
    why[key] = what + ", " + rows_of(used);
  };
  auto launch_busy = [&](bool graph) {
    return select([=](const CalibRow& r) { return r.bench == "launch_busy" && r.graph == graph; });
  };
  // Eager calls of a kernel longer than the launch interval cost its graph time plus a gap: the
  // mean of eager - graph over the launch_busy rows' sizes.
  paired_mean(launch_busy(false), launch_busy(true), "launch_eager_gap_us", m.launch_eager_gap_us,
              "launch_busy (a load chain launched as the bench launches, eager - graph)");
  // A kernel that publishes with release signals (the collectives' barrier, barrier_busy, launched
  // the same way) pays more again in its eager calls: the mean of its eager - graph, less
  // launch_eager_gap_us (sim.h eager_release_us; none where no run has the rows). The two go
  // together: a --keys list with one and not the other writes a pair fitted as one.
  {
    auto barrier_busy = [&](bool graph) {
      return select([=](const CalibRow& r) { return r.bench == "barrier_busy" && r.graph == graph; });
    };
    double gap = -1;
    paired_mean(barrier_busy(false), barrier_busy(true), "eager_release_us", gap,
                "barrier_busy (the collectives' barrier launched as the bench launches, eager - graph) less "
                "launch_eager_gap_us");
    if (gap >= 0) m.eager_release_us = std::max(0.0, gap - m.launch_eager_gap_us);
  }
  // Programmatic dependent launch: the same load chain launched without it (load_chain) less
  // launched with it, as the bench launches device programs (launch_busy), both in a graph.
  paired_mean(select([](const CalibRow& r) { return r.bench == "load_chain" && r.graph; }), launch_busy(true),
              "pdl_saving_us", m.pdl_saving_us,
              "load_chain (launched without programmatic dependent launch) - launch_busy (with it, as the bench "
              "launches device programs), same loads, graph");
  // A kernel that reaches a peer costs more than an empty kernel's launch before its first hop:
  // the two intercepts above, less launch_graph_us (the simulator charges it at a block's first
  // access to a peer). The fitted file's note gives both intercepts.
  if (c_pingpong >= 0 && c_load >= 0 && m.launch_graph_us > 0) {
    m.peer_kernel_us = std::max(0.0, 0.5 * (c_pingpong + c_load) - m.launch_graph_us);
    char v[64];
    std::snprintf(v, sizeof v, "%.3g and %.3g us", c_pingpong, c_load);
    why["peer_kernel_us"] = std::string("mean intercept of pingpong_relaxed and load_chain (") + v +
                            ") less launch_graph_us, " + rows_of(c_lines);
  }
  auto rate = [&](const char* b, const char* key, double& out, const char* what) {
    const std::vector<int> idx = bench(b);
    if (!need(idx, 2)) return;
    const Fit f = linear(idx, [](const CalibRow& r) { return r.x; });
    out = 1e-3 / f.p(1);
    note(key, what, f);
  };
  rate("copy_scatter", "nvlink_egress_GBps", m.nvlink_egress_GBps,
       "copy_scatter (rank 0 to every peer): t = c + bytes/E");
  rate("copy_incast", "nvlink_ingress_GBps", m.nvlink_ingress_GBps,
       "copy_incast (every peer to rank 0): t = c + bytes/I");
  // The L2's size: a device property where the run reads it (device_l2_bytes), else the base's.
  {
    const std::vector<int> idx = bench("device_l2_bytes");
    if (!idx.empty() && m.l2_MB > 0) {
      m.l2_MB = R[std::size_t(idx.back())].x / 1e6;
      why["l2_MB"] = std::string("device property (device_l2_bytes), ") + rows_of({idx.back()});
    }
  }
  {
    // Copies whose source and destination, on every rank of the GPU, together outgrow the L2
    // (l2_MB; 50 MB, Hopper's, where the base has no L2 model) run from HBM; smaller ones from the
    // L2: l2_GBps, with the same copy kernel's fixed cost (the HBM fit's intercept).
    const double l2 = m.l2_MB > 0 ? m.l2_MB * 1e6 : 50e6;
    auto copy_local = [&](bool beyond) {
      return select(
          [&](const CalibRow& r) { return r.bench == "copy_local" && (2 * r.x * ranks_on_gpu(r) > l2) == beyond; });
    };
    const std::vector<int> idx = copy_local(true);
    if (need(idx, 2)) {
      // Every rank copies at once: on a team machine its GPU's HBM moves every co-located rank's bytes.
      const Fit f = linear(idx, [&](const CalibRow& r) { return r.x * ranks_on_gpu(r); });
      m.hbm_GBps = 1e-3 / f.p(1);
      note("hbm_GBps",
           std::string("copy_local beyond the L2 (2 x bytes x the ranks on the GPU > ") + fmt(l2 / 1e6) +
               " MB; all SMs, every rank): t = c + bytes/H" +
               (base.team ? ", bytes x the ranks on the GPU (a team)" : ""),
           f);
      // Within the L2: its own line where the rows span two sizes (bytes x ranks), else through
      // the HBM line's intercept (the same copy kernel's fixed cost).
      const std::vector<int> in = copy_local(false);
      std::set<double> sizes;
      for (int i : in) sizes.insert(R[std::size_t(i)].x * ranks_on_gpu(R[std::size_t(i)]));
      if (m.l2_MB > 0 && sizes.size() >= 2) {
        const Fit g = linear(in, [&](const CalibRow& r) { return r.x * ranks_on_gpu(r); });
        if (g.p(1) > 0) {
          m.l2_GBps = 1e-3 / g.p(1);
          note("l2_GBps", "copy_local within the L2 (2 x bytes x the ranks on the GPU <= l2_MB): t = c + bytes/L", g);
        }
      } else if (m.l2_MB > 0 && need(in, 1)) {
        // One size: L = the rows' bytes over their time beyond c, each row above c (a row at or
        // under the copy's fixed cost says nothing of a rate).
        double bytes = 0, us = 0;
        std::vector<int> used;
        for (int i : in) {
          const CalibRow& r = R[std::size_t(i)];
          if (r.time_us <= f.p(0)) continue;
          bytes += r.x * ranks_on_gpu(r);
          us += r.time_us - f.p(0);
          used.push_back(i);
        }
        if (!used.empty()) {
          m.l2_GBps = bytes / us * 1e-3;
          why["l2_GBps"] =
              "copy_local within the L2 (2 x bytes x the ranks on the GPU <= l2_MB): t = c + bytes/L, c = " +
              fmt(f.p(0)) + " us (hbm_GBps's intercept), L = their bytes over their time beyond c, " + rows_of(used);
        }
      }
    }
  }
  {
    const std::vector<int> idx = bench("ce_copy");
    if (need(idx, 2)) {
      const Fit f = linear(idx, [](const CalibRow& r) { return r.x; });
      m.ce_startup_us = f.p(0);
      m.ce_GBps = 1e-3 / f.p(1);
      note("ce_startup_us", "ce_copy (cudaMemcpyAsync to a peer): intercept of t = S + bytes/C", f);
      note("ce_GBps", "ce_copy (cudaMemcpyAsync to a peer): slope of t = S + bytes/C", f);
    }
  }
  {
    // t = c + P(m,n,k)/G [+ bytes/Bg] on the graph rows (NNLS), P the padded flops of the tile
    // (tm x tn) and the bytes term (with or without) whose fit leaves the least residual; "no
    // tiles" (P = 2mnk) is a candidate too. Eager rows and the held-out gemm_fused rows are never
    // fitted.
    const std::vector<int> idx =
        gpu_rows(select([](const CalibRow& r) { return r.bench == "gemm" && r.graph && r.m > 0; }));
    if (need(idx, 4)) {
      const std::pair<int, int> tiles[] = {{0, 0}, {64, 128}, {128, 64}, {128, 128}, {128, 256}, {256, 128}};
      Fit best;
      std::pair<int, int> best_tile{-1, -1};
      bool best_bytes = false;
      for (bool with_bytes : {false, true})
        for (const auto& [tm, tn] : tiles) {
          Machine trial = m;
          trial.gemm_tile_m = tm, trial.gemm_tile_n = tn;
          std::vector<std::vector<double>> d;
          std::vector<double> tt;
          for (int i : idx) {
            const CalibRow& r = R[std::size_t(i)];
            const double bytes = 2.0 * (double(r.m) * r.k + double(r.k) * r.n + double(r.m) * r.n);
            d.push_back({1.0, trial.gemm_padded_flops(r.m, r.n, r.k), with_bytes ? bytes : 0.0});
            tt.push_back(r.time_us);
          }
          const Fit f = solve(d, tt, idx);
          // The bytes term must earn its place: 5% less residual than the best fit without it,
          // and 0.01 points less at least (below that, rounding noise).
          const double bar = with_bytes && !best_bytes ? 0.95 * best.rms_rel - 1e-4 : best.rms_rel;
          if (f.p(1) > 0 && (!with_bytes || f.p(2) > 0) && (best_tile.first < 0 || f.rms_rel < bar))
            best = f, best_tile = {tm, tn}, best_bytes = with_bytes;
        }
      if (best_tile.first >= 0) {
        m.gemm_tile_m = best_tile.first, m.gemm_tile_n = best_tile.second;
        m.gemm_TFLOPs = 1e-6 / best.p(1);
        m.gemm_GBps = best_bytes ? 1e-3 / best.p(2) : 0;
        m.gemm_fixed_us = std::max(0.0, best.p(0) - m.launch_graph_us);
        const std::string tile =
            best_tile.first ? std::to_string(best_tile.first) + "x" + std::to_string(best_tile.second) + " tiles"
                            : "no tiles";
        const std::string what =
            std::string("gemm (cuBLASLt bf16, graph, NNLS): t = c + padded flops/G") +
            (best_bytes ? " + bytes/Bg" : "") + ", " + tile +
            " (least residual of 6 tile shapes; the bytes term only if it cuts the residual by 5%)";
        note("gemm_TFLOPs", what, best);
        note("gemm_GBps", what, best);
        note("gemm_fixed_us", what + "; c - launch_graph_us", best);
        note("gemm_tile_m", what, best);
        note("gemm_tile_n", what, best);
      }
    }
  }
  {
    // The tile verb (mma_tile) from our tile GEMM program alone (tile_gemm, graph, NNLS):
    //   t = c + T (2 kTileM kTileN k sms / (R 1e6) + e)
    // T the tiles of the busiest block as the simulator deals them (core/algos/tile_gemm.h's
    // TileGrid and tile_blocks, every blocks-th tile), R = mma_TFLOPs, e = mma_tile_us; c (the launch and
    // what else a call pays once) is no key: the simulator charges the launch.
    const std::vector<int> idx =
        gpu_rows(select([](const CalibRow& r) { return r.bench == "tile_gemm" && r.graph && r.m > 0; }));
    if (need(idx, 3)) {
      std::vector<std::vector<double>> d;
      std::vector<double> tt;
      for (int i : idx) {
        const CalibRow& r = R[std::size_t(i)];
        const uint32_t tiles = TileGrid(uint32_t(r.m), uint32_t(r.n)).tiles();
        const double per_block = std::ceil(double(tiles) / tile_blocks(m.sms, tiles));
        d.push_back({1.0, per_block * 2.0 * kTileM * kTileN * double(r.k) * m.sms / 1e6, per_block});
        tt.push_back(r.time_us);
      }
      const Fit f = solve(d, tt, idx);
      if (f.p(1) > 0) {
        m.mma_TFLOPs = 1.0 / f.p(1);
        m.mma_tile_us = f.p(2);
        char c[64];
        std::snprintf(c, sizeof c, "%.3g us", f.p(0));
        const std::string what = "tile_gemm (our tile GEMM program alone, bf16, graph, NNLS): t = c + T (2 " +
                                 std::to_string(kTileM) + " x " + std::to_string(kTileN) +
                                 " k sms / R + e), T the busiest block's tiles; c = " + c;
        note("mma_TFLOPs", what, f);
        note("mma_tile_us", what, f);
      }
    }
  }
  if (!why.count("mma_TFLOPs") && why.count("gemm_TFLOPs")) {
    // No tile row: the tile verb is assumed to run at the rate fitted to cuBLASLt, no fixed cost.
    m.mma_TFLOPs = m.gemm_TFLOPs;
    m.mma_tile_us = 0;
    why["mma_TFLOPs"] = "assumed = gemm_TFLOPs (the cuBLASLt fit above): no tile_gemm row";
    why["mma_tile_us"] = "assumed 0: no tile_gemm row";
  }

  // Keys the rows may not set (`only`) go back to the base's values.
  if (!only.empty()) {
    for (auto it = why.begin(); it != why.end();) {
      if (key_allowed(only, it->first)) {
        ++it;
        continue;
      }
      m.copy_key(base, it->first);
      it = why.erase(it);
    }
  }

  // The file: every key in machine.cpp's order, its value and where it came from.
  const std::vector<Machine::KeyValue> keys = m.key_values();
  // The base's file, named from its folder down (base/h200x2.ini, not a bare h200x2.ini that
  // would read as the generated file itself), and its own comment for the key.
  const std::filesystem::path bp(base.path);
  const std::string base_name = (bp.parent_path().filename() == "base" ? "base/" : "") + bp.filename().string();
  auto base_note = [&](const std::string& key) {
    const auto it = base.notes.find(key);
    return it == base.notes.end() || it->second.empty() ? std::string() : " (" + it->second + ")";
  };
  std::ostringstream o;
  o << "# " << name << ": generated by `symmcoll fit` from " << source << " (" << R.size()
    << " rows); do not edit, rerun the fit.\n";
  for (const std::string& c : t.comments) o << "# calibration:" << c << "\n";
  for (const Machine::KeyValue& k : keys) {
    if (!(k.zero_ok ? k.value >= 0 : k.value > 0) || !std::isfinite(k.value))
      fail(ErrorCode::kInvalidArgument, source + ": the fit of '" + k.name + "' is " + fmt(k.value) +
                                            " (not positive): the rows do not determine it");
    const auto it = why.find(k.name);
    // Times to the simulator's resolution (1 ps): the fit's noise below it would only make files differ.
    const bool us = std::string(k.name).ends_with("_us");
    const std::string v =
        k.integer ? std::to_string(std::lround(k.value)) : fmt(us ? std::round(k.value * 1e6) / 1e6 + 0.0 : k.value);
    o << k.name << " = " << v << "  # "
      << (it != why.end() ? it->second : "not calibrated: as in " + base_name + base_note(k.name)) << "\n";
  }
  return FitResult{m, o.str()};
}

}  // namespace symm::sim
