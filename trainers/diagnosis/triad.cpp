// triad.cpp — the three phases of triad.h.
#include "trainers/diagnosis/triad.h"

#include <algorithm>
#include <chrono>

#include "trainers/train_loop.h"

namespace dpscale {

using Clock = std::chrono::steady_clock;

std::optional<double> TriadResult::overlap_pct() const {
  if (comm_only_s <= 0) return std::nullopt;
  return 100.0 * std::max(0.0, std::min(1.0, 1.0 - exposed_s() / comm_only_s));
}

namespace {

// Seconds per step of `step` run n times, the slowest rank's.
template <class Step>
double timed_phase(RankSetup& s, World& world, int n, Step step) {
  s.device->synchronize();
  world.barrier();
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) step(i);
  s.device->synchronize();
  const double mine = std::chrono::duration<double>(Clock::now() - t0).count() / n;
  return world.max_over_ranks(mine);
}

}  // namespace

TriadResult run_triad(RankSetup& s, GradSync& sync, Communicator& comm, World& world, int n) {
  Model& m = *s.model;
  const std::vector<float> saved = m.params_to_host();
  const int64_t spe = s.steps_per_epoch;
  TriadResult r;
  r.steps = n;
  r.full_s = timed_phase(s, world, n, [&](int i) { train_step(s, sync, i % spe, true); });
  r.compute_only_s = timed_phase(s, world, n, [&](int i) {
    const int64_t row0 = (i % spe) * s.opts.batch_size + static_cast<int64_t>(s.rank) * s.local_batch;
    const float* x = s.x + row0 * s.spec.in_width();
    m.forward(x, s.local_batch);
    m.loss(s.y + row0 * s.spec.labels_per_sample(), s.local_batch, 1.0f / static_cast<float>(s.opts.batch_size));
    m.backward(x, s.local_batch, nullptr);  // no all-reduce: DDP's no-op comm hook
    m.sgd_step(SgdConfig{static_cast<float>(s.opts.lr), static_cast<float>(s.opts.momentum),
                         static_cast<float>(s.opts.weight_decay)});
    m.read_losses();
  });
  s.device->fill(m.grads(), 0.0f, m.layout().grad_buffer_count());
  r.comm_only_s = timed_phase(s, world, n, [&](int) {
    sync.begin_step();
    for (const FlatTensor& t : m.layout().tensors()) sync.on_grad_ready(t);
    sync.finish();
    sync.drain();
  });
  // What the triad's all-reduces added to the strategy's counters is not the run's.
  sync.take_wait_seconds();
  comm.take_busy_seconds();
  comm.take_call_log();
  m.params_from_host(saved);
  s.device->synchronize();
  return r;
}

}  // namespace dpscale
