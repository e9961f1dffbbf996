// adamw.h — AdamW as torch.optim.AdamW computes it (its single-tensor path, fp32 tensors), one
// element at a time, host and device alike (the CPU loop and the CUDA kernel both call it):
//
//   w ← w · (1 − lr·λ)                                  decoupled weight decay, first
//   m ← β1·m + (1 − β1)·g                               exp_avg.mul_(β1).add_(g, alpha=1 − β1)
//   v ← β2·v + (1 − β2)·g²
//   w ← w − (lr / (1 − β1ᵗ)) · m / (√v / √(1 − β2ᵗ) + ε)
//
// (torch 1.13, Debian's python3-torch, the reference tests/models/test_adamw_torch.py runs.)
// The step's scalars are worked out once on the host in double, as PyTorch does in Python, and
// rounded to float where PyTorch hands them to its fp32 kernels (AdamWScalars). m and v are
// fp32 whatever the parameters are.
#pragma once

#include <cmath>

#include "hd.h"

namespace dpscale {

// One step t's scalars (t counted from 1).
struct AdamWScalars {
  float decay = 1.0f;       // 1 − lr·λ
  float b1 = 0.9f, one_minus_b1 = 0.1f;
  float b2 = 0.999f, one_minus_b2 = 0.001f;
  float step_size = 0.0f;   // lr / (1 − β1ᵗ)
  float bc2_sqrt = 1.0f;    // √(1 − β2ᵗ)
  float eps = 1e-8f;
};

inline AdamWScalars adamw_scalars(double lr, double beta1, double beta2, double eps, double weight_decay, long t,
                                  bool bias_correction = true) {
  AdamWScalars s;
  s.decay = static_cast<float>(1.0 - lr * weight_decay);
  s.b1 = static_cast<float>(beta1);
  s.one_minus_b1 = static_cast<float>(1.0 - beta1);
  s.b2 = static_cast<float>(beta2);
  s.one_minus_b2 = static_cast<float>(1.0 - beta2);
  const double bc1 = bias_correction ? 1.0 - std::pow(beta1, static_cast<double>(t)) : 1.0;
  const double bc2 = bias_correction ? 1.0 - std::pow(beta2, static_cast<double>(t)) : 1.0;
  s.step_size = static_cast<float>(lr / bc1);
  s.bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  s.eps = static_cast<float>(eps);
  return s;
}

namespace ew {

// Returns the new weight; updates *m and *v.
DPSCALE_HD inline float adamw_update(float w, float g, float* m, float* v, const AdamWScalars& s) {
  w = w * s.decay;
  *m = *m * s.b1 + s.one_minus_b1 * g;
  *v = *v * s.b2 + s.one_minus_b2 * (g * g);
  const float denom = sqrtf(*v) / s.bc2_sqrt + s.eps;
  return w + (-s.step_size) * (*m / denom);
}

}  // namespace ew
}  // namespace dpscale
