// pairing.h — how a data-parallel run becomes a speedup sample: each successful data-parallel run
// of a results file paired with the single run beside it (its point's beside(single, 1), the same
// round), the noun `dpscale compare`'s gate, `dpscale ab` (through the gate's document) and the
// history's rows share. The speedup is throughput(DP) / throughput(single), the two measured side
// by side in time, so a load that hits both cancels; a run the machine disturbed (machine_state.h)
// is marked, not dropped, so each reader decides.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/results/machine_state.h"
#include "harness/results/results_file.h"

namespace dpscale {

// One successful data-parallel run of a file, paired as the gate pairs it: its speedup is its
// throughput over the single-device rate beside it (the single run of its round, or the
// geometric mean with the next round's where that one is there and fit), judged against
// `usual_gflops` (the usual probe of the files compared). The gate tests the speedups of runs
// with neither reason set; the history keeps every run, disturbed ones marked.
struct PairedRun {
  const SweepEntry* entry = nullptr;
  std::optional<double> speedup;  // none without a single run in the round
  std::string disturbed;          // "round 3: probe -31%" (the run's own or its single run's); "" fit
  std::string unpaired;           // "round 3: no single run of small in that round"; "" paired
  // "round 3: run delay 31% and 30% (its single run)" when both were disturbed but lost alike
  // (lost_alike, machine_state.h; only where lim.alike_run_delay is set): disturbed stays "".
  std::string alike;
};
std::vector<PairedRun> pair_runs(const ResultsFile& f, double usual_gflops, const DisturbanceLimits& lim);

// Rounds in a results file: the largest repeat index + 1.
int rounds_in(const ResultsFile& f);

}  // namespace dpscale
