// gradcheck.h — what the gradient checks (test_gradcheck.cpp: the MLP, test_gpt_gradcheck.cpp:
// the transformer) share: central finite differences of a double-precision reference loss, and
// the element-wise comparison of a float analytic gradient against them. Each test keeps its own
// reference and its own tolerance, derived for its model; only the arithmetic of the check is here,
// so that both models are held to a check that works the same way.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace dpscale::gradcheck {

// ∂loss/∂p[i] ≈ (loss(p + h·e_i) − loss(p − h·e_i)) / 2h for every i; `loss` takes the whole
// parameter vector.
template <class Loss>
std::vector<double> central_differences(std::vector<double> p, double h, const Loss& loss) {
  std::vector<double> g(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    const double keep = p[i];
    p[i] = keep + h;
    const double up = loss(p);
    p[i] = keep - h;
    const double down = loss(p);
    p[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// An element passes when |g − ref| <= atol + rtol·|ref|. max_rel is taken only over elements with
// |ref| > rel_floor, where a relative error means something.
struct Tolerance {
  double atol, rtol, rel_floor;
};

struct Mismatch {
  int64_t count = 0;
  int64_t first = -1;
  double max_abs = 0.0, max_rel = 0.0;
};

// The elements of `g` outside the tolerance of `ref` (the first five printed when `print`), and
// the largest absolute and relative errors over all of them.
inline Mismatch compare(const std::vector<float>& g, const std::vector<double>& ref, const Tolerance& tol,
                        bool print = true) {
  Mismatch m;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double err = std::abs(static_cast<double>(g[i]) - ref[i]);
    m.max_abs = std::max(m.max_abs, err);
    if (std::abs(ref[i]) > tol.rel_floor) m.max_rel = std::max(m.max_rel, err / std::abs(ref[i]));
    if (!(err <= tol.atol + tol.rtol * std::abs(ref[i]))) {  // NaN counts as a mismatch
      if (print && m.count < 5) {
        std::printf("  mismatch at %zu: analytic %.9g, reference %.9g\n", i, static_cast<double>(g[i]), ref[i]);
      }
      if (m.first < 0) m.first = static_cast<int64_t>(i);
      ++m.count;
    }
  }
  return m;
}

}  // namespace dpscale::gradcheck
