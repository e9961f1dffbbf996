// placement_axis.h — the placements a sweep measures at each world size.
//
// A config may name `nodes` (N) and/or `ranks_per_node` (R): K = 4 with nodes [1, 2, 4] runs as
// 1x4, 2x2 and 4x1. With only one of the lists the other follows from K (R = K / N, N = K / R);
// with both, every pair with N x R = K. Each named N (or R) must divide every world size, and
// with both lists every K needs at least one pair: anything else is a config error naming the
// key, before anything runs. With neither list a point has no placement (nodes 0): the launcher
// places the ranks, as before the axis existed.
#pragma once

#include <vector>

namespace dpscale {

struct Placement {
  int nodes = 0;           // 0: none asked for
  int ranks_per_node = 0;
};

// The placements of world size k, in the order the lists name them. Throws InputError.
std::vector<Placement> placements_for(const std::vector<int>& nodes, const std::vector<int>& ranks_per_node, int k);

}  // namespace dpscale
