// median.h — the median of a list of numbers: the middle one, or the mean of the middle two for
// an even count; 0 for an empty list. The one definition every median in dpscale uses (the
// straggler rule's, the triad's, the reports', the benches').
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
