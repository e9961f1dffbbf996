// step_model.cpp — from a single-device epoch to a K-rank epoch (formulas in step_model.h).
#include "step_model.h"

namespace dpscale::predict {

double step_compute_1(const SingleRun& single, const Workload& w) {
  const int64_t steps1 = single.samples / single.batch;
  return single.epoch_s / static_cast<double>(steps1) * (static_cast<double>(w.batch) / single.batch);
}

EpochPrediction predict_epoch(const SingleRun& single, const Workload& w, const SyncSetup& sync, const CommModel& comm,
                              int k) {
  const double t_c = step_compute_1(single, w) / k;
  auto duration = [&](int64_t nbytes) { return comm.seconds(static_cast<size_t>(nbytes), k); };
  const StepTimes mine = simulate_step(launches(single.spec, sync, t_c), t_c, duration);
  const StepTimes naive = simulate_step(launches(single.spec, SyncSetup{}, t_c), t_c, duration);
  EpochPrediction p;
  p.steps = w.samples / w.batch;
  const double n = static_cast<double>(p.steps);
  p.epoch_s = n * mine.step;
  p.compute_s = n * t_c;
  p.naive_comm_s = n * naive.busy;
  p.busy_s = n * mine.busy;
  p.exposed_s = n * mine.exposed;
  p.calls_per_step = k > 1 ? mine.calls : 0;
  return p;
}

}  // namespace dpscale::predict
