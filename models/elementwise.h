// elementwise.h — the element-wise math of a training step, written once for both backends.
//
// Every function is `DPSCALE_HD inline`: the CPU backend calls them in plain loops, the CUDA
// backend calls the very same functions from its kernels (models/cuda/kernels.cu). The CPU
// tests therefore check the arithmetic the GPU runs.
#pragma once

#include <cmath>
#include <cstdint>

#include "models/hd.h"

namespace dpscale::ew {

// Forward epilogue of a hidden layer: y = relu(x·Wᵀ + b), fused into one pass over y.
DPSCALE_HD inline float bias_relu(float acc, float bias) {
  const float s = acc + bias;
  return s > 0.0f ? s : 0.0f;
}
// Forward epilogue of the last layer: logits = x·Wᵀ + b.
DPSCALE_HD inline float bias_only(float acc, float bias) { return acc + bias; }

// Backward through ReLU, given the layer's post-activation output y = relu(z):
// dz = dy where z > 0 (equivalently y > 0), else 0.
DPSCALE_HD inline float relu_grad(float dy, float y) { return y > 0.0f ? dy : 0.0f; }

// Softmax cross-entropy of one row of logits against its label.
// Writes dlogits[j] = (softmax(z)_j - [j == label]) * grad_scale and returns the row's loss
// -log softmax(z)_label, computed stably as logsumexp(z) - z_label with max subtraction.
// Each exp is computed once: dz first holds exp(z_j - max), then the gradient (dz may not
// alias z).
DPSCALE_HD inline float softmax_xent_row(const float* z, int label, int n, float grad_scale,
                                         float* dz) {
  float m = z[0];
  for (int j = 1; j < n; ++j) m = z[j] > m ? z[j] : m;
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) {
    dz[j] = expf(z[j] - m);
    sum += dz[j];
  }
  const float inv = 1.0f / sum;
  for (int j = 0; j < n; ++j) dz[j] = (dz[j] * inv - (j == label ? 1.0f : 0.0f)) * grad_scale;
  return logf(sum) + m - z[label];
}

// Index of the largest logit (first one on ties), for accuracy.
DPSCALE_HD inline int argmax_row(const float* z, int n) {
  int best = 0;
  for (int j = 1; j < n; ++j) best = z[j] > z[best] ? j : best;
  return best;
}

// SGD with optional momentum and weight decay, as torch.optim.SGD (dampening 0, no Nesterov):
//   g' = g + wd·w;  v = momentum·v + g';  w -= lr·(momentum > 0 ? v : g')
// v is untouched when momentum == 0. Returns the new weight.
DPSCALE_HD inline float sgd_update(float w, float g, float* v, float lr, float momentum,
                                   float weight_decay) {
  const float gd = g + weight_decay * w;
  if (momentum > 0.0f) {
    *v = momentum * *v + gd;
    return w - lr * *v;
  }
  return w - lr * gd;
}

}  // namespace dpscale::ew
