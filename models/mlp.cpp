// mlp.cpp — forward, loss, backward and SGD over the flat buffers.
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
#include "models/finite_check.h"
#include "core/fnv1a.h"

namespace dpscale {

namespace {
// The small device scalars of loss_mean_ (mlp.h): 0 mean, 1 slot copy, 2 flag, 3 scratch, 4 sum.
constexpr int kFlag = 2, kMicroSum = 4, kLossSlots = 5;
}  // namespace

Mlp::Mlp(Device& dev, MlpSpec spec, int max_batch)
    : dev_(dev),
      spec_(std::move(spec)),
      layout_(spec_),
      max_batch_(max_batch),
      params_(dev, static_cast<size_t>(layout_.param_buffer_count())),
      grads_(dev, static_cast<size_t>(layout_.grad_buffer_count())),
      dbuf_a_(dev, static_cast<size_t>(max_batch) * spec_.max_width()),
      dbuf_b_(dev, static_cast<size_t>(max_batch) * spec_.max_width()),
      loss_mean_(dev, kLossSlots) {
  if (max_batch < 1) throw std::invalid_argument("Mlp: max_batch must be >= 1");
  for (int l = 0; l < spec_.n_layers(); ++l) {
    acts_.emplace_back(dev, static_cast<size_t>(max_batch) * spec_.widths[l + 1]);
  }
  // Zero once, padding included: nothing writes the padding afterwards, so it stays zero in the
  // all-reduces, the SGD loop, the finite checks and the checksums.
  dev_.fill(params_.data(), 0.0f, layout_.param_buffer_count());
  dev_.fill(grads_.data(), 0.0f, layout_.grad_buffer_count());
  dev_.fill(loss_mean_.data(), 0.0f, kLossSlots);
}

void Mlp::add_into(float* dst, const float* src, int n) { dev_.add(dst, src, n); }

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

std::vector<float> Mlp::params_to_host() {
  std::vector<float> host(static_cast<size_t>(layout_.param_buffer_count()));
  dev_.download(host.data(), params_.data(), host.size() * sizeof(float));
  return host;
}

void Mlp::params_from_host(const std::vector<float>& host) {
  if (static_cast<int64_t>(host.size()) != layout_.param_buffer_count()) {
    throw std::invalid_argument("Mlp::params_from_host: size mismatch");
  }
  // Only the tensors are taken: the padding stays zero whatever the caller's copy holds there.
  std::vector<float> clean(host.size(), 0.0f);
  for (const FlatTensor& t : layout_.tensors()) {
    std::copy(host.begin() + t.offset, host.begin() + t.offset + t.count, clean.begin() + t.offset);
  }
  dev_.upload(params_.data(), clean.data(), clean.size() * sizeof(float));
  velocity_ = DeviceBuffer<float>();  // momentum restarts with new weights
}

const float* Mlp::forward(const float* x, int batch) {
  if (batch < 1 || batch > max_batch_) throw std::invalid_argument("Mlp::forward: bad batch");
  last_input_ = x;
  const float* in = x;
  for (int l = 0; l < spec_.n_layers(); ++l) {
    const int n_in = spec_.widths[l], n_out = spec_.widths[l + 1];
    const FlatTensor& w = layout_.weight(l);
    const FlatTensor& b = layout_.bias(l);
    float* y = acts_[l].data();
    // (B,in) x (out,in)^T + b -> (B,out), then ReLU but on the logits
    dev_.linear_forward(in, params_.data() + w.offset, params_.data() + b.offset, y, batch, n_in, n_out,
                        l + 1 < spec_.n_layers());
    in = y;
  }
  return in;
}

void Mlp::loss(const int32_t* labels, int batch, float grad_scale, bool accumulate) {
  float* slot = grads_.data() + layout_.loss_slot();
  dev_.softmax_xent(acts_.back().data(), labels, batch, spec_.out_width(), grad_scale,
                    dbuf_a_.data(), loss_mean_.data(), accumulate ? loss_mean_.data() + 3 : slot,
                    grad_scale);
  if (accumulate) add_into(slot, loss_mean_.data() + 3, 1);
}

void Mlp::backward(const float* x, int batch, GradListener* listener, bool accumulate) {
  const float beta = accumulate ? 1.0f : 0.0f;
  float* dy = dbuf_a_.data();  // holds dlogits from loss()
  float* dx = dbuf_b_.data();
  for (int l = spec_.n_layers() - 1; l >= 0; --l) {
    const int n_in = spec_.widths[l], n_out = spec_.widths[l + 1];
    const FlatTensor& w = layout_.weight(l);
    const FlatTensor& b = layout_.bias(l);
    const float* in = l == 0 ? x : acts_[l - 1].data();
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
    dev_.gemm(false, false, batch, n_in, n_out, 1.0f, dy, n_out, params_.data() + w.offset, n_in,
              0.0f, dx, n_in);
    dev_.relu_backward(dx, acts_[l - 1].data(), static_cast<int64_t>(batch) * n_in);
    std::swap(dy, dx);
  }
}

void Mlp::allocate_optimizer_state(const SgdConfig& cfg) {
  if (cfg.momentum > 0.0f && velocity_.size() == 0) {
    velocity_ = DeviceBuffer<float>(dev_, static_cast<size_t>(layout_.param_buffer_count()));
    dev_.fill(velocity_.data(), 0.0f, layout_.param_buffer_count());
  }
}

void Mlp::sgd_step(const SgdConfig& cfg, bool check_finite) {
  float* v = nullptr;
  if (cfg.momentum > 0.0f) {
    allocate_optimizer_state(cfg);
    v = velocity_.data();
  }
  // Over the padding too (one loop): zero gradient, zero parameter, zero velocity stay zero.
  // The loss slot (past the parameters) is not in this pass: its value is the step's global loss,
  // which the host reads and checks itself.
  dev_.sgd(params_.data(), grads_.data(), v, layout_.param_buffer_count(), cfg.lr, cfg.momentum,
           cfg.weight_decay, check_finite ? loss_mean_.data() + kFlag : nullptr);
}

float Mlp::loss_mean() {
  float v = 0.0f;
  dev_.download(&v, loss_mean_.data(), sizeof(float));
  return v;
}

StepLosses Mlp::read_losses() {
  queue_losses();
  return take_losses();
}

void Mlp::queue_losses() {
  // The slot is copied beside the mean and the flag on the device, so one download (one wait)
  // reads all three.
  dev_.copy(loss_mean_.data() + 1, grads_.data() + layout_.loss_slot(), sizeof(float));
}

StepLosses Mlp::take_losses() {
  float v[kLossSlots] = {};
  dev_.download(v, loss_mean_.data(), sizeof v);
  const float kept = kept_micro_ > 0 ? v[kMicroSum] : 0.0f;
  StepLosses l{v[1], (kept + v[0]) / static_cast<float>(kept_micro_ + 1), v[kFlag] != 0.0f};
  kept_micro_ = 0;
  // Lowered only when raised: a clean step queues nothing for the flag.
  if (l.nonfinite) dev_.fill(loss_mean_.data() + kFlag, 0.0f, 1);
  return l;
}

void Mlp::keep_micro_loss() {
  if (kept_micro_ == 0) {
    dev_.copy(loss_mean_.data() + kMicroSum, loss_mean_.data(), sizeof(float));
  } else {
    add_into(loss_mean_.data() + kMicroSum, loss_mean_.data(), 1);
  }
  ++kept_micro_;
}

float* Mlp::nonfinite_flag() { return loss_mean_.data() + kFlag; }

void Mlp::check_finite() {
  dev_.flag_nonfinite(grads_.data(), layout_.grad_buffer_count(), loss_mean_.data() + kFlag);
  dev_.flag_nonfinite(params_.data(), layout_.param_buffer_count(), loss_mean_.data() + kFlag);
}

std::string Mlp::describe_nonfinite() {
  std::vector<float> g(static_cast<size_t>(layout_.grad_buffer_count()));
  dev_.download(g.data(), grads_.data(), g.size() * sizeof(float));
  std::string found = describe_first_nonfinite(layout_, g.data());
  if (!found.empty()) return "gradient " + found;
  if (!ew::is_finite(g[static_cast<size_t>(layout_.loss_slot())])) return "the loss slot is " + nonfinite_name(g.back());
  found = describe_first_nonfinite(layout_, params_to_host().data());
  return found.empty() ? "" : "parameter " + found;
}

float Mlp::loss_slot_value() {
  float v = 0.0f;
  dev_.download(&v, grads_.data() + layout_.loss_slot(), sizeof(float));
  return v;
}

int64_t Mlp::count_correct(const int32_t* labels, int batch) {
  return dev_.count_correct(acts_.back().data(), labels, batch, spec_.out_width());
}

uint64_t checksum_floats(const std::vector<float>& v) { return fnv1a64(v.data(), v.size() * sizeof(float)); }

}  // namespace dpscale
