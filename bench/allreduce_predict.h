// allreduce_predict.h — bench_allreduce --predict: each MPI measurement beside the
// α-β time contract/link_model.h gives for it on the job's nodes, for runs over a real or
// tc-capped link (the emulated nodes of scripts/emulated-nodes.sh), where nothing is held.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "contract/link_model.h"

namespace dpscale::bench {

struct Prediction {
  std::string algo;
  size_t nbytes = 0;
  double measured_s = 0.0;  // mean over iterations of the slowest rank (as the table)
  double model_s = 0.0;     // modelled_seconds(algo, link, nbytes, shape)
};

// '#'-prefixed lines (nccl-tests' convention for non-data lines): the link and shape, then one
// line per measurement: algorithm, bytes, measured µs, model µs, measured/model.
void print_predictions(std::FILE* out, const LinkModel& link, NodeShape shape, const std::vector<Prediction>& rows);

}  // namespace dpscale::bench
