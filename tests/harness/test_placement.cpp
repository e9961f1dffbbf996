// test_placement.cpp — the placement axis and where a placed point runs: the placements of each
// world size, the launchers' command lines for them (mpirun --npernode, a Slurm job step), and
// the nodes and slots read from a hostfile or a Slurm allocation, against which points are
// refused (the command-line refusals, exit 2 and one line, are in tests/slurm).
#include <gtest/gtest.h>

#include "harness/sweep/capacity.h"
#include "harness/sweep/config.h"
#include "harness/sweep/launcher.h"
#include "harness/sweep/placement_axis.h"

namespace dpscale {
namespace {

using V = std::vector<std::string>;

std::vector<std::pair<int, int>> pairs(const std::vector<Placement>& ps) {
  std::vector<std::pair<int, int>> out;
  for (const Placement& p : ps) out.push_back({p.nodes, p.ranks_per_node});
  return out;
}

TEST(PlacementAxis, EachListDerivesTheOtherAndBothPair) {
  using P = std::vector<std::pair<int, int>>;
  EXPECT_EQ(pairs(placements_for({1, 2, 4}, {}, 4)), (P{{1, 4}, {2, 2}, {4, 1}}));
  EXPECT_EQ(pairs(placements_for({}, {1, 2}, 4)), (P{{4, 1}, {2, 2}}));
  EXPECT_EQ(pairs(placements_for({1, 2}, {1, 2, 4}, 4)), (P{{1, 4}, {2, 2}}));
  EXPECT_EQ(pairs(placements_for({}, {}, 4)), (P{{0, 0}}));
  EXPECT_THROW(placements_for({3}, {}, 4), InputError);
  EXPECT_THROW(placements_for({}, {3}, 4), InputError);
  EXPECT_THROW(placements_for({2}, {1}, 4), InputError);
}

TEST(PlacementAxis, ConfigExpandsOneRunPerPlacementWithItsOwnRunId) {
  const SweepConfig c = parse_config(
      R"({"models": ["small"], "modes": ["single", "naive"], "world_sizes": [2, 4], "nodes": [1, 2],
          "options": {"batch_size": 256}})",
      "c.json");
  V ids;
  for (const SweepRun& p : expand(c, 1)) ids.push_back(p.run_id("c"));
  EXPECT_EQ(ids, (V{"c/small-single-k1-r0", "c/small-naive-k2-p1x2-r0", "c/small-naive-k2-p2x1-r0",
                    "c/small-naive-k4-p1x4-r0", "c/small-naive-k4-p2x2-r0"}));
}

TEST(PlacementLaunch, MpirunFillsHostsBySlurmStepsAskForNodes) {
  LaunchOptions m;
  m.as_root = false;
  EXPECT_EQ(launch_argv(m, "t", Mode::naive, 4, {"-x"}, 2, 2),
            (V{"mpirun", "--oversubscribe", "--bind-to", "none", "--npernode", "2", "-np", "4", "t", "-x"}));
  LaunchOptions s;
  s.launcher = "srun";
  s.srun_args = {"--gpus-per-task=1"};
  EXPECT_EQ(launch_argv(s, "t", Mode::naive, 4, {}, 2, 2),
            (V{"srun", "--mpi=pmix", "--kill-on-bad-exit=1", "-N", "2", "--ntasks-per-node", "2", "-n", "4",
               "--gpus-per-task=1", "t"}));
  EXPECT_EQ(launch_argv(s, "t", Mode::single, 1, {}),
            (V{"srun", "--mpi=none", "--kill-on-bad-exit=1", "-N", "1", "-n", "1", "--gpus-per-task=1", "t"}));
}

SweepRun placed(int k, int n) {
  SweepRun p;
  p.point.model = "small";
  p.point.mode = Mode::naive;
  p.point.world_size = k;
  p.point.nodes = n;
  p.point.ranks_per_node = k / n;
  return p;
}

TEST(PlacementCapacity, HostfileAndAllocationBoundNodesAndSlots) {
  const NodeCapacity h = hostfile_capacity("# two nodes\na slots=4\nb slots=1 # small\na slots=2\nc\n", "H");
  EXPECT_EQ(h.slots, (std::vector<int>{6, 1, kUnbounded}));
  EXPECT_NO_THROW(check_capacity({placed(4, 2)}, h));  // a and c take 2 each
  EXPECT_THROW(check_capacity({placed(4, 4)}, hostfile_capacity("a slots=4\nb slots=4\n", "H")), InputError);
  EXPECT_THROW(check_capacity({placed(8, 2)}, hostfile_capacity("a slots=4\nb slots=3\n", "H")), InputError);

  const NodeCapacity s = slurm_capacity("9", "n[0-3]", "4", "4,2(x3)");
  EXPECT_EQ(s.slots, (std::vector<int>{4, 2, 2, 2}));
  EXPECT_NO_THROW(check_capacity({placed(8, 4)}, s));
  EXPECT_THROW(check_capacity({placed(8, 2)}, s), InputError);  // 2 nodes of 4 slots: only one
  try {
    check_capacity({placed(4, 4)}, slurm_capacity("9", "n[0-1]", "2", "4(x2)"));
    FAIL() << "4 nodes from an allocation of 2";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "small naive K=4 4x1 needs 4 nodes; the Slurm allocation (job 9: n[0-1], CPUs per node 4(x2)) has 2");
  }
  EXPECT_THROW(slurm_capacity("9", "n0", "2", "4"), InputError);  // names one node of two
}

// A hostfile Open MPI cannot use is refused with its line before anything runs (mpirun itself
// says "parse error" only when the first data-parallel run starts, or takes a stray word for a
// host it then fails to reach). Controls: the forms Open MPI reads.
TEST(PlacementCapacity, AGarbageHostfileIsRefusedWithItsLine) {
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"this is @@ garbage !!\n", "H:1: 'is' is not KEY=VALUE"},
           {"a slots=2\n@@\n", "H:2: '@@' is not a host name"},
           {"a slots=2 extra\n", "H:1: 'extra' is not KEY=VALUE"},
           {"a slots=x\n", "H:1: slots= 'x' must be a whole number"},
           {"a colour=blue\n", "H:1: 'colour=blue' is not KEY=VALUE"},
           {"# nothing but a comment\n\n", "H: names no host"}}) {
    SCOPED_TRACE(text);
    try {
      hostfile_capacity(text, "H");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(hostfile_capacity("user@node-1.example slots = 2\nnode-2 slots=1 max_slots=3 port=22 # two\n", "H").slots,
            (std::vector<int>{2, 1}));
  EXPECT_EQ(hostfile_capacity("10.0.0.1\n", "H").slots, (std::vector<int>{kUnbounded}));
}

}  // namespace
}  // namespace dpscale
