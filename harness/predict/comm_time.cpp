// comm_time.cpp — the step model's all-reduce time: contract/link_model.h's modelled_seconds.
#include "comm_time.h"

#include <algorithm>

#include "core/errors.h"

namespace dpscale::predict {

AllreduceAlgo parse_algo_option(const std::string& name) {
  try {
    return parse_allreduce_algo(name);
  } catch (const OptionError& e) {
    throw OptionError("--algo", e.complaint());
  }
}

double CommModel::seconds(size_t nbytes, int k) const {
  if (!link.enabled() || k <= 1) return 0.0;
  if (algo != AllreduceAlgo::hier) return modelled_seconds(algo, link, nbytes, NodeShape{1, k});
  // Two tiers: --intra-link inside a node (per rank), --link between nodes (one per node).
  const int g = std::min(gpus_per_node, k);
  LinkModel two = intra;
  two.name = "two-tier";
  two.two_tier = true;
  two.inter_alpha_us = link.alpha_us;
  two.inter_gbps = link.gbps;
  two.ranks_per_node = g;
  two.dilation = link.dilation;
  return modelled_seconds(AllreduceAlgo::hier, two, nbytes, NodeShape{(k + g - 1) / g, g});
}

}  // namespace dpscale::predict
