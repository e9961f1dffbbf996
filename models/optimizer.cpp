// optimizer.cpp — the update rules over ranges (optimizer.h); the arithmetic is the Device's
// (sgd: elementwise.h's sgd_update; adamw: adamw.h).
#include "optimizer.h"

#include <stdexcept>

namespace dpscale {

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = {"sgd", "adamw"};
  return names;
}

OptimizerKind parse_optimizer(const std::string& name) {
  for (size_t i = 0; i < optimizer_names().size(); ++i) {
    if (optimizer_names()[i] == name) return static_cast<OptimizerKind>(i);
  }
  throw std::invalid_argument("unknown optimizer '" + name + "'");
}

const char* optimizer_name(OptimizerKind k) { return optimizer_names()[static_cast<size_t>(k)].c_str(); }

Optimizer::Optimizer(Device& dev, OptimizerConfig cfg, int64_t state_floats)
    : dev_(dev), cfg_(cfg), state_floats_(state_floats) {
  const bool momentum = cfg_.kind == OptimizerKind::sgd && cfg_.momentum > 0.0;
  const size_t n = static_cast<size_t>(state_floats);
  if (momentum || cfg_.kind == OptimizerKind::adamw) {
    m_ = DeviceBuffer<float>(dev_, n);
    dev_.fill(m_.data(), 0.0f, state_floats);
  }
  if (cfg_.kind == OptimizerKind::adamw) {
    v_ = DeviceBuffer<float>(dev_, n);
    dev_.fill(v_.data(), 0.0f, state_floats);
  }
}

void Optimizer::update(float* w, const float* g, int64_t n, int64_t state_offset, float* nonfinite_flag) {
  if (state_offset < 0 || state_offset + n > state_floats_) throw std::out_of_range("Optimizer::update: range outside the state");
  if (cfg_.kind == OptimizerKind::sgd) {
    dev_.sgd(w, g, m_.size() ? m_.data() + state_offset : nullptr, n, static_cast<float>(cfg_.lr),
             static_cast<float>(cfg_.momentum), static_cast<float>(cfg_.weight_decay), nonfinite_flag);
    return;
  }
  if (t_ < 1) throw std::logic_error("Optimizer::update: AdamW before begin_step()");
  const AdamWScalars s = adamw_scalars(cfg_.lr, cfg_.beta1, cfg_.beta2, cfg_.eps, cfg_.weight_decay, t_, cfg_.bias_correction);
  dev_.adamw(w, g, m_.data() + state_offset, v_.data() + state_offset, n, s, nonfinite_flag);
}

}  // namespace dpscale
