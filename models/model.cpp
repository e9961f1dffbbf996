// model.cpp — what every model shares: the flat buffers, the update, the losses and the checks.
#include "model.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "core/fnv1a.h"
#include "models/finite_check.h"

namespace dpscale {

namespace {
// The small device scalars of loss_mean_ (model.h): 0 mean, 1 slot copy, 2 flag, 3 scratch, 4 sum.
constexpr int kFlag = 2, kMicroLoss = 3, kMicroSum = 4, kLossSlots = 5;
}  // namespace

Model::Model(Device& dev, ParamLayout layout, int max_batch)
    : dev_(dev),
      layout_(std::move(layout)),
      max_batch_(max_batch),
      params_(dev, static_cast<size_t>(layout_.param_buffer_count())),
      grads_(dev, static_cast<size_t>(layout_.grad_buffer_count())),
      loss_mean_(dev, kLossSlots) {
  if (max_batch < 1) throw std::invalid_argument("Model: max_batch must be >= 1");
  // Zero once, padding included: nothing writes the padding afterwards, so it stays zero in the
  // all-reduces, the SGD loop, the finite checks and the checksums.
  dev_.fill(params_.data(), 0.0f, layout_.param_buffer_count());
  dev_.fill(grads_.data(), 0.0f, layout_.grad_buffer_count());
  dev_.fill(loss_mean_.data(), 0.0f, kLossSlots);
}

void Model::add_into(float* dst, const float* src, int64_t n) {
  // Device::add takes an int count; a tied embedding's gradient may pass 2^31 floats one day.
  constexpr int64_t kMaxChunk = std::numeric_limits<int>::max();
  for (int64_t i = 0; i < n; i += kMaxChunk) {
    dev_.add(dst + i, src + i, static_cast<int>(std::min(kMaxChunk, n - i)));
  }
}

std::vector<float> Model::params_to_host() {
  std::vector<float> host(static_cast<size_t>(layout_.param_buffer_count()));
  dev_.download(host.data(), params_.data(), host.size() * sizeof(float));
  return host;
}

void Model::params_from_host(const std::vector<float>& host) {
  if (static_cast<int64_t>(host.size()) != layout_.param_buffer_count()) {
    throw std::invalid_argument("Model::params_from_host: size mismatch");
  }
  // Only the tensors are taken: the padding stays zero whatever the caller's copy holds there.
  std::vector<float> clean(host.size(), 0.0f);
  for (const FlatTensor& t : layout_.tensors()) {
    std::copy(host.begin() + t.offset, host.begin() + t.offset + t.count, clean.begin() + t.offset);
  }
  dev_.upload(params_.data(), clean.data(), clean.size() * sizeof(float));
  velocity_ = DeviceBuffer<float>();  // momentum restarts with new weights
}

void Model::softmax_loss(const float* logits, const int32_t* labels, int rows, int cols, float grad_scale,
                         float* dlogits, bool accumulate) {
  float* slot = grads_.data() + layout_.loss_slot();
  dev_.softmax_xent(logits, labels, rows, cols, grad_scale, dlogits, loss_mean_.data(),
                    accumulate ? loss_mean_.data() + kMicroLoss : slot, grad_scale);
  if (accumulate) add_into(slot, loss_mean_.data() + kMicroLoss, 1);
}

void Model::allocate_optimizer_state(const SgdConfig& cfg) {
  if (cfg.momentum > 0.0f && velocity_.size() == 0) {
    velocity_ = DeviceBuffer<float>(dev_, static_cast<size_t>(layout_.param_buffer_count()));
    dev_.fill(velocity_.data(), 0.0f, layout_.param_buffer_count());
  }
}

void Model::sgd_step(const SgdConfig& cfg, bool check_finite) {
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

float Model::loss_mean() {
  float v = 0.0f;
  dev_.download(&v, loss_mean_.data(), sizeof(float));
  return v;
}

StepLosses Model::read_losses() {
  queue_losses();
  return take_losses();
}

void Model::queue_losses() {
  // The slot is copied beside the mean and the flag on the device, so one download (one wait)
  // reads all three.
  dev_.copy(loss_mean_.data() + 1, grads_.data() + layout_.loss_slot(), sizeof(float));
}

StepLosses Model::take_losses() {
  float v[kLossSlots] = {};
  dev_.download(v, loss_mean_.data(), sizeof v);
  const float kept = kept_micro_ > 0 ? v[kMicroSum] : 0.0f;
  StepLosses l{v[1], (kept + v[0]) / static_cast<float>(kept_micro_ + 1), v[kFlag] != 0.0f};
  kept_micro_ = 0;
  // Lowered only when raised: a clean step queues nothing for the flag.
  if (l.nonfinite) dev_.fill(loss_mean_.data() + kFlag, 0.0f, 1);
  return l;
}

void Model::keep_micro_loss() {
  if (kept_micro_ == 0) {
    dev_.copy(loss_mean_.data() + kMicroSum, loss_mean_.data(), sizeof(float));
  } else {
    add_into(loss_mean_.data() + kMicroSum, loss_mean_.data(), 1);
  }
  ++kept_micro_;
}

float* Model::nonfinite_flag() { return loss_mean_.data() + kFlag; }

void Model::check_finite() {
  dev_.flag_nonfinite(grads_.data(), layout_.grad_buffer_count(), loss_mean_.data() + kFlag);
  dev_.flag_nonfinite(params_.data(), layout_.param_buffer_count(), loss_mean_.data() + kFlag);
}

std::string Model::describe_nonfinite() {
  std::vector<float> g(static_cast<size_t>(layout_.grad_buffer_count()));
  dev_.download(g.data(), grads_.data(), g.size() * sizeof(float));
  std::string found = describe_first_nonfinite(layout_, g.data());
  if (!found.empty()) return "gradient " + found;
  if (!ew::is_finite(g[static_cast<size_t>(layout_.loss_slot())])) return "the loss slot is " + nonfinite_name(g.back());
  found = describe_first_nonfinite(layout_, params_to_host().data());
  return found.empty() ? "" : "parameter " + found;
}

float Model::loss_slot_value() {
  float v = 0.0f;
  dev_.download(&v, grads_.data() + layout_.loss_slot(), sizeof(float));
  return v;
}

uint64_t checksum_floats(const std::vector<float>& v) { return fnv1a64(v.data(), v.size() * sizeof(float)); }

}  // namespace dpscale
