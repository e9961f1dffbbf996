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

namespace {

// Two tiers: --intra-link inside a node (per rank), --link between nodes (one per node).
LinkModel two_tier(const CommModel& c, int g) {
  LinkModel two = c.intra;
  two.name = "two-tier";
  two.two_tier = true;
  two.inter_alpha_us = c.link.alpha_us;
  two.inter_gbps = c.link.gbps;
  two.ranks_per_node = g;
  two.dilation = c.link.dilation;
  return two;
}

}  // namespace

double CommModel::seconds(size_t nbytes, int k) const {
  if (!link.enabled() || k <= 1) return 0.0;
  if (algo != AllreduceAlgo::hier) return modelled_seconds(algo, link, nbytes, NodeShape{1, k});
  const int g = std::min(gpus_per_node, k);
  return modelled_seconds(AllreduceAlgo::hier, two_tier(*this, g), nbytes, NodeShape{(k + g - 1) / g, g});
}

double CommModel::shard_seconds(size_t nbytes, int k) const {
  if (!link.enabled() || k <= 1) return 0.0;
  if (algo != AllreduceAlgo::hier) return modelled_shard_seconds(link, nbytes, NodeShape{1, k});
  const int g = std::min(gpus_per_node, k);
  return modelled_shard_seconds(two_tier(*this, g), nbytes, NodeShape{(k + g - 1) / g, g});
}

}  // namespace dpscale::predict
