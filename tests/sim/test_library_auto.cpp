// The library's "auto" on the simulator (include/symmcoll/symmcoll.h): the communicator asks
// the table of its own machine file and launch mode, and runs the chosen block count.
#include <gtest/gtest.h>
#include <symmcoll/symmcoll.h>

#include <string>
#include <vector>

#include "backends/sim/sim.h"

namespace symm {
namespace {

TEST(LibraryAuto, SimCommunicatorRunsTheTablesChoiceWithItsBlocks) {
  const std::string kMachine = "h100x2";
  int differs = 0;  // cells whose table block count is not the default (the blocks are then seen)
  // bf16 all-reduce sizes in the h100x2 table (its tune runs chose block counts of their own at
  // the small sizes; h200x4's newest runs measured every size at the defaults); which of them
  // carry a non-default block count moves with the committed runs, so several are tried and one must.
  for (const std::size_t bytes :
       {std::size_t(4) << 10, std::size_t(8) << 10, std::size_t(16) << 10, std::size_t(64) << 10})
    for (const bool graph : {true, false}) {
      const std::size_t count = bytes / 2;
      SimOptions o;
      o.machine = kMachine;
      o.graph = graph;
      auto ranks = sim_node(o);
      const int world = ranks[0]->world();
      const std::vector<char> buffer(bytes, 0);
      std::vector<std::vector<char>> in(std::size_t(world), buffer), out(std::size_t(world), buffer);
      CallInfo info;
      for (int r = 0; r < world; ++r)
        info = ranks[std::size_t(r)]->all_reduce(in[std::size_t(r)].data(), out[std::size_t(r)].data(), count,
                                                 DType::kBF16);
      ASSERT_TRUE(info.complete);
      const AutoChoice want = auto_choose(AutoQuery{kMachine, Op::kAllReduce, bytes, world, DType::kBF16, graph});
      EXPECT_EQ(info.algo, want.algo) << want.why;
      EXPECT_EQ(&choose_algo(Op::kAllReduce, bytes, world, DType::kBF16, kMachine, graph), want.algo);
      ASSERT_NE(want.blocks, 0) << "the fixture size should carry a measured block count: " << want.why;
      // The call ran the table's block count (CallInfo::blocks) and predicts what that count does.
      EXPECT_EQ(info.blocks, want.blocks) << (graph ? "graph" : "eager");
      sim::RunSpec s;
      s.machine = sim::Machine::by_name(kMachine);
      s.world = world;
      s.algo = want.algo;
      s.bytes = bytes;
      s.graph = graph;
      s.timing_only = true;
      s.blocks = want.blocks;
      EXPECT_DOUBLE_EQ(info.predicted_us, sim::run(s).time_us) << (graph ? "graph" : "eager");
      if (want.blocks != want.algo->default_blocks(bytes, world)) ++differs;
    }
  EXPECT_GT(differs, 0) << "the table's block count is the default at every size tried: add another";
}

}  // namespace
}  // namespace symm
