// gemm_accuracy.h — is a library's sgemm right? Its result against a float64 reference, within
// the bound that fp32 arithmetic allows whatever order the library adds in.
//
// The bound (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §3.1, (3.5)):
// each c_ij = Σ_p a_ip·b_pj is an inner product of length k. Computed in fp32 in any order —
// blocked, split across threads or k-panels, with or without FMA — each of its k products and
// k − 1 additions rounds at most once, so
//   |ĉ_ij − c_ij| ≤ γ_k · Σ_p |a_ip·b_pj|,   γ_k = k·u / (1 − k·u),   u = 2⁻²⁴ (fp32's unit roundoff).
// α·(…) + β·c0 adds at most two more roundings (the scaling, the addition), so we check
//   |ĉ_ij − c_ij| ≤ γ_{k+2} · (|α|·Σ_p |a_ip·b_pj| + |β·c0_ij|)
// with c_ij and the magnitude sum computed in float64 (their own error, ~k·2⁻⁵³ relative, is
// 2⁻²⁹ of the bound: no margin is needed for it). Any correct fp32 GEMM stays inside the bound; a
// kernel that drops, repeats or misplaces a term, or computes in a narrower format (bf16 inputs:
// u = 2⁻⁹ per product) leaves it on ordinary data — and a library that is wrong is never chosen.
#pragma once

#include <string>

#include "gemm_library.h"
#include "step_gemms.h"

namespace dpscale {

// γ_{k+2} for fp32: the factor of the magnitude sum above.
double fp32_gemm_error_factor(int k);

struct GemmCheck {
  bool ok = true;
  double worst = 0.0;       // the largest |ĉ − c| / bound over the elements checked (≤ 1 when ok)
  long long checked = 0;    // elements compared
  std::string where;        // the worst element: "row 3, col 17: 1.2345 against 1.2346 (bound 3e-05)"
};

// Compares `c` (the library's result; `c0` the C it started from, read only where beta != 0)
// with the float64 reference of shape `s`: every element where m·n ≤ 65 536, else every element
// of 4 rows and 4 columns (the first, the last, two inside: edge tiles are where kernels go
// wrong).
GemmCheck check_gemm_result(const GemmShape& s, float alpha, const float* a, const float* b, float beta,
                            const float* c0, const float* c);

// Runs `lib` once on shape `s` with data uniform in [−1, 1) (a fixed seed) and checks it. C
// starts as a sentinel (β = 0) or random data (β = 1), so a call that leaves C alone fails.
GemmCheck check_gemm_library(GemmLibrary& lib, const GemmShape& s, float beta = 0.0f);

}  // namespace dpscale
