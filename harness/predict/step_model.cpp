// step_model.cpp — from a single-device epoch to a K-rank epoch (formulas in step_model.h).
#include "step_model.h"

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "shard_sim.h"

namespace dpscale::predict {

ModelSpec spec_at(const SingleRun& single, const Workload& w) {
  ModelSpec s = single.spec;
  if (s.is_gpt() && w.seq_len > 0) s.gpt->seq_len = w.seq_len;
  return s;
}

double step_compute_1(const SingleRun& single, const Workload& w) {
  const int64_t steps1 = single.samples / single.batch;
  const ModelSpec at = spec_at(single, w);
  const double s1 = std::max(1, single.spec.seq_len()), s = std::max(1, at.seq_len());
  // Per token, at the GEMM FLOPs per token of the workload's sequence length.
  const double per_token = single.epoch_s / static_cast<double>(steps1) / (static_cast<double>(single.batch) * s1) *
                           (step_flops_per_sample(at) / s) / (step_flops_per_sample(single.spec) / s1);
  return per_token * static_cast<double>(w.batch) * s;
}

namespace {

// The sharded mode's step with the terms: every collective (the halves too) pays o; the calls
// the compute thread issues before it is done cost it o each, and those that start on the
// channel before then cost it σ per MiB the rank moves (each kind's own hop pattern), a fixed
// point as for the other modes.
StepTimes sharded_with_terms(const ModelSpec& spec, const SyncSetup& sync, const CommModel& comm, int k,
                             double t_compute0, const MachineTerms& terms, double oversub) {
  const double o = k > 1 ? terms.call_overhead_s : 0.0;
  const CollectiveSeconds seconds = [&](CollKind kind, int64_t nbytes) {
    const size_t n = static_cast<size_t>(nbytes);
    return (kind == CollKind::allreduce ? comm.seconds(n, k) : comm.shard_seconds(n, k)) + o;
  };
  double t_c = t_compute0;
  ShardStep s = simulate_sharded(spec, sync, t_c, seconds);
  if (k <= 1 || (terms.contention_s_per_mib <= 0 && terms.call_overhead_s <= 0)) return s.times;
  for (int round = 0; round < 20; ++round) {
    double moved = 0;
    int inside = 0;
    for (const Collective& c : s.calls) {
      if (c.issued < s.compute_end) ++inside;
      if (c.start < s.compute_end) {
        const double n = static_cast<double>(c.nbytes);
        const double bytes = c.kind == CollKind::allreduce ? hop_pattern(AllreduceAlgo::ring, n, k).link_bytes()
                                                           : shard_hop_pattern(n, k).link_bytes();
        moved += bytes / (1024.0 * 1024.0);
      }
    }
    const double next = t_compute0 + terms.call_overhead_s * inside + terms.contention_s_per_mib * oversub * moved;
    if (std::fabs(next - t_c) <= 1e-12 * next) break;
    t_c = next;
    s = simulate_sharded(spec, sync, t_c, seconds);
  }
  return s.times;
}

}  // namespace

StepTimes simulate_with_terms(const ModelSpec& spec, const SyncSetup& sync, const CommModel& comm, int k,
                              double t_compute0, const MachineTerms& terms, double oversub) {
  if (sync.mode == Mode::sharded) return sharded_with_terms(spec, sync, comm, k, t_compute0, terms, oversub);
  auto duration = [&](int64_t nbytes) {
    return comm.seconds(static_cast<size_t>(nbytes), k) + (k > 1 ? terms.call_overhead_s : 0.0);
  };
  double t_c = t_compute0;
  StepTimes s = simulate_step(launches(spec, sync, t_c), t_c, duration);
  if (k <= 1 || (terms.contention_s_per_mib <= 0 && terms.call_overhead_s <= 0)) return s;
  // Backward stretches by the launches made inside it and the copies of the all-reduces that
  // start while it runs; a longer backward lets later ones start inside it too, so iterate to
  // the fixed point (monotone, bounded by every launch overlapping: a few rounds).
  for (int round = 0; round < 20; ++round) {
    const std::vector<Launch> ls = launches(spec, sync, t_c);
    s = simulate_step(ls, t_c, duration);
    double moved = 0;
    int inside = 0;
    for (size_t j = 0; j < ls.size(); ++j) {
      if (ls[j].at < t_c) ++inside;
      if (s.starts[j] < t_c) moved += ring_moved_mib(static_cast<double>(ls[j].nbytes), k);
    }
    const double next = t_compute0 + terms.call_overhead_s * inside + terms.contention_s_per_mib * oversub * moved;
    if (std::fabs(next - t_c) <= 1e-12 * next) break;
    t_c = next;
  }
  return simulate_step(launches(spec, sync, t_c), t_c, duration);
}

EpochPrediction predict_epoch(const SingleRun& single, const Workload& w, const SyncSetup& sync, const CommModel& comm,
                              int k, const MachineTerms& terms, int ranks_per_node) {
  if (sync.mode == Mode::sharded && sync.accum_steps > 1) {
    throw InputError("predict: no step model of the sharded mode with --accum-steps " + std::to_string(sync.accum_steps) +
                     " (each micro-batch of stage 3 gathers the layers again)");
  }
  const double oversub = terms.oversubscription(ranks_per_node > 0 ? ranks_per_node : k);
  const double t_c0 = terms.compute_at(step_compute_1(single, w), static_cast<double>(single.spec.n_params()), k, oversub);
  const ModelSpec spec = spec_at(single, w);
  const StepTimes mine = simulate_with_terms(spec, sync, comm, k, t_c0, terms, oversub);
  const StepTimes naive = simulate_with_terms(spec, SyncSetup{}, comm, k, t_c0, terms, oversub);
  EpochPrediction p;
  // With accumulation, an optimizer step is A micro-batches; the first A-1 communicate nothing.
  const int a = std::max(1, sync.accum_steps);
  p.steps = w.samples / (static_cast<int64_t>(w.batch) * a);
  const double n = static_cast<double>(p.steps);
  const double silent = (a - 1) * t_c0;
  p.epoch_s = n * (silent + mine.step);
  p.compute_s = n * (silent + mine.compute);
  p.naive_comm_s = n * naive.busy;
  p.busy_s = n * mine.busy;
  p.exposed_s = n * mine.exposed;
  p.calls_per_step = k > 1 ? mine.calls : 0;
  return p;
}

}  // namespace dpscale::predict
