// option_rules.cpp — the rules of option_rules.h.
#include "option_rules.h"

#include "contract/link_model.h"
#include "core/errors.h"

namespace dpscale {

void check_option_rules(const TrainOptions& o, int world_size) {
  const LinkModel link = parse_link(o.link);
  if (link.ranks_per_node > 0 && world_size % link.ranks_per_node != 0) {
    throw InputError("--link " + o.link + ": ranks-per-node=" + std::to_string(link.ranks_per_node) +
                     " does not divide the " + std::to_string(world_size) + " ranks into whole nodes");
  }
  if (o.allreduce == "hier" && o.grad_comm != "fp32") {
    throw InputError("--grad-comm " + o.grad_comm + " does not combine with --allreduce hier (use ring, star or native)");
  }
}

}  // namespace dpscale
