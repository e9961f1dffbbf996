// progress.cpp — progress text and the weighted time-left estimate.
#include "progress.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "models/errors.h"
#include "models/mlp_spec.h"

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
    return static_cast<double>(parse_model(model).n_params());
  } catch (const InputError&) {
    return 1.0;
  }
}

double Progress::eta_s(size_t next, double elapsed_s) const {
  if (done_ <= 0) return -1;
  double left = 0;
  for (size_t i = next; i < weights_.size(); ++i) left += weights_[i];
  return elapsed_s * left / done_;
}

std::string Progress::starting(size_t i, const std::string& what, double elapsed_s) const {
  const double eta = eta_s(i, elapsed_s);
  std::ostringstream s;
  s << '[' << i + 1 << '/' << weights_.size() << "] " << what << "  (elapsed " << fmt_duration(elapsed_s) << ", ";
  if (eta < 0) s << "time left unknown)";
  else s << "about " << fmt_duration(eta) << " left)";
  return s.str();
}

}  // namespace dpscale
