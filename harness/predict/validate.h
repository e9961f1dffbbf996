// validate.h — `dpscale predict --validate RESULTS.jsonl [--calibrate RUN.jsonl]`: every measured
// data-parallel point of a sweep beside the step model's prediction of it.
//
// Each point is predicted on its own setup (link, dilation, algorithm, caps, fused, samples,
// batch, K, nodes) from a single-device run of its model: the calibration file's, with the
// machine terms fitted there (machine_fit.h), or without --calibrate the same file's, with no
// terms (the bare α-β model). Repeats: the median of the measured epochs against the median of
// the per-run predictions. Error = (predicted − measured) / measured.
//
// Points are the sweep entries' own (harness/point/point.h), as the gate keys them: runs that
// differ in any measured option (the wire format, accumulation, the placement, ...) are two
// points, and each starts from the single run of its own point (Point::beside), as the gate pairs.
// Held out: a point the calibration fitted is left out and listed, never scored. A point with a run the machine disturbed is shown, marked, and left out
// of the summary. The summary, per mode and overall: median |error|, P90 |error| (nearest rank),
// the signed median (bias: below 0 the model is optimistic), and the worst point with the part
// of the step its error comes from (compute, or the exposed comm).
//
// Refused: a calibration and a results file of two machines.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "machine_fit.h"
#include "step_model.h"

namespace dpscale::predict {

struct ValidationRow {
  Point point;
  std::string mode;  // the mode's name; sharded: with its stage ("sharded stage 3 prefetch 1"), each summarized apart
  int runs = 0;
  bool disturbed = false;
  double measured_epoch_s = 0, predicted_epoch_s = 0, error = 0;  // error relative to measured
  double measured_comm_s = 0, predicted_comm_s = 0;  // naive: comm_s; overlapped: exposed wait
  double measured_compute_s = 0, predicted_compute_s = 0;
  int measured_calls = 0, predicted_calls = 0;
  // Against the single-device epoch at this point's workload (for the charts).
  double single_epoch_s = 0, measured_speedup = 0, predicted_speedup = 0;
  std::string cause() const;  // "compute" or "comm": the larger of the two errors, in seconds
};

struct ErrorSummary {
  std::string scope;  // "naive", ..., "sharded stage 2", ..., "all"
  int points = 0;
  double median_abs = 0, p90_abs = 0, signed_median = 0;
  size_t worst = 0;  // index into Validation::rows
};

struct Validation {
  std::string path;
  std::optional<Calibration> calibration;
  std::vector<ValidationRow> rows;
  std::vector<ErrorSummary> summary;    // per mode in table order, then "all"
  std::vector<std::string> skipped;     // no single-device run of their point
  std::vector<std::string> fitted;      // left out: the calibration fitted them
  // The overall summary's fields, kept for callers of the bare validation.
  double median_abs_error = 0;
  size_t worst = 0;
};

Validation validate(const std::string& results_path, const std::optional<Calibration>& calibration = std::nullopt);
std::string render_validation(const Validation& v, const std::string& format);

}  // namespace dpscale::predict
