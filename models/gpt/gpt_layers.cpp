// gpt_layers.cpp — host loops of the transformer's non-GEMM layers (gpt_layers.h).
#include "gpt_layers.h"

#include <cmath>
#include <cstring>

#include "models/gpt/gpt_math.h"

namespace dpscale::gpt_cpu {

void encoder_forward(float* out, const float* tokens, const float* wte, const float* wpe, int B, int S, int d) {
  for (int64_t n = 0; n < int64_t{B} * S; ++n) {
    const float* e = wte + static_cast<int64_t>(tokens[n]) * d;
    const float* p = wpe + (n % S) * d;
    float* o = out + n * d;
    for (int i = 0; i < d; ++i) o[i] = e[i] + p[i];
  }
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const float* tokens, int B, int S, int d,
                      int context, bool accumulate) {
  if (!accumulate) std::memset(dwpe, 0, sizeof(float) * static_cast<size_t>(context) * d);
  for (int64_t n = 0; n < int64_t{B} * S; ++n) {
    const float* g = dout + n * d;
    float* e = dwte + static_cast<int64_t>(tokens[n]) * d;
    float* p = dwpe + (n % S) * d;
    for (int i = 0; i < d; ++i) {
      e[i] += g[i];
      p[i] += g[i];
    }
  }
}

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                       int d) {
  for (int64_t n = 0; n < N; ++n) {
    const float* x = inp + n * d;
    // Two passes in double: the variance of nearly equal values loses nothing to cancellation.
    double m = 0.0;
    for (int i = 0; i < d; ++i) m += x[i];
    m /= d;
    double v = 0.0;
    for (int i = 0; i < d; ++i) v += (x[i] - m) * (x[i] - m);
    v /= d;
    const float s = static_cast<float>(1.0 / std::sqrt(v + kLayerNormEps));
    const float mf = static_cast<float>(m);
    float* o = out + n * d;
    for (int i = 0; i < d; ++i) o[i] = (x[i] - mf) * s * w[i] + b[i];
    mean[n] = mf;
    rstd[n] = s;
  }
}

void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int d, bool accumulate) {
  if (!accumulate) {
    std::memset(dw, 0, sizeof(float) * static_cast<size_t>(d));
    std::memset(db, 0, sizeof(float) * static_cast<size_t>(d));
  }
  for (int64_t n = 0; n < N; ++n) {
    const float* x = inp + n * d;
    const float* g = dout + n * d;
    const float m = mean[n], s = rstd[n];
    // dx = rstd · (dnorm − mean(dnorm) − norm · mean(dnorm · norm)), dnorm = g · w.
    double dnorm_mean = 0.0, dnorm_norm_mean = 0.0;
    for (int i = 0; i < d; ++i) {
      const float norm = (x[i] - m) * s;
      const float dnorm = g[i] * w[i];
      dnorm_mean += dnorm;
      dnorm_norm_mean += static_cast<double>(dnorm) * norm;
    }
    const float a = static_cast<float>(dnorm_mean / d), c = static_cast<float>(dnorm_norm_mean / d);
    float* dx = dinp + n * d;
    for (int i = 0; i < d; ++i) {
      const float norm = (x[i] - m) * s;
      dw[i] += g[i] * norm;
      db[i] += g[i];
      dx[i] += (g[i] * w[i] - a - norm * c) * s;
    }
  }
}

void causal_softmax(float* p, int S) {
  for (int t = 0; t < S; ++t) {
    float* row = p + static_cast<int64_t>(t) * S;
    float mx = row[0];
    for (int j = 1; j <= t; ++j) mx = row[j] > mx ? row[j] : mx;
    double sum = 0.0;
    for (int j = 0; j <= t; ++j) {
      row[j] = std::exp(row[j] - mx);
      sum += row[j];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int j = 0; j <= t; ++j) row[j] *= inv;
    for (int j = t + 1; j < S; ++j) row[j] = 0.0f;  // the future is masked
  }
}

void causal_softmax_backward(float* ds, const float* p, int S, float scale) {
  for (int t = 0; t < S; ++t) {
    const float* pr = p + static_cast<int64_t>(t) * S;
    float* g = ds + static_cast<int64_t>(t) * S;
    double dot = 0.0;
    for (int j = 0; j <= t; ++j) dot += static_cast<double>(pr[j]) * g[j];
    const float df = static_cast<float>(dot);
    for (int j = 0; j <= t; ++j) g[j] = scale * pr[j] * (g[j] - df);
    for (int j = t + 1; j < S; ++j) g[j] = 0.0f;
  }
}

void gelu_forward(float* out, const float* inp, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gpt_math::gelu(inp[i]);
}

void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dinp[i] = dout[i] * gpt_math::gelu_grad(inp[i]);
}

}  // namespace dpscale::gpt_cpu
