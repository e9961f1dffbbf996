// allreduce_predict.cpp — see allreduce_predict.h.
#include "allreduce_predict.h"

namespace dpscale::bench {

void print_predictions(std::FILE* out, const LinkModel& link, NodeShape shape, const std::vector<Prediction>& rows) {
  std::fprintf(out, "# α-β prediction (--predict): %d node(s) x %d rank(s); intra α %.1f us β %.3f GB/s", shape.nodes,
               shape.per_node, link.alpha_us, link.gbps);
  if (link.two_tier) std::fprintf(out, "; inter α %.1f us β %.3f GB/s (one per node)", link.inter_alpha_us, link.inter_gbps);
  std::fprintf(out, "\n#  %-8s %12s %14s %14s %10s\n", "algo", "bytes", "measured_us", "model_us", "meas/model");
  for (const Prediction& p : rows) {
    std::fprintf(out, "#  %-8s %12zu %14.1f %14.1f %10.2f\n", p.algo.c_str(), p.nbytes, p.measured_s * 1e6,
                 p.model_s * 1e6, p.model_s > 0 ? p.measured_s / p.model_s : 0.0);
  }
}

}  // namespace dpscale::bench
