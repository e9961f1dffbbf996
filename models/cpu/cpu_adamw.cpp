// cpu_adamw.cpp — the CPU backend's AdamW pass (adamw.h's update in one loop), with the finite
// check folded in as the SGD pass has it: a non-finite gradient makes the updated weight
// non-finite, so testing the weight written covers both (device.h).
#include "cpu_device.h"
#include "models/finite_check.h"

namespace dpscale {

namespace {

template <bool kCheck>
bool adamw_pass(float* w, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s) {
  bool any = false;
  for (int64_t i = 0; i < n; ++i) {
    const float wi = ew::adamw_update(w[i], g[i], &m[i], &v[i], s);
    w[i] = wi;
    if constexpr (kCheck) any |= !ew::is_finite(wi);
  }
  return any;
}

}  // namespace

void CpuDevice::adamw(float* w, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s,
                      float* nonfinite_flag) {
  if (!nonfinite_flag) {
    adamw_pass<false>(w, g, m, v, n, s);
    return;
  }
  if (adamw_pass<true>(w, g, m, v, n, s)) *nonfinite_flag = 1.0f;
}

}  // namespace dpscale
