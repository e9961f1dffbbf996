// comm_time.h — how long one gradient all-reduce takes in the step model: the α-β models of
// textbook 15.2 over contract/link_model.h's link (dilation included).
//
//   ring   2(K-1) · (α + (B/K)/β)                       bandwidth-optimal; MPI "native" is modelled so
//   star   2(K-1) · (α + B/β)                            everything through rank 0 (the workshop's naive way)
//   hier   two tiers, G ranks per node, N = ⌈K/G⌉ nodes:
//            2(G-1) · (α_in + (B/G)/β_in)                reduce-scatter + all-gather inside each node
//          + 2(N-1) · (α + (B/N)/β)                      ring across nodes of one node's payload B,
//                                                        through the node's one (shared) network link
//          K ≤ G is one node (the intra ring only); G = 1 is the plain ring over the network link.
#pragma once

#include <cstddef>
#include <string>

#include "contract/link_model.h"

namespace dpscale::predict {

enum class CommAlgo { ring, star, hier };

CommAlgo parse_comm_algo(const std::string& name);  // OptionError("--algo", ...) if unknown
const char* comm_algo_name(CommAlgo a);

struct CommModel {
  CommAlgo algo = CommAlgo::ring;
  LinkModel link;            // the (inter-node) link, with its dilation
  LinkModel intra;           // hier: the link inside a node (same dilation as `link`)
  int gpus_per_node = 8;     // hier: G

  // Modelled seconds of one all-reduce of `nbytes` over `k` ranks (0 for k = 1 or no link).
  double seconds(size_t nbytes, int k) const;
};

}  // namespace dpscale::predict
