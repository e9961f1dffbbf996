// twonode_support.h — running jobs across the two emulated nodes of scripts/emulated-nodes.sh
// (netns dpnode0 and dpnode1 joined by a tbf-capped veth pair) from a test.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dpscale::test {

// Why the two nodes are not available (a reason for GTEST_SKIP: not root, no `ip`, namespaces
// refused), or nullopt when they are up. When namespaces CAN be made here but are not up, that
// is a test failure, not a skip: the CTest fixture (twonode_up) should have made them; this
// returns "" then, and the caller fails.
std::optional<std::string> twonode_unavailable();

// argv of scripts/ns-mpirun -np K --npernode PER_NODE EXE ARGS... (ranks node by node:
// 0..PER_NODE-1 on dpnode0, the next on dpnode1). per_node 0: --map-by node (round robin).
std::vector<std::string> ns_mpirun_argv(int np, int per_node, const std::string& exe, const std::vector<std::string>& args);

// The repository's scripts/ directory.
std::string scripts_dir();

}  // namespace dpscale::test
