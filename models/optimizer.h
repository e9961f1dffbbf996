// optimizer.h — the update rule (--optimizer sgd | adamw) over ranges of the flat buffers, with
// its state of its own: SGD's momentum buffer, AdamW's two fp32 moments (adamw.h).
//
//   Optimizer opt(dev, cfg, state_floats)   state for `state_floats` elements, allocated and
//                                           zeroed now (a step allocates nothing)
//   opt.begin_step()                        once per optimizer step (AdamW's t for the bias
//                                           correction)
//   opt.update(w, g, n, state_offset, flag) one range: w[0,n) from g[0,n), with the state at
//                                           [state_offset, state_offset + n)
//
// A data-parallel rank that holds every parameter updates the whole flat buffer in one range
// (state for all of it); a sharded rank updates only its shard's ranges, laid end to end in a
// state as large as the shard — which is what optimizer-state sharding saves. The rule is
// element-wise, so a range updated alone gives the bits the whole buffer would.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device.h"

namespace dpscale {

enum class OptimizerKind { sgd, adamw };
const std::vector<std::string>& optimizer_names();  // in OptimizerKind's order
OptimizerKind parse_optimizer(const std::string& name);  // std::invalid_argument if unknown
const char* optimizer_name(OptimizerKind k);

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::sgd;
  double lr = 0.01;
  double momentum = 0.0;      // SGD
  double weight_decay = 0.0;  // SGD: added to the gradient; AdamW: decoupled
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // AdamW, torch.optim.AdamW's defaults
  bool bias_correction = true;  // AdamW; off only in the test that must then fail
};

class Optimizer {
 public:
  Optimizer(Device& dev, OptimizerConfig cfg, int64_t state_floats);

  void begin_step() { ++t_; }
  void update(float* w, const float* g, int64_t n, int64_t state_offset, float* nonfinite_flag);

  // Bytes of state this optimizer holds (SGD without momentum: none; with: one float per
  // element; AdamW: two).
  int64_t state_bytes() const { return static_cast<int64_t>(m_.nbytes() + v_.nbytes()); }
  const OptimizerConfig& config() const { return cfg_; }
  long steps() const { return t_; }

 private:
  Device& dev_;
  OptimizerConfig cfg_;
  int64_t state_floats_;
  DeviceBuffer<float> m_, v_;  // SGD: the velocity in m_; AdamW: exp_avg, exp_avg_sq
  long t_ = 0;
};

}  // namespace dpscale
