// train_loop.cpp — warm-up, epochs, per-step sharding, timing.
//
// Sharding as the workshop: global batch b covers rows [b·B, (b+1)·B); rank r takes the
// contiguous chunk [b·B + r·B/K, b·B + (r+1)·B/K). The loss gradient is scaled by 1/B (the
// global batch), so the sum all-reduce leaves the global mean in every rank's gradients.
#include "train_loop.h"

#include <chrono>
#include <cmath>
#include <iostream>

#include "core/errors.h"
#include "host_rss.h"

namespace dpscale {

using Clock = std::chrono::steady_clock;

bool checks_finite(const RankSetup& s, int64_t n) {
  return s.opts.finite_check_every > 0 && n % s.opts.finite_check_every == 0;
}

namespace {

}  // namespace

// One optimizer step: --accum-steps N micro-batches (global batches step·N .. step·N + N-1),
// each sharded over the ranks as above. Every micro-batch's loss gradient is scaled by
// 1/(N·B), and micro-batches after the first add their gradients (and loss slot) to the ones
// before, so the N−1 first backwards communicate nothing (DDP's no_sync) and only the last one
// runs with the GradSync: its all-reduces carry the sum over N·B rows, the mean of one device's
// batch of N·B. With N = 1 this is the plain step.
StepLosses train_step(RankSetup& s, GradSync& sync, int64_t step_index, bool update, bool check_finite,
                      StepObserver* probe) {
  const int n_micro = s.opts.accum_steps;
  const float scale = 1.0f / static_cast<float>(static_cast<int64_t>(s.opts.batch_size) * n_micro);
  Model& m = *s.model;
  for (int j = 0; j < n_micro; ++j) {
    const int64_t batch_index = step_index * n_micro + j;
    const int64_t row0 = batch_index * s.opts.batch_size + static_cast<int64_t>(s.rank) * s.local_batch;
    const float* x = s.x + row0 * s.spec.in_width();
    const int32_t* y = s.y + row0 * s.spec.labels_per_sample();
    // The probe may hand over the loader's staged copy of the same rows, and times
    // compute; with no probe (warm-up, the triad) the step is exactly as before.
    if (probe) {
      const StepObserver::Batch b = probe->batch(batch_index);
      x = b.x;
      y = b.y;
      if (j == 0) probe->compute_begin();
    }
    const bool accumulate = j > 0;
    m.forward(x, s.local_batch);
    m.loss(y, s.local_batch, scale, accumulate);
    if (j + 1 < n_micro) {
      m.backward(x, s.local_batch, nullptr, accumulate);  // no_sync: nothing leaves the rank
      m.keep_micro_loss();  // summed on the device: no host wait between micro-batches
      continue;
    }
    sync.begin_step();
    if (probe) probe->backward_begin();
    m.backward(x, s.local_batch, probe ? static_cast<GradListener*>(probe) : &sync, accumulate);
    if (probe) probe->compute_end();
    sync.finish();
  }
  if (probe) probe->sync_done();
  // The finite check runs after the all-reduce, so every rank checks the same numbers and stops
  // at the same step. With an update it is the optimizer's own pass (the gradients it reads,
  // the weights it writes); without one (warm-up) passes of its own.
  if (probe) probe->optimizer_begin();
  if (update) {
    s.test_nonfinite.before_update(m);
    sync.update(check_finite);
  }
  if (probe) probe->optimizer_end();
  if (check_finite && !update) m.check_finite();
  // The slot was summed across ranks with the gradients: Σ_all rows loss / (N·B) = the global
  // mean. Its copy is queued before the host waits for the all-reduces (drain), so on a GPU the
  // update and the copy run while the host polls; then one read per step, whatever N: the
  // step's host wait, which the next step needs (it runs only if this one was finite).
  m.queue_losses();
  sync.drain();
  if (probe) probe->step_drained();
  return m.take_losses();
}

namespace {

// A non-finite gradient or weight (the loss itself may stay finite: ReLU maps NaN to 0):
// name the first one and stop. The same step on every rank, as the loss check.
void throw_if_nonfinite(RankSetup& s, const StepLosses& l, const std::string& when) {
  if (!l.nonfinite) return;
  throw InputError("non-finite values at " + when + ": " + s.model->describe_nonfinite() +
                   " (check the input data and --init; or try a smaller --lr)");
}

}  // namespace

void warm_up(RankSetup& s, GradSync& sync) {
  for (int w = 0; w < s.opts.warmup_steps; ++w) {
    const StepLosses l = train_step(s, sync, w % s.steps_per_epoch, false, checks_finite(s, w), nullptr);
    throw_if_nonfinite(s, l, "warm-up step " + std::to_string(w + 1));
  }
}

std::vector<EpochStats> run_training(RankSetup& s, GradSync& sync, Communicator* comm, World& world, StepObserver* probe) {
  warm_up(s, sync);
  s.device->synchronize();
  sync.take_wait_seconds();
  sync.take_allgather_wait_seconds();
  if (comm) comm->take_busy_seconds();
  world.barrier();
  if (probe) probe->start();  // the trace's t = 0, as the ranks leave the barrier

  std::vector<EpochStats> epochs;
  int64_t total_steps = 0;
  const bool print_progress = s.rank == 0 && !s.opts.quiet;
  for (int e = 0; e < s.opts.epochs; ++e) {
    EpochStats st;
    double sum_global = 0.0, sum_local = 0.0;
    reset_peak_rss();
    const auto t0 = Clock::now();
    for (int64_t b = 0; b < s.steps_per_epoch; ++b) {
      if (s.opts.max_steps > 0 && total_steps >= s.opts.max_steps) break;
      const StepLosses l = train_step(s, sync, b, true, checks_finite(s, total_steps), probe);
      if (!std::isfinite(l.global)) {
        throw InputError("training diverged: non-finite loss at epoch " + std::to_string(e + 1) + ", step " +
                         std::to_string(b + 1) + " (try a smaller --lr)");
      }
      throw_if_nonfinite(s, l, "epoch " + std::to_string(e + 1) + ", step " + std::to_string(b + 1));
      sum_global += l.global;
      sum_local += l.local;
      ++st.steps;
      ++total_steps;
    }
    s.device->synchronize();
    st.time_s = std::chrono::duration<double>(Clock::now() - t0).count();
    st.wait_s = sync.take_wait_seconds();
    st.allgather_s = comm ? comm->take_allgather_seconds() : 0.0;  // before the busy time, which resets it
    st.busy_s = comm ? comm->take_busy_seconds() : 0.0;
    st.allgather_wait_s = sync.take_allgather_wait_seconds();
    st.peak_rss_bytes = peak_rss_bytes();
    if (probe) {
      const StepObserver::EpochWait c = probe->take_epoch_wait();
      st.run_delay_s = c.run_delay_s;
      st.involuntary_switches = c.involuntary_switches;
    }
    if (st.steps == 0) break;
    st.loss_global = sum_global / static_cast<double>(st.steps);
    st.loss_local = sum_local / static_cast<double>(st.steps);
    epochs.push_back(st);
    if (print_progress) {
      std::cerr << "epoch " << e + 1 << "/" << s.opts.epochs << ": " << st.time_s << " s, loss " << st.loss_global;
      if (comm) std::cerr << ", comm wait " << st.wait_s << " s";
      std::cerr << std::endl;
    }
    if (s.opts.max_steps > 0 && total_steps >= s.opts.max_steps) break;
  }
  return epochs;
}

std::optional<double> evaluate_test_accuracy(RankSetup& s) {
  if (s.data.n_test == 0) return std::nullopt;
  int64_t correct = 0;
  const int dim = s.spec.in_width();
  for (int64_t row = 0; row < s.data.n_test; row += s.local_batch) {
    const int rows = static_cast<int>(std::min<int64_t>(s.local_batch, s.data.n_test - row));
    s.model->forward(s.test_x + row * dim, rows);
    correct += s.model->count_correct(s.test_y + row, rows);
  }
  return static_cast<double>(correct) / static_cast<double>(s.data.n_test);
}

}  // namespace dpscale
