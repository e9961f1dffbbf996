// mlp.h — the MLP replica (a Model, model.h): forward, loss and backward over the flat buffers.
//
// One training step, as data flows:
//   forward(x)            layer by layer: GEMM, then bias + ReLU fused in one pass
//   loss(labels, scale)   softmax cross-entropy; dlogits and the loss slot scaled by `scale`
//   backward(x, hook)     last layer first: dW (GEMM, β=0), db (column sum), hook(W), hook(b),
//                         then dX (GEMM, β=0) masked by ReLU'; hook sees each gradient the
//                         moment it is written, which is where data-parallel sync starts
//   sgd_step()            one pass over the flat buffers, the finite check folded in (Model)
// All buffers are allocated once, for the largest batch; a step allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "device.h"
#include "mlp_spec.h"
#include "model.h"
#include "param_layout.h"

namespace dpscale {

class Mlp : public Model {
 public:
  Mlp(Device& dev, MlpSpec spec, int max_batch);

  const MlpSpec& spec() const { return spec_; }

  // nn.Linear's default init: weights and biases of layer i uniform in ±1/sqrt(in_i), drawn
  // from CounterRng(seed, stream = 2i for the weight, 2i+1 for the bias), element j = index j
  // in row-major order. Independent of world size, rank and backend.
  void init_params(uint64_t seed) override;

  // Forward of `batch` rows of x ([batch, in], device memory). Returns the logits [batch, out].
  const float* run_forward(const float* x, int batch) override;
  // Softmax cross-entropy of the last forward's logits (one label per row). dlogits = (p - y)·grad_scale; the loss
  // slot of grads() receives Σ loss · grad_scale (added to it with `accumulate`); loss_mean()
  // the plain mean over these rows.
  void loss(const int32_t* labels, int batch, float grad_scale, bool accumulate = false) override;
  // Backward of the last forward/loss. Calls listener (may be null) after each tensor.
  // `accumulate` adds the gradients to those already in grads() (PyTorch's .grad accumulation,
  // for gradient accumulation over micro-batches: dW with GEMM β = 1, db through a scratch
  // column sum) instead of overwriting them.
  void run_backward(const float* x, int batch, GradListener* listener, bool accumulate) override;
  int64_t count_correct(const int32_t* labels, int batch) override;

 private:
  MlpSpec spec_;
  std::vector<DeviceBuffer<float>> acts_;  // acts_[l] = output of layer l ([batch, widths[l+1]])
  DeviceBuffer<float> dbuf_a_, dbuf_b_;    // ping-pong buffers for dY / dX
  const float* last_input_ = nullptr;
};

}  // namespace dpscale
