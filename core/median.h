// median.h — the median of a list of numbers: the middle one, or the mean of the middle two for
// an even count; 0 for an empty list. What the straggler and bottleneck rules, the reports, ab,
// predict, the machine probes and the benches call a median. (Three places keep the upper
// median, v[n/2], a value that was measured: predict's dilation of a sweep, and the step probe's
// recent step time and per-call durations.)
#pragma once

#include <algorithm>
#include <vector>

namespace dpscale {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace dpscale
