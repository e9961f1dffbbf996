// validate.h — `dpscale predict --validate RESULTS.jsonl`: every measured data-parallel point of a
// sweep beside the step model's prediction of it.
//
// Each point is predicted from the same file's single-device run of its model (compute), the
// link each run recorded (link_alpha_us, link_gbps, its own measured link_dilation, the
// allreduce algorithm: star as star, native and ring as the ring) and its own setup (samples,
// batch, K, mode, bucket caps, fused). Repeats: the median of the measured epochs against the
// median of the per-run predictions. Error = (predicted - measured) / measured.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "step_model.h"

namespace dpscale::predict {

struct ValidationRow {
  std::string model, mode;
  int world_size = 0;
  std::optional<double> bucket_cap_mb;
  int runs = 0;
  double measured_epoch_s = 0, predicted_epoch_s = 0, error = 0;  // error relative to measured
  double measured_comm_s = 0, predicted_comm_s = 0;  // naive: comm_s; overlapped: exposed wait
  double measured_compute_s = 0, predicted_compute_s = 0;
  int measured_calls = 0, predicted_calls = 0;
  // Against the file's single-device epoch at this point's workload (for the charts).
  double single_epoch_s = 0, measured_speedup = 0, predicted_speedup = 0;
};

struct Validation {
  std::string path;
  std::vector<ValidationRow> rows;
  double median_abs_error = 0;
  size_t worst = 0;  // index into rows of the largest |error|
  std::vector<std::string> skipped;  // points with no single-device run of their model
};

Validation validate(const std::string& results_path);
std::string render_validation(const Validation& v, const std::string& format);

}  // namespace dpscale::predict
