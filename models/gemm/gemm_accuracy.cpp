// gemm_accuracy.cpp — the float64 reference check of gemm_accuracy.h.
#include "gemm_accuracy.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <vector>

#include "models/data/rng.h"

namespace dpscale {

double fp32_gemm_error_factor(int k) {
  const double u = std::ldexp(1.0, -24);
  const double ku = static_cast<double>(k + 2) * u;
  return ku / (1.0 - ku);
}

namespace {

// op(A)[i][p] and op(B)[p][j] of row-major stored operands.
float op_a(const GemmShape& s, const float* a, int i, int p) {
  return s.trans_a ? a[static_cast<long long>(p) * s.lda + i] : a[static_cast<long long>(i) * s.lda + p];
}
float op_b(const GemmShape& s, const float* b, int p, int j) {
  return s.trans_b ? b[static_cast<long long>(j) * s.ldb + p] : b[static_cast<long long>(p) * s.ldb + j];
}

std::vector<int> sample(int n) {
  std::set<int> at = {0, n - 1, n / 3, (2 * n) / 3};
  return {at.begin(), at.end()};
}

}  // namespace

GemmCheck check_gemm_result(const GemmShape& s, float alpha, const float* a, const float* b, float beta,
                            const float* c0, const float* c) {
  GemmCheck r;
  const double factor = fp32_gemm_error_factor(s.k);
  auto check = [&](int i, int j) {
    double ref = 0.0, mag = 0.0;
    for (int p = 0; p < s.k; ++p) {
      const double prod = static_cast<double>(op_a(s, a, i, p)) * static_cast<double>(op_b(s, b, p, j));
      ref += prod;
      mag += std::fabs(prod);
    }
    const long long at = static_cast<long long>(i) * s.ldc + j;
    const double start = beta != 0.0f ? static_cast<double>(c0[at]) : 0.0;
    ref = alpha * ref + beta * start;
    const double bound = factor * (std::fabs(alpha) * mag + std::fabs(beta * start));
    const double err = std::fabs(static_cast<double>(c[at]) - ref);
    // A non-finite result (NaN: err is NaN) is a failure, never a pass.
    double ratio = bound > 0.0 ? err / bound : (err == 0.0 ? 0.0 : INFINITY);
    if (std::isnan(ratio)) ratio = INFINITY;
    ++r.checked;
    if (r.where.empty() || ratio > r.worst) {
      r.worst = ratio;
      char buf[160];
      std::snprintf(buf, sizeof buf, "row %d, col %d: %.8g against %.8g (bound %.3g)", i, j, c[at], ref, bound);
      r.where = buf;
    }
  };
  if (static_cast<long long>(s.m) * s.n <= 65536) {
    for (int i = 0; i < s.m; ++i) {
      for (int j = 0; j < s.n; ++j) check(i, j);
    }
  } else {
    const std::vector<int> rows = sample(s.m), cols = sample(s.n);
    for (int i : rows) {
      for (int j = 0; j < s.n; ++j) check(i, j);
    }
    for (int j : cols) {
      for (int i = 0; i < s.m; ++i) check(i, j);
    }
  }
  r.ok = r.worst <= 1.0;
  return r;
}

GemmCheck check_gemm_library(GemmLibrary& lib, const GemmShape& s, float beta) {
  const CounterRng rng(17, 3);
  std::vector<float> a(static_cast<size_t>(s.a_count())), b(static_cast<size_t>(s.b_count())),
      c0(static_cast<size_t>(s.c_count()));
  uint64_t i = 0;
  for (float& x : a) x = rng.uniform_symmetric(i++, 1.0f);
  for (float& x : b) x = rng.uniform_symmetric(i++, 1.0f);
  // β = 0: a sentinel far from any result, so a library that leaves C alone fails.
  for (float& x : c0) x = beta != 0.0f ? rng.uniform_symmetric(i++, 1.0f) : 1.0e6f;
  std::vector<float> c = c0;
  lib.sgemm(s.trans_a, s.trans_b, s.m, s.n, s.k, 1.0f, a.data(), s.lda, b.data(), s.ldb, beta, c.data(), s.ldc);
  return check_gemm_result(s, 1.0f, a.data(), b.data(), beta, c0.data(), c.data());
}

}  // namespace dpscale
