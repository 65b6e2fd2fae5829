// A tiny interpreter of host plans (core/plan.h) for unit tests: `world` ranks in one process,
// each with streams of queued items, run by a deterministic scheduler until every queue is
// empty. Data is real (a per-rank heap with the same layout on every rank), so a plan's result
// can be checked against a float64 reference. Not the simulator (no time): it checks the
// plans' ordering logic only.
//
// Scheduling policies: kMainFirst always runs a runnable item of the lowest stream index first
// (compute before copies: a GEMM that does not wait for its flag reads data that has not been
// copied yet), kSideFirst the highest. A wait that can never pass is a deadlock error; a flag
// written while still set (not consumed), a wait_event before its record, or a copy that is
// not whole 16-byte vectors throws.
#pragma once

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/algos/copy_local.h"
#include "core/algos/local_reduce_ring.h"
#include "core/algos/mm_rs_gemm_ce_acc.h"
#include "core/partition.h"
#include "core/plan.h"

namespace symm::testing {

enum class Policy { kMainFirst, kSideFirst };

class PlanWorld {
 public:
  PlanWorld(int world, std::size_t heap_bytes, int streams)
      : world_(world),
        streams_(streams),
        heaps_(std::size_t(world), std::vector<char>(heap_bytes, 0)),
        flags_(std::size_t(world), std::vector<uint32_t>(pad::kPadSlots, 0)),
        queues_(std::size_t(world), std::vector<std::deque<Item>>(std::size_t(streams))),
        recorded_(std::size_t(world)) {}

  char* heap(int r) { return heaps_[std::size_t(r)].data(); }
  int world() const { return world_; }
  int streams() const { return streams_; }
  bool drop_data_waits = false;  // the mutant: waits on data flags pass at once (and consume nothing)

  // One rank's host context (core/plan.h's verbs), queueing into this world.
  class Host {
   public:
    Host(PlanWorld& w, int rank) : w_(w), me_(rank) {}
    int rank() const { return me_; }
    int world() const { return w_.world_; }
    int streams() const { return w_.streams_; }
    template <class T>
    T* peer(T* p, int r) const {
      const char* base = w_.heap(me_);
      const std::size_t off = std::size_t(reinterpret_cast<const char*>(p) - base);
      if (off >= w_.heaps_[0].size()) throw std::logic_error("peer() of an address outside the heap");
      return reinterpret_cast<T*>(w_.heap(r) + off);
    }
    template <class Program, class T>
    void launch(int s, const CollArgs& a, int blocks) {
      static_assert(std::is_same_v<Program, LocalReduceRing> || std::is_same_v<Program, SumPeerSlots> ||
                        std::is_same_v<Program, CopyLocal>,
                    "the interpreter runs the local plan kernels only (local_reduce_ring, sum_peer_slots, copy_local)");
      const int me = me_, n = w_.world_;
      push(s, [a, blocks, me, n] {
        for (int b = 0; b < blocks; ++b) {
          BlockCtx ctx{me, n, blocks, b};
          Program::template run<T>(ctx, a);
        }
      });
    }
    void copy_engine(int s, void* dst, const void* src, std::size_t bytes) {
      if (bytes % kVecBytes) throw std::logic_error("copy_engine of " + std::to_string(bytes) + " bytes");
      push(s, [=] { std::memmove(dst, src, bytes); });
    }
    void write_flag(int s, int peer, uint32_t slot, uint32_t value) {
      PlanWorld& w = w_;
      push(s, [&w, peer, slot, value] {
        uint32_t& f = w.flags_[std::size_t(peer)][slot];
        if (f != 0) throw std::logic_error("write_flag on a flag not consumed (slot " + std::to_string(slot) + ")");
        f = value;
      });
    }
    void wait_flag(int s, uint32_t slot, uint32_t value) {
      const bool data = slot >= pad::plan_flag(pad::kPlanData, 0, 0);
      if (w_.drop_data_waits && data) return;
      Item it;
      uint32_t* f = &w_.flags_[std::size_t(me_)][slot];
      it.ready = [f, value] { return *f == value; };
      it.run = [f] { *f = 0; };
      w_.queues_[std::size_t(me_)][std::size_t(s)].push_back(std::move(it));
    }
    void record(int s, int e) {
      const std::size_t id = w_.next_record_++;
      auto& rec = w_.recorded_[std::size_t(me_)];
      last_record_[e] = id;
      push(s, [&rec, id] { rec.push_back(id); });
    }
    void wait_event(int s, int e) {
      auto found = last_record_.find(e);
      if (found == last_record_.end()) throw std::logic_error("wait_event before its record");
      const std::size_t id = found->second;
      auto& rec = w_.recorded_[std::size_t(me_)];
      Item it;
      it.ready = [&rec, id] {
        for (std::size_t x : rec)
          if (x == id) return true;
        return false;
      };
      it.run = [] {};
      w_.queues_[std::size_t(me_)][std::size_t(s)].push_back(std::move(it));
    }
    void gemm(int s, const GemmArgs& g) {
      push(s, [g] {
        if (g.dtype == DType::kBF16)
          run_gemm<bf16>(g);
        else
          run_gemm<fp16>(g);
      });
    }

   private:
    void push(int s, std::function<void()> f) {
      Item it;
      it.ready = [] { return true; };
      it.run = std::move(f);
      w_.queues_[std::size_t(me_)][std::size_t(s)].push_back(std::move(it));
    }
    template <class T>
    static void run_gemm(const GemmArgs& g) {
      const T* a = static_cast<const T*>(g.a);
      const T* b = static_cast<const T*>(g.b);
      T* c = static_cast<T*>(g.c);
      const T* c_in = static_cast<const T*>(g.c_in);
      std::vector<float> row(std::size_t(g.n));
      for (int i = 0; i < g.m; ++i) {
        for (int j = 0; j < g.n; ++j)
          row[std::size_t(j)] = c_in ? to_float(c_in[std::size_t(i) * g.ldc + std::size_t(j)]) : 0.0f;
        for (int p = 0; p < g.k; ++p) {
          const float x = to_float(a[std::size_t(i) * g.lda + std::size_t(p)]);
          for (int j = 0; j < g.n; ++j) row[std::size_t(j)] += x * to_float(b[std::size_t(p) * g.ldb + std::size_t(j)]);
        }
        for (int j = 0; j < g.n; ++j) c[std::size_t(i) * g.ldc + std::size_t(j)] = from_float<T>(row[std::size_t(j)]);
      }
    }
    PlanWorld& w_;
    int me_;
    std::map<int, std::size_t> last_record_;
  };

  // Runs every queued item; throws on a deadlock (naming the stuck rank and stream).
  void run(Policy p) {
    for (;;) {
      bool any = false, progressed = false;
      for (int i = 0; i < streams_ && !progressed; ++i) {
        const int s = p == Policy::kMainFirst ? i : streams_ - 1 - i;
        for (int r = 0; r < world_ && !progressed; ++r) {
          auto& q = queues_[std::size_t(r)][std::size_t(s)];
          if (q.empty()) continue;
          any = true;
          if (!q.front().ready()) continue;
          Item it = std::move(q.front());
          q.pop_front();
          it.run();
          progressed = true;
        }
      }
      if (!any) return;
      if (!progressed) {
        for (int r = 0; r < world_; ++r)
          for (int s = 0; s < streams_; ++s)
            if (!queues_[std::size_t(r)][std::size_t(s)].empty())
              throw std::runtime_error("deadlock: rank " + std::to_string(r) + " stream " + std::to_string(s) +
                                       " waits forever");
      }
    }
  }

 private:
  struct Item {
    std::function<bool()> ready;
    std::function<void()> run;
  };
  // The device-program context local_reduce_ring needs (core/verbs.h's reduce).
  struct BlockCtx {
    static constexpr int kWorldLimit = symm::kPadWorld;
    int r, n, nb, b;
    int rank() const { return r; }
    int world() const { return n; }
    int blocks() const { return nb; }
    int block() const { return b; }
    void copy(void* dst, const void* src, std::size_t bytes) { std::memmove(dst, src, bytes); }
    template <class T>
    void reduce(T* dst, const T* const* srcs, int count_srcs, std::size_t count, ReduceOp op) {
      for (std::size_t i = 0; i < count; ++i) {
        float acc = to_float(srcs[0][i]);
        for (int j = 1; j < count_srcs; ++j) acc = combine(acc, to_float(srcs[j][i]), op);
        dst[i] = from_float<T>(acc);
      }
    }
  };

  int world_, streams_;
  std::vector<std::vector<char>> heaps_;
  std::vector<std::vector<uint32_t>> flags_;
  std::vector<std::vector<std::deque<Item>>> queues_;
  std::vector<std::vector<std::size_t>> recorded_;
  std::size_t next_record_ = 0;
};

}  // namespace symm::testing
