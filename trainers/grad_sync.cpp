// grad_sync.cpp — what every strategy shares: the all-reduce namer, finish() and drain().
#include "grad_sync.h"

#include <algorithm>

namespace dpscale {

GradSync::GradSync(Model& model, Communicator* comm)
    : model_(model), comm_(comm), timer_(comm ? model.device().make_interval_timer() : nullptr) {
  if (comm_) comm_->set_namer([this](const float* data, size_t count) { return name_allreduce(data, count); });
}

GradSync::~GradSync() {
  if (comm_) comm_->set_namer({});
}

std::string GradSync::name_allreduce(const float* data, size_t count) const {
  const ParamLayout& layout = model_.layout();
  const int64_t begin = data - model_.grads();
  const int64_t end = std::min<int64_t>(begin + static_cast<int64_t>(count), layout.param_buffer_count());  // not the slot
  std::vector<std::string> names;
  for (const FlatTensor& t : layout.tensors()) {
    if (t.offset < end && t.offset + t.count > begin) names.push_back(t.name());
  }
  std::string what = names.empty()       ? "the gradient buffer"
                     : names.size() == 1 ? "tensor " + names[0]
                                         : "bucket " + names.front() + " .. " + names.back() + " (" +
                                               std::to_string(names.size()) + " tensors)";
  return what + " in step " + std::to_string(steps_done_.load() + 1) + " (warm-up steps counted)";
}

void GradSync::use_grad_format(GradFormat f) {
  format_ = f;
  if (comm_) comm_->set_grad_format(f, model_.grads() + model_.layout().loss_slot());
}

int64_t GradSync::wire_bytes(const float* data, int64_t count) const {
  const float* slot = model_.grads() + model_.layout().loss_slot();
  const bool holds_slot = slot >= data && slot < data + count;
  return static_cast<int64_t>(grad_wire_bytes(format_, static_cast<size_t>(count), holds_slot));
}

int64_t GradSync::resident_param_bytes() const {
  return model_.layout().param_buffer_count() * static_cast<int64_t>(sizeof(float));
}

int64_t GradSync::resident_grad_bytes() const {
  return model_.layout().grad_buffer_count() * static_cast<int64_t>(sizeof(float));
}

SyncStats GradSync::report() const {
  SyncStats s = stats();
  s.param_bytes = resident_param_bytes();
  s.grad_bytes = resident_grad_bytes();
  s.optim_bytes = optimizer_state_bytes();
  return s;
}

void GradSync::use_optimizer(const OptimizerConfig& cfg) {
  optimizer_ = std::make_unique<Optimizer>(model_.device(), cfg, state_floats());
}

void GradSync::update(bool check_finite) {
  // Over the padding too (one pass): zero gradient, parameter and state stay zero. Not the loss
  // slot (past the parameters): its value is the step's loss, which the host reads and checks.
  optimizer_->begin_step();
  optimizer_->update(model_.params(), model_.grads(), model_.layout().param_buffer_count(), 0,
                     check_finite ? model_.nonfinite_flag() : nullptr);
}

void GradSync::finish() {
  if (!comm_) return;
  timer_->start();  // queued after backward: the interval begins when backward has drained
  complete();
  timer_->stop();
}

void GradSync::drain() {
  if (!comm_) return;
  comm_->drain();  // outside the interval: the host checks on the collectives once per step
  ++steps_done_;
}

int64_t count_with_loss_slot(const ParamLayout& layout, int last_tensor, int64_t count) {
  const bool carries_loss = last_tensor + 1 == static_cast<int>(layout.tensors().size());
  return count + (carries_loss ? 1 : 0);
}

}  // namespace dpscale
