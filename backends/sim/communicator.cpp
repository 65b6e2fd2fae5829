// symm::sim_node (include/symmcoll/symmcoll.h): the library interface on the simulator. The ranks
// of one simulated node share a Node; each rank's call is recorded, and the last rank's call runs
// the collective: the chosen algorithm on the simulated node with the callers' inputs (sim::run,
// RunSpec::user_in), whose outputs go into the callers' `out` (user_out), checked against the
// float64 reference of those inputs. Above check_up_to the call runs timing-only and `out` gets
// that reference, rounded to the dtype.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "backends/sim/sim.h"
#include "core/dispatch.h"
#include "core/reference.h"
#include "symmcoll/symmcoll.h"

namespace symm {
namespace {

struct Pending {
  Op op = Op::kAllReduce;
  const AlgoInfo* algo = nullptr;
  DType dtype = DType::kBF16;
  ReduceOp rop = ReduceOp::kSum;
  std::size_t bytes = 0;
  std::vector<const void*> in;
  std::vector<void*> out;
  int arrived = 0;
  int blocks = 0;  // 0: the algorithm's default ("auto" may choose a measured block count)
};

class Node {
 public:
  explicit Node(const SimOptions& o) : options_(o), machine_(sim::Machine::by_name(o.machine)) {
    world_ = o.world ? o.world : machine_.gpus;
    if (world_ < 2 || world_ > kPadWorld)
      fail(ErrorCode::kInvalidArgument,
           "sim_node: world " + std::to_string(world_) + " is outside 2.." + std::to_string(kPadWorld));
  }
  int world() const { return world_; }

  // Rank `rank`'s part of a collective; the last arrival runs it.
  CallInfo call(int rank, Op op, const void* in, void* out, std::size_t bytes, DType t, ReduceOp rop,
                const std::string& algo) {
    std::lock_guard<std::mutex> lock(mu_);
    AutoChoice choice;
    if (algo == "auto") choice = auto_choose(AutoQuery{machine_.name, op, bytes, world_, t, options_.graph});
    const AlgoInfo& a = algo == "auto" ? *choice.algo : find_algo(op, algo);
    if (p_.arrived == 0) {
      p_ = Pending{op,
                   &a,
                   t,
                   rop,
                   bytes,
                   std::vector<const void*>(std::size_t(world_)),
                   std::vector<void*>(std::size_t(world_)),
                   0,
                   choice.blocks};
    } else if (p_.op != op || p_.algo != &a || p_.dtype != t || p_.bytes != bytes || p_.rop != rop) {
      fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank) + " called " + a.id + " (" + dtype_name(t) +
                                            ", " + std::to_string(bytes) + " bytes) while the ranks before it called " +
                                            p_.algo->id + " (" + dtype_name(p_.dtype) + ", " +
                                            std::to_string(p_.bytes) + " bytes)");
    }
    if (p_.out[std::size_t(rank)])
      fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank) + " called twice before the collective ran");
    if (!in || !out) fail(ErrorCode::kInvalidArgument, "rank " + std::to_string(rank) + ": null buffer");
    p_.in[std::size_t(rank)] = in;
    p_.out[std::size_t(rank)] = out;
    CallInfo info;
    info.algo = &a;
    info.bytes = bytes;
    if (++p_.arrived < world_) return info;
    last_ = run();
    p_ = Pending{};
    return last_;
  }

 private:
  CallInfo run() {
    const AlgoInfo& a = *p_.algo;
    check_args(a, p_.dtype, p_.bytes, world_, p_.blocks ? p_.blocks : a.default_blocks(p_.bytes, world_), p_.rop);
    sim::RunSpec spec;
    spec.blocks = p_.blocks;
    spec.machine = machine_;
    spec.world = world_;
    spec.algo = &a;
    spec.dtype = p_.dtype;
    spec.op = p_.rop;
    spec.bytes = p_.bytes;
    spec.graph = options_.graph;
    spec.timing_only = p_.bytes > options_.check_up_to;
    const std::uint64_t call = calls_++;
    spec.seed = options_.seed + call;
    if (!options_.trace_dir.empty())
      spec.trace_path = options_.trace_dir + "/call" + std::to_string(call) + "_" + a.id + ".json";
    if (!spec.timing_only) {
      spec.user_in = p_.in;
      spec.user_out = p_.out;
    }
    // The bound holds for inputs in [-1, 1] (rel_err_bound): beyond (or non-finite), the error is
    // reported, not enforced: fp32 accumulation of large values may cancel, or overflow the dtype.
    const bool bounded = with_type(p_.dtype, [&]<class T>() { return inputs_within_one<T>(); });
    const sim::RunResult res = sim::run(spec);
    if (!spec.timing_only && bounded && !(res.max_rel_err <= res.err_bound))
      fail(ErrorCode::kInternal, a.id + " on the simulated node: max relative error " +
                                     std::to_string(res.max_rel_err) + " exceeds the bound " +
                                     std::to_string(res.err_bound));
    if (spec.timing_only) with_type(p_.dtype, [&]<class T>() { write_outputs<T>(); });
    CallInfo info;
    info.algo = &a;
    info.bytes = p_.bytes;
    info.complete = true;
    info.predicted_us = res.time_us;
    info.blocks = res.blocks;
    info.max_rel_err = spec.timing_only ? -1 : res.max_rel_err;
    info.err_bound = res.err_bound;
    info.trace_path = spec.trace_path;
    return info;
  }

  template <class T>
  bool inputs_within_one() const {
    const std::size_t n_in = p_.algo->in_bytes(p_.bytes, world_) / sizeof(T);
    for (int r = 0; r < world_; ++r) {
      const T* in = static_cast<const T*>(p_.in[std::size_t(r)]);
      for (std::size_t i = 0; i < n_in; ++i)
        if (!(std::fabs(to_float(in[i])) <= 1.0f)) return false;
    }
    return true;
  }

  template <class T>
  void write_outputs() {
    const std::size_t n_in = p_.algo->in_bytes(p_.bytes, world_) / sizeof(T);
    std::vector<std::vector<double>> inputs(static_cast<std::size_t>(world_));
    for (auto& v : inputs) v.resize(n_in);
    for (int r = 0; r < world_; ++r) {
      const T* in = static_cast<const T*>(p_.in[std::size_t(r)]);
      for (std::size_t i = 0; i < n_in; ++i) inputs[std::size_t(r)][i] = double(to_float(in[i]));
    }
    const auto want = reference(p_.op, p_.rop, inputs);
    for (int r = 0; r < world_; ++r) {
      T* out = static_cast<T*>(p_.out[std::size_t(r)]);
      const std::vector<double>& w = want[std::size_t(r)];
      for (std::size_t i = 0; i < w.size(); ++i) out[i] = from_float<T>(float(w[i]));
    }
  }

  SimOptions options_;
  sim::Machine machine_;
  int world_ = 0;
  std::mutex mu_;
  Pending p_;
  CallInfo last_;
  std::uint64_t calls_ = 0;
};

class SimCommunicator final : public Communicator {
 public:
  SimCommunicator(std::shared_ptr<Node> node, int rank) : node_(std::move(node)), rank_(rank) {}
  ~SimCommunicator() override {
    for (void* p : owned_) std::free(p);
  }
  int rank() const override { return rank_; }
  int world() const override { return node_->world(); }
  const char* backend() const override { return "sim"; }

  void* alloc(std::size_t bytes) override {
    void* p = std::aligned_alloc(4096, (std::max<std::size_t>(bytes, 1) + 4095) / 4096 * 4096);
    if (!p) fail(ErrorCode::kInvalidArgument, "alloc: cannot allocate " + std::to_string(bytes) + " bytes");
    owned_.push_back(p);
    return p;
  }
  void free(void* p) override {
    for (auto it = owned_.begin(); it != owned_.end(); ++it)
      if (*it == p) {
        std::free(p);
        owned_.erase(it);
        return;
      }
    fail(ErrorCode::kInvalidArgument, "free: pointer was not returned by this communicator's alloc");
  }

  CallInfo all_reduce(const void* in, void* out, std::size_t count, DType t, ReduceOp op, void*,
                      const std::string& algo) override {
    return node_->call(rank_, Op::kAllReduce, in, out, count * dtype_size(t), t, op, algo);
  }
  CallInfo reduce_scatter(const void* in, void* out, std::size_t recvcount, DType t, ReduceOp op, void*,
                          const std::string& algo) override {
    return node_->call(rank_, Op::kReduceScatter, in, out, recvcount * dtype_size(t) * std::size_t(world()), t, op,
                       algo);
  }
  CallInfo all_gather(const void* in, void* out, std::size_t sendcount, DType t, void*,
                      const std::string& algo) override {
    return node_->call(rank_, Op::kAllGather, in, out, sendcount * dtype_size(t) * std::size_t(world()), t,
                       ReduceOp::kSum, algo);
  }
  // Every call completes when the last rank makes it: nothing is ever in flight afterwards.
  void synchronize() override {}

 private:
  std::shared_ptr<Node> node_;
  int rank_;
  std::vector<void*> owned_;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> sim_node(const SimOptions& options) {
  auto node = std::make_shared<Node>(options);
  std::vector<std::unique_ptr<Communicator>> out;
  for (int r = 0; r < node->world(); ++r) out.push_back(std::make_unique<SimCommunicator>(node, r));
  return out;
}

}  // namespace symm
