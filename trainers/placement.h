// placement.h — where a job's ranks ran: how many share the busiest node, and the nodes' host
// names. The record carries both beside n_nodes, so a sweep's 2x2 and 1x4 points of K = 4 can be
// told apart from the records alone, whichever launcher (mpirun, srun) placed the ranks.
#pragma once

#include <string>

#include "comm/world.h"

namespace dpscale {

struct RankPlacement {
  int ranks_per_node = 1;  // the most ranks on one node
  std::string nodes;       // host names, comma-separated, in the order of each node's first rank
};

// Collective: every rank calls it (one all-gather of host names and node sizes).
RankPlacement gather_placement(World& world);

}  // namespace dpscale
