// triad.cpp — the three phases of triad.h.
#include "trainers/diagnosis/triad.h"

#include <algorithm>
#include <chrono>

#include "core/median.h"
#include "trainers/train_loop.h"

namespace dpscale {

using Clock = std::chrono::steady_clock;

std::optional<double> TriadResult::overlap_pct() const {
  if (comm_only_s <= 0) return std::nullopt;
  return 100.0 * std::max(0.0, std::min(1.0, 1.0 - exposed_s() / comm_only_s));
}

namespace {

// Seconds of one `step`, the slowest rank's: from a barrier (every rank's device idle) to this
// rank's device synchronisation after it.
template <class Step>
double timed_step(RankSetup& s, World& world, Step step) {
  s.device->synchronize();
  world.barrier();
  const auto t0 = Clock::now();
  step();
  s.device->synchronize();
  return world.max_over_ranks(std::chrono::duration<double>(Clock::now() - t0).count());
}

}  // namespace

TriadResult run_triad(RankSetup& s, GradSync& sync, Communicator& comm, World& world, int n) {
  Mlp& m = *s.model;
  const std::vector<float> saved = m.params_to_host();
  const int64_t spe = s.steps_per_epoch;
  auto full = [&](int i) { train_step(s, sync, i % spe, true); };
  auto compute_only = [&](int i) {
    const int64_t row0 = (i % spe) * s.opts.batch_size + static_cast<int64_t>(s.rank) * s.local_batch;
    const float* x = s.x + row0 * s.spec.in_width();
    m.forward(x, s.local_batch);
    m.loss(s.y + row0, s.local_batch, 1.0f / static_cast<float>(s.opts.batch_size));
    m.backward(x, s.local_batch, nullptr);  // no all-reduce: DDP's no-op comm hook
    m.sgd_step(SgdConfig{static_cast<float>(s.opts.lr), static_cast<float>(s.opts.momentum),
                         static_cast<float>(s.opts.weight_decay)});
    m.read_losses();
  };
  auto comm_only = [&] {
    sync.begin_step();
    for (const FlatTensor& t : m.layout().tensors()) sync.on_grad_ready(t);
    sync.finish();
    sync.drain();
  };
  // n rounds of one step of each phase, the phases' order turned one place each round, so that
  // a load that comes and goes falls on every phase alike instead of on one phase's block.
  std::vector<double> times[3];
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      const int phase = (i + k) % 3;
      if (phase == 0) times[0].push_back(timed_step(s, world, [&] { full(i); }));
      if (phase == 1) times[1].push_back(timed_step(s, world, [&] { compute_only(i); }));
      if (phase == 2) {
        // Zeroed gradients (untimed): repeated sums of the other phases' gradients stay finite.
        s.device->fill(m.grads(), 0.0f, m.layout().grad_buffer_count());
        times[2].push_back(timed_step(s, world, comm_only));
      }
    }
  }
  TriadResult r;
  r.steps = n;
  r.full_s = median(times[0]);
  r.compute_only_s = median(times[1]);
  r.comm_only_s = median(times[2]);
  // What the triad's all-reduces added to the strategy's counters is not the run's.
  sync.take_wait_seconds();
  comm.take_busy_seconds();
  comm.take_call_log();
  m.params_from_host(saved);
  s.device->synchronize();
  return r;
}

}  // namespace dpscale
