// train_loop.h — the one training loop all four trainers share. Only the GradSync differs.
#pragma once

#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "comm/world.h"
#include "grad_sync.h"
#include "rank_setup.h"
#include "step_observer.h"

namespace dpscale {

// One rank's measurements of one epoch. Trivially copyable: rank 0 gathers them as they are.
struct EpochStats {
  double time_s = 0.0;       // this rank's wall time for the epoch (device drained)
  double wait_s = 0.0;       // GradSync's wait: naive's all-reduce phase; others: exposed wait
  double busy_s = 0.0;       // summed all-reduce durations on the comm thread/stream
  double allgather_s = 0.0;       // of busy_s, the all-gathers' (sharded)
  double allgather_wait_s = 0.0;  // time the step waited for all-gathers (sharded)
  double loss_global = 0.0;  // mean over steps of the global-batch loss
  double loss_local = 0.0;   // mean over steps of this rank's shard loss
  int64_t steps = 0;
  // What this rank's threads lost to contention during the epoch (contention.h; the probe's)
  double run_delay_s = 0.0;
  int64_t involuntary_switches = 0;
  int64_t peak_rss_bytes = 0;  // this rank's peak resident memory over the epoch (host_rss.h)
};

// Every rank's epochs, as rank 0 holds them after gathering: [rank][epoch].
using PerRankEpochs = std::vector<std::vector<EpochStats>>;

// Warm-up (untimed, no update), then epochs of steps over the data in order. The world's
// barrier lines the ranks up after warm-up so every rank's clock starts together. Throws
// InputError if the loss becomes non-finite (the same step on every rank: it is the global loss).
// `probe` instruments the timed steps (the diagnosis's StepProbe); null: none.
std::vector<EpochStats> run_training(RankSetup& s, GradSync& sync, Communicator* comm, World& world,
                                     StepObserver* probe = nullptr);

// The untimed steps before the epochs (--warmup-steps, no update; a non-finite value stops the
// run as in training). The optimizer's state was allocated with the strategy (make_grad_sync),
// so the first timed step allocates nothing. run_training starts with it.
void warm_up(RankSetup& s, GradSync& sync);

// Whether step `n` (counted from 0 over warm-up and training alike) checks its gradients and
// weights for non-finite values (--finite-check-every).
bool checks_finite(const RankSetup& s, int64_t n);

// One step on global batch `batch_index`: forward, loss, backward with the strategy's sync,
// finish, and the optimizer's update (GradSync::update) when `update`. Returns its losses. `check_finite`: also check the
// gradients and weights for NaN/inf (--finite-check-every). `probe` may be null.
StepLosses train_step(RankSetup& s, GradSync& sync, int64_t batch_index, bool update, bool check_finite = false,
                      StepObserver* probe = nullptr);

// Accuracy of the current weights on the test split; nullopt when there is none.
std::optional<double> evaluate_test_accuracy(RankSetup& s);

}  // namespace dpscale
