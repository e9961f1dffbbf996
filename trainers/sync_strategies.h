// sync_strategies.h — constructors of the data-parallel GradSync strategies, one file each
// (sync_naive.cpp, sync_interleaved.cpp, sync_bucketed.cpp, sync_sharded.cpp,
// sync_sharded_params.cpp).
#pragma once

#include <memory>

#include "buckets.h"
#include "grad_sync.h"

namespace dpscale {

std::unique_ptr<GradSync> make_naive_sync(Model& model, Communicator& comm, bool fused);
std::unique_ptr<GradSync> make_interleaved_sync(Model& model, Communicator& comm);
std::unique_ptr<GradSync> make_bucketed_sync(Model& model, Communicator& comm, double bucket_cap_mb,
                                             double first_bucket_mb, BucketRule rule);
// sync_sharded.cpp: stage 1, units = bucketed's buckets, all-gathered after the update.
std::unique_ptr<GradSync> make_sharded_sync(Model& model, Communicator& comm, double bucket_cap_mb,
                                            double first_bucket_mb, BucketRule rule);
// sync_sharded_params.cpp: stages 2 (units = bucketed's buckets) and 3 (the model's layers,
// `prefetch_units` gathered ahead), their all-gathers in the next forward.
struct ParamShardSetup {
  int stage = 3;
  int prefetch_units = 1;  // stage 3
  int accum_steps = 1;
  double bucket_cap_mb = 25, first_bucket_mb = 1;  // stage 2's units
  BucketRule rule = BucketRule::strict;
};
std::unique_ptr<GradSync> make_param_sharded_sync(Model& model, Communicator& comm, const ParamShardSetup& setup);

}  // namespace dpscale
