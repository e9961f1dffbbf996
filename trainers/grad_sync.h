// grad_sync.h — GradSync, the only thing the four trainers disagree on.
//
//   trainer               on_grad_ready(tensor)                      complete()
//   train_single_gpu      nothing                                     nothing
//   train_dp_naive        nothing                                     all-reduce every tensor (or
//                                                                     one buffer, --fused), wait
//   train_dp_interleaved  launch an async all-reduce of that tensor   wait for all
//   train_ddp_bucketed    mark ready; a complete bucket launches one  wait for all
//                         async all-reduce of its slice, in place
//
// finish() is the same for all: it times complete() on the device's compute stream (an
// IntervalTimer: the host clock on the CPU, events on a GPU, never a host synchronisation inside
// the interval). drain() then lets the communicator wait on the host; the loop calls it only
// after it has queued the update and the loss copy, so on a GPU the stream has work while the
// host polls and that idle is not booked as compute. Which record field the measured wait fills
// (naive's comm_s, the others' exposed_comm_s) is the mode table's word (contract/modes.h).
//
// Gradients are already scaled by 1/global_batch in the loss, so after the sum all-reduce every
// gradient holds the global mean (the workshop's "sum, then divide by K", without the extra
// pass). The loss slot that follows the last-produced tensor rides in the last all-reduce.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "contract/trainer_options.h"
#include "models/interval_timer.h"
#include "models/model.h"
#include "models/optimizer.h"

namespace dpscale {

// What a strategy does per step, for the record.
struct SyncStats {
  int calls_per_step = 0;
  int64_t floats_per_step = 0;       // all-reduced elements, the loss slot included (and the
                                     // layout's padding inside a fused buffer or a bucket)
  int64_t bytes_per_step = 0;        // what they send in the wire format (wire_bytes)
  std::optional<int> n_buckets;
  std::vector<int64_t> bucket_bytes;  // each bucket's tensors in the wire format (the slot not counted)
  std::optional<double> bucket_cap_mb, first_bucket_mb;
  // What the rank holds, and what the sharded stages send besides all-reduces.
  int shard_stage = 0;
  std::optional<int> prefetch_units;  // stage 3's
  int64_t param_bytes = 0, grad_bytes = 0, optim_bytes = 0;
  int64_t reduce_scatter_bytes_per_step = 0, allgather_bytes_per_step = 0;
};

class GradSync : public GradListener {
 public:
  ~GradSync() override;
  virtual void begin_step() {}
  // Returns when every gradient (and the loss slot) holds the mean over all ranks, as far as
  // compute queued afterwards can tell (on a GPU the host may return earlier).
  void finish();
  // The host waits for this step's all-reduces (NCCL: polls its errors, recycles the events).
  // Once per step, after finish() and after the step's later device work is queued.
  void drain();
  virtual SyncStats stats() const = 0;
  // stats() with what this rank holds: the model's parameter and gradient buffers and the
  // optimizer's state, as allocated (the record's *_bytes_per_rank).
  SyncStats report() const;

  // The gradients' wire format (--grad-comm): set on the communicator, with the loss slot as the
  // one element it sums in fp32. Once, before the first step; fp32 until then.
  void use_grad_format(GradFormat f);
  // Bytes the all-reduce of `count` floats at `data` (in the gradient buffer) sends: the wire
  // format's, the loss slot in fp32 when the range holds it (comm/grad_format.h). Every byte
  // count of the record is this.
  int64_t wire_bytes(const float* data, int64_t count) const;

  // The optimizer (--optimizer), with state for what this rank updates (state_floats()):
  // made by make_grad_sync, before the first step, so no step allocates.
  void use_optimizer(const OptimizerConfig& cfg);
  // One optimizer step, after finish(): every parameter from its reduced gradient (a sharded
  // strategy: its shard, then what the other ranks need of it). `check_finite`: the pass is the
  // step's finite check too (Model::nonfinite_flag).
  virtual void update(bool check_finite);
  int64_t optimizer_state_bytes() const { return optimizer_ ? optimizer_->state_bytes() : 0; }

  // Seconds finish() waited since the last take: the whole all-reduce phase (naive) or the
  // exposed wait (interleaved, bucketed). Waits for the device to report them.
  double take_wait_seconds() { return timer_ ? timer_->take_seconds() : 0.0; }
  // Seconds the step waited for all-gathers since the last take (sharded; 0 for the others).
  virtual double take_allgather_wait_seconds() { return 0.0; }
  // After the epochs, on every rank (a collective for a strategy that keeps parameters
  // sharded): the parameters whole in the model's buffer from here on, for the replica check,
  // the evaluation and the checkpoint.
  virtual void end_training() {}

 protected:
  // `comm` null: nothing to synchronise (train_single_gpu), and nothing is timed.
  GradSync(Model& model, Communicator* comm);
  // The strategy's part of finish(): launch what is left and wait for all of it.
  virtual void complete() = 0;

  // Elements of the flat buffer this rank's optimizer updates (and holds state for).
  virtual int64_t state_floats() const { return model_.layout().param_buffer_count(); }
  // Bytes of parameters and gradients the rank holds (report()): the model's whole buffers,
  // unless the strategy releases parts of them (stage 3 counts what it left resident).
  virtual int64_t resident_param_bytes() const;
  virtual int64_t resident_grad_bytes() const;

  Model& model_;
  Communicator* comm_;
  GradFormat format_ = GradFormat::fp32;
  std::unique_ptr<Optimizer> optimizer_;

 private:
  // The collective watchdog's words for an all-reduce of the gradient buffer: which tensor or
  // bucket, which step (communicator.h, Namer). Read by the waiting thread on a timeout only.
  std::string name_allreduce(const float* data, size_t count) const;

  std::unique_ptr<IntervalTimer> timer_;
  std::atomic<int64_t> steps_done_{0};  // drain() calls, warm-up included
};

// Elements one all-reduce covers: the tensors' `count`, plus the loss slot when the unit ends
// with the last tensor backward produces.
int64_t count_with_loss_slot(const ParamLayout& layout, int last_tensor, int64_t count);

}  // namespace dpscale
