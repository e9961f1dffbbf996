// weights_compare.cpp — see weights_compare.h.
#include "weights_compare.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

namespace dpscale::test {

Comparison compare_weights(const Weights& init, const Weights& ref, const Weights& got, int steps, double rel_tol) {
  Comparison c;
  if (ref.size() != got.size()) {
    c.pass = false;
    c.report = "different tensor sets";
    return c;
  }
  for (const auto& [name, r] : ref) {
    const auto it = got.find(name);
    const auto& w0 = init.at(name);
    if (it == got.end() || it->second.size() != r.size() || w0.size() != r.size()) {
      c.pass = false;
      c.report += name + ": missing or wrong size\n";
      continue;
    }
    double diff = 0.0, update = 0.0, wmax = 0.0;
    for (size_t i = 0; i < r.size(); ++i) {
      diff = std::max(diff, std::fabs(static_cast<double>(it->second[i]) - r[i]));
      update = std::max(update, std::fabs(static_cast<double>(r[i]) - w0[i]));
      wmax = std::max(wmax, std::fabs(static_cast<double>(r[i])));
    }
    const double tol = rel_tol * update + 2.0 * steps * FLT_EPSILON * wmax;
    const double ratio = diff / tol;
    c.worst_ratio = std::max(c.worst_ratio, ratio);
    if (!(diff <= tol)) c.pass = false;
    char line[256];
    std::snprintf(line, sizeof line, "  %-16s max|diff| %.3e  update %.3e  diff/update %.2e  tol %.3e  %s\n",
                  name.c_str(), diff, update, update > 0 ? diff / update : 0.0, tol, diff <= tol ? "ok" : "FAIL");
    c.report += line;
  }
  return c;
}

double worst_relative(const Weights& init, const Weights& a, const Weights& b) {
  double worst = 0.0;
  for (const auto& [name, w0] : init) {
    double diff = 0.0, moved = 0.0;
    for (size_t i = 0; i < w0.size(); ++i) {
      diff = std::max(diff, static_cast<double>(std::fabs(a.at(name)[i] - b.at(name)[i])));
      moved = std::max(moved, static_cast<double>(std::fabs(a.at(name)[i] - w0[i])));
    }
    worst = std::max(worst, diff / moved);
  }
  return worst;
}

}  // namespace dpscale::test
