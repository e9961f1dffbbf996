// pairing.cpp — data-parallel runs paired with their rounds' single runs (pairing.h).
#include "harness/results/pairing.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "contract/option_values.h"

namespace dpscale {

std::vector<PairedRun> pair_runs(const ResultsFile& f, double idle, const DisturbanceLimits& lim) {
  // (the single run's point key, repeat) -> that single run: a point is paired with the single
  // run of its model and of the settings a single run takes (accum_steps, tf32, ...).
  std::map<std::pair<Point, int>, const SweepEntry*> singles;
  for (const SweepEntry& e : f.entries) {
    if (e.ok && !e.point.mode->data_parallel) singles[{e.point, e.repeat}] = &e;
  }
  auto disturbed = [&](const SweepEntry& e) -> std::optional<std::string> {
    return e.state ? disturbance(*e.state, e.record ? e.record->run_delay_share : std::nullopt, idle, lim)
                   : std::nullopt;
  };
  std::vector<PairedRun> out;
  for (const SweepEntry& e : f.entries) {
    if (!e.ok || !e.point.mode->data_parallel) continue;
    PairedRun r;
    r.entry = &e;
    const std::string round = "round " + std::to_string(e.repeat + 1);
    if (const auto why = disturbed(e)) r.disturbed = round + ": " + *why;
    const Point single_key = e.point.beside(Mode::single, 1);
    const auto single = singles.find({single_key, e.repeat});
    if (single == singles.end()) {
      if (r.disturbed.empty()) r.unpaired = round + ": no single run of " + e.point.model + " in that round";
      out.push_back(r);
      continue;
    }
    if (const auto single_why = disturbed(*single->second)) {
      // Both disturbed: the sample still counts where the two lost alike (machine_state.h).
      const SweepEntry& one = *single->second;
      if (!r.disturbed.empty() && e.state && one.state &&
          lost_alike(*e.state, e.record->run_delay_share, *one.state, one.record->run_delay_share, idle, lim)) {
        r.disturbed.clear();
        r.alike = round + ": run delay " + format_number(100 * e.record->run_delay_share.value_or(0)) + "% and " +
                  format_number(100 * one.record->run_delay_share.value_or(0)) + "% (its single run)";
      } else if (r.disturbed.empty()) {
        r.disturbed = round + " (its single run): " + *single_why;
      }
    }
    // The round's single ran before this run, the next round's after it: where both are there
    // and fit, their geometric mean is the single-device rate at this run's time (a machine
    // whose speed drifts over a round then cancels to first order, not only its level).
    double thr_single = single->second->record->throughput_samples_per_s;
    const auto next = singles.find({single_key, e.repeat + 1});
    if (next != singles.end() && !disturbed(*next->second)) {
      thr_single = std::sqrt(thr_single * next->second->record->throughput_samples_per_s);
    }
    if (thr_single > 0) r.speedup = e.record->throughput_samples_per_s / thr_single;
    out.push_back(r);
  }
  return out;
}

int rounds_in(const ResultsFile& f) {
  int r = 0;
  for (const SweepEntry& e : f.entries) r = std::max(r, e.repeat + 1);
  return r;
}

}  // namespace dpscale
