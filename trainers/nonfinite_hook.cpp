// nonfinite_hook.cpp — the test hook of nonfinite_hook.h.
#include "nonfinite_hook.h"

#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "models/param_layout.h"

namespace dpscale {

namespace {
constexpr const char* kVar = "DPSCALE_TEST_INJECT_NONFINITE";
constexpr int kLayer = 1;
constexpr int64_t kElement = 5;
}  // namespace

NonfiniteInjection NonfiniteInjection::from_env(const MlpSpec& model) {
  NonfiniteInjection h;
  const char* v = std::getenv(kVar);
  if (!v || !*v) return h;
  const std::string spec = v;
  const auto bad = [&] { return std::invalid_argument(std::string(kVar) + "='" + spec + "': want gradient|weight:nan|inf|-inf:STEP"); };
  std::istringstream in(spec);
  std::string into, value, step;
  if (!std::getline(in, into, ':') || !std::getline(in, value, ':') || !std::getline(in, step) || !in.eof()) throw bad();
  if (into == "gradient") {
    h.into = Into::gradient;
  } else if (into == "weight") {
    h.into = Into::weight;
  } else {
    throw bad();
  }
  const float inf = std::numeric_limits<float>::infinity();
  if (value == "nan") {
    h.value = std::numeric_limits<float>::quiet_NaN();
  } else if (value == "inf") {
    h.value = inf;
  } else if (value == "-inf") {
    h.value = -inf;
  } else {
    throw bad();
  }
  size_t used = 0;
  try {
    h.step = std::stoll(step, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  if (used != step.size() || h.step < 1) throw bad();
  if (model.n_layers() <= kLayer || static_cast<int64_t>(model.widths[kLayer]) * model.widths[kLayer + 1] <= kElement) {
    throw std::invalid_argument(std::string(kVar) + ": the model has no layers.1.weight[0, 5]");
  }
  return h;
}

void NonfiniteInjection::before_update(Model& m) {
  if (into == Into::none || ++updates_seen != step) return;
  const FlatTensor& t = m.layout().weight(kLayer);
  float* buf = into == Into::gradient ? m.grads() : m.params();
  m.device().upload(buf + t.offset + kElement, &value, sizeof value);
}

}  // namespace dpscale
