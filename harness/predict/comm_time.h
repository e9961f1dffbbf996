// comm_time.h — how long one gradient all-reduce takes in the step model: the contract's α-β
// times (contract/link_model.h's modelled_seconds, the very function the trainers' MPI link
// emulation holds each all-reduce for), on the link given to predict.
//
//   ring, native   2(K-1) · (α + (B/K)/β)           native is modelled as the ring
//   star           2(K-1) · (α + B/β)                everything through rank 0
//   hier           two tiers, G ranks per node, N = ⌈K/G⌉ nodes: the ring inside each node over
//                  --intra-link, then a ring of one node's payload across nodes over --link
//                  (contract/link_model.h states the formula; K ≤ G is one node)
// A reduce-scatter or an all-gather (the sharded mode) is its own pattern, not a factor of the
// all-reduce: (K-1) · (α + (B/K)/β), contract/link_model.h's modelled_shard_seconds, the time
// the link emulation holds each for (hier: each step as long as its slowest hop).
#pragma once

#include <cstddef>
#include <string>

#include "contract/link_model.h"

namespace dpscale::predict {

// --algo's value: the contract's algorithm names. OptionError("--algo", ...) if unknown.
AllreduceAlgo parse_algo_option(const std::string& name);

struct CommModel {
  AllreduceAlgo algo = AllreduceAlgo::ring;
  LinkModel link;            // the (inter-node) link, with its dilation
  LinkModel intra;           // hier: the link inside a node (same dilation as `link`)
  int gpus_per_node = 8;     // hier: G

  // Modelled seconds of one all-reduce of `nbytes` over `k` ranks (0 for k = 1 or no link).
  double seconds(size_t nbytes, int k) const;
  // Modelled seconds of one reduce-scatter or all-gather of an `nbytes` buffer over `k` ranks.
  double shard_seconds(size_t nbytes, int k) const;
};

}  // namespace dpscale::predict
