// cap_check.h — `dpscale predict --validate-caps CAPS.jsonl [--calibrate RUN.jsonl]`: does the
// cap advice hold? For every cell of a measured bucket-cap sweep (the bucketed points that differ
// in their cap alone: Point::with_default("bucket_cap_mb") is the cell), the advice
// (recommend_cap.h) over the caps the cell measured, predicted on the cell's own setup at the
// median of its runs' dilations (with the calibration's terms and single-device runs, or the
// file's own singles and no terms), beside
// what was measured: the recommended cap's median epoch against the best measured cap's.
// A cell holds when the recommended cap is within 3% of the best measured one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/point/point.h"
#include "machine_fit.h"
#include "recommend_cap.h"

namespace dpscale::predict {

inline constexpr double kCapTolerance = 0.03;

struct CapCell {
  Point point;                          // the cell: a bucketed point with its cap at the default
  CapAdvice predicted;                  // over the measured caps
  std::vector<double> measured_epoch_s; // median per cap, the same order as predicted.rows
  size_t measured_best = 0;
  double recommended_epoch_s = 0;       // measured, at the recommended cap
  bool disturbed = false;               // a run of the cell was disturbed
  double gap() const { return recommended_epoch_s / measured_epoch_s[measured_best] - 1; }
  bool holds() const { return gap() <= kCapTolerance; }
};

struct CapCheck {
  std::string path;
  std::optional<Calibration> calibration;
  std::vector<CapCell> cells;
};

CapCheck check_caps(const std::string& caps_path, const std::optional<Calibration>& calibration);
std::string render_cap_check(const CapCheck& c, const std::string& format);

}  // namespace dpscale::predict
