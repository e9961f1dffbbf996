// mlp.cpp — the MLP's init, forward, loss and backward over the flat buffers (the update: model.cpp).
//
// Layer l computes Y = X·Wᵀ + b with W stored [out, in] row-major (nn.Linear's layout), so the
// three GEMMs of a layer are, in row-major terms:
//   forward   Y[B,out]  = X[B,in] · W[out,in]ᵀ        gemm(N, T), + b and ReLU (Device::linear_forward)
//   weight    dW[out,in] = dY[B,out]ᵀ · X[B,in]        gemm(T, N), β = 0: overwrite, no zero_grad
//                                                     (β = 1 when accumulating micro-batches)
//   input     dX[B,in]  = dY[B,out] · W[out,in]        gemm(N, N), β = 0
#include "mlp.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/data/rng.h"

namespace dpscale {

Mlp::Mlp(Device& dev, MlpSpec spec, int max_batch)
    : Model(dev, ParamLayout(spec), max_batch),
      spec_(std::move(spec)),
      dbuf_a_(dev, static_cast<size_t>(max_batch) * spec_.max_width()),
      dbuf_b_(dev, static_cast<size_t>(max_batch) * spec_.max_width()) {
  for (int l = 0; l < spec_.n_layers(); ++l) {
    acts_.emplace_back(dev, static_cast<size_t>(max_batch) * spec_.widths[l + 1]);
  }
}

void Mlp::init_params(uint64_t seed) {
  std::vector<float> host(static_cast<size_t>(layout_.param_buffer_count()), 0.0f);
  for (const FlatTensor& t : layout_.tensors()) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(spec_.widths[t.layer]));
    const CounterRng rng(seed, 2 * static_cast<uint64_t>(t.layer) + (t.is_bias ? 1 : 0));
    float* dst = host.data() + t.offset;
    for (int64_t j = 0; j < t.count; ++j) dst[j] = rng.uniform_symmetric(j, bound);
  }
  params_from_host(host);
}

const float* Mlp::run_forward(const float* x, int batch) {
  if (batch < 1 || batch > max_batch_) throw std::invalid_argument("Mlp::forward: bad batch");
  last_input_ = x;
  const float* in = x;
  for (int l = 0; l < spec_.n_layers(); ++l) {
    const int n_in = spec_.widths[l], n_out = spec_.widths[l + 1];
    const FlatTensor& w = layout_.weight(l);
    const FlatTensor& b = layout_.bias(l);
    float* y = acts_[l].data();
    // (B,in) x (out,in)^T + b -> (B,out), then ReLU but on the logits
    dev_.linear_forward(in, param(w.index), param(b.index), y, batch, n_in, n_out,
                        l + 1 < spec_.n_layers());
    in = y;
  }
  return in;
}

void Mlp::loss(const int32_t* labels, int batch, float grad_scale, bool accumulate) {
  softmax_loss(acts_.back().data(), labels, batch, spec_.out_width(), grad_scale, dbuf_a_.data(), accumulate);
}

void Mlp::run_backward(const float* x, int batch, GradListener* listener, bool accumulate) {
  const float beta = accumulate ? 1.0f : 0.0f;
  float* dy = dbuf_a_.data();  // holds dlogits from loss()
  float* dx = dbuf_b_.data();
  for (int l = spec_.n_layers() - 1; l >= 0; --l) {
    const int n_in = spec_.widths[l], n_out = spec_.widths[l + 1];
    const FlatTensor& w = layout_.weight(l);
    const FlatTensor& b = layout_.bias(l);
    const float* in = l == 0 ? x : acts_[l - 1].data();
    // The weight the input gradient reads, asked for before the layer's own gradients (a
    // sharding gate gathers it then: before this layer's gradients go out); layer 0 needs none.
    const float* weight = l > 0 ? param(w.index) : nullptr;
    // dW: (B,out)^T x (B,in) -> (out,in), β = 0 (overwrites: no zero_grad pass needed)
    dev_.gemm(true, false, n_out, n_in, batch, 1.0f, dy, n_out, in, n_in, beta,
              grads_.data() + w.offset, n_in);
    if (listener) listener->on_grad_ready(w);
    if (accumulate) {
      // dx is free until the input gradient below: the column sum lands there, then adds in.
      dev_.column_sum(dy, batch, n_out, dx);
      add_into(grads_.data() + b.offset, dx, n_out);
    } else {
      dev_.column_sum(dy, batch, n_out, grads_.data() + b.offset);
    }
    if (listener) listener->on_grad_ready(b);
    if (l == 0) break;  // the input needs no gradient
    // dX: (B,out) x (out,in) -> (B,in), β = 0; then through the ReLU of layer l-1
    dev_.gemm(false, false, batch, n_in, n_out, 1.0f, dy, n_out, weight, n_in,
              0.0f, dx, n_in);
    dev_.relu_backward(dx, acts_[l - 1].data(), static_cast<int64_t>(batch) * n_in);
    std::swap(dy, dx);
  }
}

int64_t Mlp::count_correct(const int32_t* labels, int batch) {
  return dev_.count_correct(acts_.back().data(), labels, batch, spec_.out_width());
}

}  // namespace dpscale
