// step_observer.h — what the training loop tells whoever instruments its timed steps, so the
// loop needs nothing of the instruments themselves (trainers/diagnosis/step_probe.h, StepProbe,
// is the one there is; the diagnosis sits above the loop and implements this).
//
//   batch(b)         the rows the step trains on (a staged copy of the same rows, or the data)
//   compute_begin()  before forward   ┐ the step's compute interval
//   compute_end()    after backward   ┘
//   backward_begin() between loss and backward
//   sync_done()      after GradSync::finish()
//   step_drained()   after GradSync::drain(): the step's all-reduces are complete
//   optimizer_begin() / optimizer_end()  around the update
//   take_epoch_wait()  after each epoch: what the rank's threads waited for a CPU
//   on_grad_ready    (GradListener) stands between backward and the GradSync: it must pass
//                    every gradient on to the sync
#pragma once

#include <cstdint>

#include "models/model.h"

namespace dpscale {

class StepObserver : public GradListener {
 public:
  struct Batch {
    const float* x;
    const int32_t* y;
  };
  ~StepObserver() override = default;
  // As the ranks leave the barrier before the first timed step.
  virtual void start() = 0;
  virtual Batch batch(int64_t batch_index) = 0;
  virtual void compute_begin() = 0;
  virtual void backward_begin() = 0;
  virtual void compute_end() = 0;
  virtual void sync_done() = 0;
  virtual void step_drained() = 0;
  virtual void optimizer_begin() = 0;
  virtual void optimizer_end() = 0;
  // How long the rank's threads were runnable but not running in the epoch just ended, and its
  // involuntary context switches (the contention the diagnosis measures). Once per epoch.
  struct EpochWait {
    double run_delay_s = 0.0;
    int64_t involuntary_switches = 0;
  };
  virtual EpochWait take_epoch_wait() = 0;
};

}  // namespace dpscale
