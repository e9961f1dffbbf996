// progress.cpp — progress text and the weighted time-left estimate.
#include "harness/sweep/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/errors.h"
#include "models/model_spec.h"

namespace dpscale {

std::string fmt_duration(double s) {
  const long t = std::lround(std::max(0.0, s));
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  else if (t >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lds", t);
  return buf;
}

double model_weight(const std::string& model) {
  try {
    return static_cast<double>(parse_model_spec(model, 0).n_params());
  } catch (const InputError&) {
    return 1.0;
  }
}

double Progress::eta_s(size_t next) const {
  if (done_.empty()) return -1;
  // Least squares of seconds on weight; with one distinct weight, or a fit that goes negative,
  // fall back to seconds proportional to weight.
  double n = 0, sw = 0, st = 0, sww = 0, swt = 0;
  for (const Done& d : done_) {
    n += 1;
    sw += d.weight;
    st += d.seconds;
    sww += d.weight * d.weight;
    swt += d.weight * d.seconds;
  }
  const double var = n * sww - sw * sw;
  double a = 0, b = sw > 0 ? st / sw : 0;
  if (var > 1e-9 * sww * n) {
    const double b_fit = (n * swt - sw * st) / var, a_fit = (st - b_fit * sw) / n;
    if (b_fit >= 0 && a_fit >= 0) a = a_fit, b = b_fit;
  }
  double left = 0;
  for (size_t i = next; i < weights_.size(); ++i) left += a + b * weights_[i];
  return left;
}

std::string Progress::starting(size_t i, const std::string& what, double elapsed_s) const {
  const double eta = eta_s(i);
  std::ostringstream s;
  s << '[' << i + 1 << '/' << weights_.size() << "] " << what << "  (elapsed " << fmt_duration(elapsed_s) << ", ";
  if (eta < 0) s << "time left unknown)";
  else s << "about " << fmt_duration(eta) << " left)";
  return s.str();
}

}  // namespace dpscale
