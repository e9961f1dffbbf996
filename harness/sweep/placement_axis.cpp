// placement_axis.cpp — expanding `nodes` / `ranks_per_node` at one world size (placement_axis.h).
#include "harness/sweep/placement_axis.h"

#include <string>

#include "core/errors.h"

namespace dpscale {

namespace {
std::string list(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return "[" + s + "]";
}
}  // namespace

std::vector<Placement> placements_for(const std::vector<int>& nodes, const std::vector<int>& ranks_per_node, int k) {
  const std::string K = std::to_string(k);
  std::vector<Placement> out;
  if (nodes.empty() && ranks_per_node.empty()) return {Placement{}};
  if (!nodes.empty() && ranks_per_node.empty()) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (k % nodes[i] != 0) {
        throw InputError("'nodes[" + std::to_string(i) + "]' " + std::to_string(nodes[i]) +
                         " nodes do not divide world size " + K + " (each node takes K/N ranks)");
      }
      out.push_back({nodes[i], k / nodes[i]});
    }
    return out;
  }
  if (nodes.empty()) {
    for (size_t i = 0; i < ranks_per_node.size(); ++i) {
      if (k % ranks_per_node[i] != 0) {
        throw InputError("'ranks_per_node[" + std::to_string(i) + "]' " + std::to_string(ranks_per_node[i]) +
                         " ranks per node do not divide world size " + K + " (K/R nodes each take R ranks)");
      }
      out.push_back({k / ranks_per_node[i], ranks_per_node[i]});
    }
    return out;
  }
  for (int n : nodes) {
    for (int r : ranks_per_node) {
      if (n * r == k) out.push_back({n, r});
    }
  }
  if (out.empty()) {
    throw InputError("'nodes' " + list(nodes) + " x 'ranks_per_node' " + list(ranks_per_node) +
                     " has no placement of world size " + K + " (N x R must equal K)");
  }
  return out;
}

}  // namespace dpscale
