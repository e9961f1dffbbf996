// analysis.h — from sweep lines to the numbers of the workshop's table and textbook 15.9.
//
// Lines are grouped by point (harness/point/point.h: model, mode, world size, placement and every
// measured option, the bucket cap and the link among them), across repeats and across files
// (report, compare, the gate); repeats of a point become one row holding medians and the spread
// (these machines are noisy). Per row:
//   speedup    S = T(K) / T(1), throughput against the single run of the same model in the file
//   efficiency E = S / K
//   comm %     comm / avg epoch: naive's blocking all-reduce phase, or the exposed wait of
//              interleaved/bucketed (the comm that did not hide behind compute)
//   γ          comm / compute, naive only (compute and comm are separate phases there)
//   Amdahl     the workshop's ceiling at this (model, K, link): f = T1 / (T1 + Tcomm_naive(K)),
//              S_max = 1 / ((1 - f) + f / K), T1 the single run's epoch, Tcomm naive's comm
// and, for the charts (plots/ draws these and computes none of its own): the saving of an
// overlapped mode against naive at the same (model, K, link), the median bucket count, and the
// per-epoch loss curves as the median over repeats.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/results/results_file.h"

namespace dpscale {

// median, min, max of one quantity over a point's repeats
struct Spread {
  double median = 0, min = 0, max = 0;
  // (max - min) / (2 median): the ± half-range as a fraction of the median
  double half_range() const { return median != 0 ? (max - min) / (2 * median) : 0; }
};
Spread spread_of(std::vector<double> v);  // v must not be empty

struct PointStats {
  Point point;
  int runs = 0;                          // successful repeats
  int64_t n_params = 0;
  Spread epoch_s, throughput, compute_s;
  std::optional<Spread> tokens;          // a transformer's tokens/s (throughput · seq_len); null for the MLP
  std::optional<Spread> comm_s;          // naive comm_s, else exposed_comm_s (null for single)
  std::optional<double> speedup;         // median throughput / single's median throughput
  std::optional<Spread> speedup_spread;  // each repeat's throughput / single's median
  std::optional<double> efficiency;      // speedup / K
  std::optional<double> comm_fraction;   // median of per-run comm / avg epoch
  std::optional<double> gamma;           // naive: median of per-run comm / compute
  std::optional<double> amdahl_max;      // DP rows with a naive and a single run to derive it from

  // What the charts draw besides the table's numbers.
  RunRecord first;                       // the first repeat: the setup it ran with (backend, batch...)
  std::optional<Spread> comm_busy_s;     // summed all-reduce durations (DP modes)
  std::optional<Spread> efficiency_spread;  // speedup_spread / K
  std::optional<double> n_buckets;       // median bucket count (bucketed)
  // interleaved/bucketed: 1 - T/T_naive against naive's median epoch at the same (model, K, link);
  // min..max from this point's slowest..fastest repeat. And the seconds saved, T_naive - T.
  std::optional<Spread> naive_saving;
  std::optional<double> naive_saving_s;
  // Per epoch, the median over repeats (NaN entries left out; NaN where none is finite), as
  // long as the shortest repeat's curve; empty when no repeat has the curve.
  std::vector<double> loss_global, loss_rank0;
  // Where training ended, per repeat: the last finite loss_global and the test accuracy (a
  // dataset with a test split). What a 2-byte wire format or accumulation costs in loss is a
  // difference of these, read against their own run-to-run spread.
  std::optional<Spread> final_loss, test_accuracy;

  // Every repeat's record, for harness/report/diagnosis_report.cpp (medians of the triad,
  // per-rank times, the bottleneck label).
  std::vector<RunRecord> repeats;
};

struct FailedRun {
  SweepEntry entry;
  bool retried_ok = false;  // a later line of the same run id succeeded (e.g. after --resume)
};

struct Analysis {
  std::vector<PointStats> points;        // in order of first appearance in the file
  std::vector<FailedRun> failed;
  std::vector<Point> failed_points;      // points with failed lines and no successful one
  std::vector<std::string> warnings;     // the file's (truncated lines skipped), for the report JSON
  const PointStats* find(const Point& k) const;
};

Analysis analyse(const ResultsFile& f);

}  // namespace dpscale
