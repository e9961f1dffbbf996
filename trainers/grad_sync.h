// grad_sync.h — GradSync, the only thing the four trainers disagree on.
//
//   trainer               on_grad_ready(tensor)                      finish()
//   train_single_gpu      nothing                                     nothing
//   train_dp_naive        nothing                                     blocking all-reduce of every
//                                                                     tensor (or one, --fused)
//   train_dp_interleaved  launch an async all-reduce of that tensor   wait for all
//   train_ddp_bucketed    mark ready; a complete bucket launches one  wait for all
//                         async all-reduce of its slice, in place
//
// Gradients are already scaled by 1/global_batch in the loss, so after the sum all-reduce every
// gradient holds the global mean (the workshop's "sum, then divide by K", without the extra
// pass). The loss slot that follows the last-produced tensor rides in the last all-reduce.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "models/mlp.h"
#include "options.h"

namespace dpscale {

struct SyncStats {
  int calls_per_step = 0;
  int64_t bytes_per_step = 0;        // all-reduced bytes, the 4-byte loss slot included
  std::optional<int> n_buckets;
  std::vector<int64_t> bucket_bytes;
};

class GradSync : public GradListener {
 public:
  virtual void begin_step() {}
  // Returns when every gradient (and the loss slot) holds the mean over all ranks.
  virtual void finish() = 0;
  virtual SyncStats stats() const = 0;

  // Seconds accumulated by finish() since the last take: the blocking phase (naive) or the
  // exposed wait (interleaved, bucketed). Timed from the moment compute has drained.
  double take_wait_seconds() {
    const double s = wait_s_;
    wait_s_ = 0.0;
    return s;
  }

 protected:
  double wait_s_ = 0.0;
};

// The [offset, offset + count) a sync unit covers: the tensors, plus the loss slot when the
// unit ends with the last tensor backward produces.
int64_t sync_extent(const ParamLayout& layout, int last_tensor, int64_t count);

std::unique_ptr<GradSync> make_grad_sync(const TrainOptions& opts, Mlp& model, Communicator* comm);

}  // namespace dpscale
