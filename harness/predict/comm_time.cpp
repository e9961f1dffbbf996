// comm_time.cpp — the α-β all-reduce times of the step model (formulas in comm_time.h).
#include "comm_time.h"

#include <vector>

#include "contract/option_values.h"
#include "models/errors.h"

namespace dpscale::predict {

namespace {
const std::vector<std::string>& algo_names() {
  static const std::vector<std::string> names = {"ring", "star", "hier"};  // CommAlgo's order
  return names;
}
}  // namespace

CommAlgo parse_comm_algo(const std::string& name) {
  try {
    return static_cast<CommAlgo>(parse_choice(name, algo_names(), "algorithm"));
  } catch (const ValueError& e) {
    throw OptionError("--algo", e.what());
  }
}

const char* comm_algo_name(CommAlgo a) { return algo_names()[static_cast<size_t>(a)].c_str(); }

double CommModel::seconds(size_t nbytes, int k) const {
  if (!link.enabled() || k <= 1) return 0.0;
  switch (algo) {
    case CommAlgo::ring: return link.ring_seconds(nbytes, k);
    case CommAlgo::star: return link.star_seconds(nbytes, k);
    case CommAlgo::hier: {
      const int g = gpus_per_node < k ? gpus_per_node : k;  // ranks per node
      const int nodes = (k + g - 1) / g;
      // Inside a node: the ring's reduce-scatter and all-gather, 2(G-1) hops of B/G = ring(B, G).
      const double inside = g > 1 ? intra.ring_seconds(nbytes, g) : 0.0;
      // Across nodes: a ring of the whole payload among N nodes (each node's G ranks share its link).
      const double across = nodes > 1 ? link.ring_seconds(nbytes, nodes) : 0.0;
      return inside + across;
    }
  }
  return 0.0;
}

}  // namespace dpscale::predict
