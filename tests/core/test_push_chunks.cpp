// core/plan.h's push_chunks (the copy-engine push of the collective plans): which stream carries
// which copy and flag. A peer's chunks share one side stream and each flag follows its copy on
// it; peers share the first side stream (PeerStreams::kOne) or go round robin over the side streams
// (PeerStreams::kRoundRobin).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "core/plan.h"

namespace symm {
namespace {

// Records the streams of the copies (by destination peer, decoded from a fake address) and flags.
struct StreamHost {
  int me = 0, n = 2, ns = 3;
  struct Op {
    bool copy;
    int stream, peer;
  };
  std::vector<Op> ops;
  int rank() const { return me; }
  int world() const { return n; }
  int streams() const { return ns; }
  template <class T>
  T* peer(T* p, int) const {
    return p;
  }
  template <class Program, class T>
  void launch(int, const CollArgs&, int) {}
  void copy_engine(int s, void* dst, const void*, std::size_t) {
    ops.push_back({true, s, int(reinterpret_cast<std::uintptr_t>(dst) >> 20) - 1});
  }
  void write_flag(int s, int p, uint32_t, uint32_t) { ops.push_back({false, s, p}); }
  void wait_flag(int, uint32_t, uint32_t) {}
  void record(int, int) {}
  void wait_event(int, int) {}
  void gemm(int, const GemmArgs&) {}
};

void push(StreamHost& h, int chunks, PeerStreams peers) {
  const Chunks ch(std::size_t(chunks) * 4096, 4096);
  ASSERT_EQ(ch.count, chunks);
  push_chunks<PlanFault::kNone>(
      h, ch,
      [](int q, int k) { return reinterpret_cast<char*>((std::uintptr_t(q + 1) << 20) + std::uintptr_t(k) * 4096); },
      [](int, int) { return static_cast<const char*>(nullptr); }, peers);
}

TEST(PushChunks, APeersChunksShareOneSideStreamAndEachFlagFollowsItsCopy) {
  for (PeerStreams peers : {PeerStreams::kOne, PeerStreams::kRoundRobin})
    for (int world : {2, 3, 4, 8})
      for (int streams : {2, 3, 4}) {
        SCOPED_TRACE("world " + std::to_string(world) + " streams " + std::to_string(streams) +
                     (peers == PeerStreams::kOne ? " one stream" : " round robin"));
        StreamHost h;
        h.me = 1, h.n = world, h.ns = streams;
        push(h, 4, peers);
        std::map<int, std::set<int>> streams_of;  // peer -> streams its copies ran on
        std::set<int> used;
        ASSERT_EQ(h.ops.size(), std::size_t(2 * 4 * (world - 1)));
        for (std::size_t i = 0; i < h.ops.size(); i += 2) {
          const StreamHost::Op& c = h.ops[i];
          const StreamHost::Op& f = h.ops[i + 1];
          ASSERT_TRUE(c.copy);
          ASSERT_FALSE(f.copy);
          EXPECT_EQ(f.stream, c.stream) << "a flag not on its copy's stream";
          EXPECT_EQ(f.peer, c.peer);
          EXPECT_NE(c.stream, kMainStream);
          streams_of[c.peer].insert(c.stream);
          used.insert(c.stream);
        }
        for (const auto& [q, s] : streams_of) EXPECT_EQ(s.size(), 1u) << "peer " << q << "'s chunks on several streams";
        if (peers == PeerStreams::kOne) {  // every copy on the first side stream
          EXPECT_EQ(used, std::set<int>{1});
        } else {  // peers spread: as many streams as there are peers, at most every side stream
          EXPECT_EQ(int(used.size()), std::min(world - 1, streams - 1));
        }
      }
}

}  // namespace
}  // namespace symm
