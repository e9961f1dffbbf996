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
// sync_sharded.cpp: `stage` 1 or 2, units = bucketed's buckets.
std::unique_ptr<GradSync> make_sharded_sync(Model& model, Communicator& comm, int stage, double bucket_cap_mb,
                                            double first_bucket_mb, BucketRule rule);
// sync_sharded_params.cpp: stage 3, units = the model's layers, `prefetch_units` gathered ahead.
std::unique_ptr<GradSync> make_param_sharded_sync(Model& model, Communicator& comm, int prefetch_units,
                                                  int accum_steps);

}  // namespace dpscale
