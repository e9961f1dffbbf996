// link_model.cpp — presets and parsing of the α-β link model.
#include "link_model.h"

#include <cmath>
#include <map>

#include "models/errors.h"

namespace dpscale {

namespace {
double parse_positive(const std::string& text, const std::string& what) {
  size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v) || v <= 0.0) {
    throw InputError(what + ": '" + text + "' is not a positive number");
  }
  return v;
}
}  // namespace

double LinkModel::ring_seconds(size_t nbytes, int k) const {
  if (!enabled() || k <= 1) return 0.0;
  const double hops = 2.0 * (k - 1);
  return dilation * hops * (alpha_us * 1e-6 + (static_cast<double>(nbytes) / k) / (gbps * 1e9));
}

double LinkModel::star_seconds(size_t nbytes, int k) const {
  if (!enabled() || k <= 1) return 0.0;
  const double hops = 2.0 * (k - 1);
  return dilation * hops * (alpha_us * 1e-6 + static_cast<double>(nbytes) / (gbps * 1e9));
}

LinkModel parse_link(const std::string& spec) {
  static const std::map<std::string, std::pair<double, double>> presets = {
      {"nvlink", {1.0, 300.0}}, {"pcie4", {10.0, 25.0}}, {"ib100", {5.0, 12.5}}, {"eth10", {50.0, 1.25}}};
  if (spec == "none") return LinkModel{};
  if (auto it = presets.find(spec); it != presets.end()) {
    return LinkModel{spec, it->second.first, it->second.second, 1.0};
  }
  const auto colon = spec.find(':');
  if (colon == std::string::npos) {
    throw InputError("--link: unknown link '" + spec + "' (use none, nvlink, pcie4, ib100, eth10 or ALPHA_US:GBPS)");
  }
  LinkModel m{"custom", 0.0, 0.0, 1.0};
  const std::string a = spec.substr(0, colon);
  size_t used = 0;
  try {
    m.alpha_us = std::stod(a, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != a.size() || !std::isfinite(m.alpha_us) || m.alpha_us < 0.0) {
    throw InputError("--link: latency '" + a + "' in '" + spec + "' is not a non-negative number of microseconds");
  }
  m.gbps = parse_positive(spec.substr(colon + 1), "--link bandwidth (GB/s) in '" + spec + "'");
  return m;
}

DilationSpec parse_dilation(const std::string& spec) {
  DilationSpec d;
  if (spec.rfind("auto:", 0) == 0) {
    d.auto_tflops = parse_positive(spec.substr(5), "--link-dilation auto:TFLOPS");
    return d;
  }
  d.factor = parse_positive(spec, "--link-dilation");
  // No machine is a million times slower than the GPU it stands for (auto: gives ~1e2 to 1e4);
  // a larger F is a typo that would hold every all-reduce for hours.
  if (d.factor > 1e6) throw InputError("--link-dilation: '" + spec + "' is above 1e6");
  return d;
}

}  // namespace dpscale
