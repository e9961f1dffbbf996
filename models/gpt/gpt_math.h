// gpt_math.h — the transformer's element-wise maths, written once for both backends
// (DPSCALE_HD: host and device): GELU's tanh form and its derivative.
//   gelu(x)  = 0.5·x·(1 + tanh(u)),  u = √(2/π)·(x + 0.044715·x³)
//   gelu'(x) = 0.5·(1 + tanh(u)) + 0.5·x·(1 − tanh²(u))·√(2/π)·(1 + 3·0.044715·x²)
// tanh(u) = 1 − 2/(e^{2u} + 1): one exp instead of libm's tanhf (expm1 inside), which was the
// largest item of gpt-tiny's CPU step. GELU uses tanh only as 1 ± tanh and 1 − tanh², where this
// form's absolute error (a few ε_32) is what matters; e^{2u} overflowing to inf gives 1,
// underflowing to 0 gives −1, and NaN stays NaN.
#pragma once

#include <cmath>

#include "models/hd.h"

namespace dpscale::gpt_math {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

DPSCALE_HD inline float tanh_exp(float u) { return 1.0f - 2.0f / (expf(2.0f * u) + 1.0f); }

DPSCALE_HD inline float gelu(float x) {
  return 0.5f * x * (1.0f + tanh_exp(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
}

DPSCALE_HD inline float gelu_grad(float x) {
  const float th = tanh_exp(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
}

}  // namespace dpscale::gpt_math
