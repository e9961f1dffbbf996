// train_loop.h — the one training loop all four trainers share. Only the GradSync differs.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "grad_sync.h"
#include "session.h"

namespace dpscale {

struct EpochStats {
  double time_s = 0.0;       // this rank's wall time for the epoch (device drained)
  double wait_s = 0.0;       // naive: blocking all-reduce phase; others: exposed wait
  double busy_s = 0.0;       // summed all-reduce durations on the comm thread/stream
  double loss_global = 0.0;  // mean over steps of the global-batch loss
  double loss_local = 0.0;   // mean over steps of this rank's shard loss
  int64_t steps = 0;
};

// Warm-up (untimed, no update), then epochs of steps over the data in order. `barrier` (may be
// empty) lines the ranks up after warm-up so every rank's clock starts together. Throws
// InputError if the loss becomes non-finite (the same step on every rank: it is the global loss).
std::vector<EpochStats> run_training(Session& s, GradSync& sync, Communicator* comm,
                                     const std::function<void()>& barrier);

// Accuracy of the current weights on the test split; nullopt when there is none.
std::optional<double> evaluate_test_accuracy(Session& s);

}  // namespace dpscale
