// model.h — what a trainer trains: a replica with flat parameters and gradients on a Device.
//
// Both models of the library (the MLP, mlp.h; the GPT-2-style decoder, gpt/gpt.h) derive from
// Model. A model supplies its layout (the tensors in backward-completion order), forward, loss,
// backward and init; Model owns what every model shares and the trainers rely on:
//   the flat buffers   params() / grads() laid out by layout(), the loss slot after the gradients
//   the update         sgd_step(): one pass over the flat parameter buffer, the finite check
//                      folded in, whatever the model (the one-device SGD of the triad's
//                      compute phase, the benches and tests; the trainers update through an
//                      Optimizer of optimizer.h, GradSync::update, over the same flat buffers,
//                      so buckets and shards stay zero-copy slices for every model)
//   the losses         the slot, the shard mean, the non-finite flag, micro-batch sums
//   the checks         check_finite(), describe_nonfinite(), nonfinite_flag() (the flag an
//                      Optimizer of optimizer.h reports into: any model, any strategy)
// One training step: forward(x) → loss(labels, scale) → backward(x, listener) → the update.
// The listener sees each gradient tensor the moment backward has finished writing it, in
// layout() order: that is where data-parallel sync starts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device.h"
#include "param_layout.h"

namespace dpscale {

// Told when a gradient tensor has been written (on a GPU: queued on the compute stream).
class GradListener {
 public:
  virtual ~GradListener() = default;
  virtual void on_grad_ready(const FlatTensor& tensor) = 0;
};

// Told before the model reads a parameter tensor, so that a strategy holding only a shard of the
// parameters (ZeRO stage 3: trainers/sync_sharded_params.cpp) can gather the tensor's unit into
// the flat buffer first, prefetch the next ones and release the ones done with. Forward and
// backward each begin with their own call, so the gate knows which order the needs come in.
class ParamGate {
 public:
  virtual ~ParamGate() = default;
  virtual void forward_begins() = 0;
  virtual void backward_begins() = 0;
  virtual void param_needed(const FlatTensor& tensor) = 0;
};

// A step's two losses: the slot after the all-reduce (Σ over all ranks' rows of loss / B, the
// global-batch mean) and this rank's own mean over its rows.
struct StepLosses {
  float global, local;
  bool nonfinite = false;  // the step's finite check found a non-finite gradient or parameter
};

struct SgdConfig {
  float lr = 0.01f;
  float momentum = 0.0f;
  float weight_decay = 0.0f;
};

class Model {
 public:
  virtual ~Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ParamLayout& layout() const { return layout_; }
  Device& device() { return dev_; }
  int max_batch() const { return max_batch_; }

  float* params() { return params_.data(); }
  // Both laid out by layout(): param_buffer_count() floats, padding included; grads() has the
  // loss slot after them.
  float* grads() { return grads_.data(); }

  // The model's own initialisation from `seed`: independent of world size, rank and backend.
  virtual void init_params(uint64_t seed) = 0;
  // Host copies are the flat buffer itself (param_buffer_count() floats, tensors at their layout
  // offsets, zeros between); params_from_host takes only the tensors, so the padding stays zero.
  std::vector<float> params_to_host();
  void params_from_host(const std::vector<float>& host);

  // Forward of `batch` samples of x (device memory, batch × the spec's in_width() floats).
  // Returns the logits.
  const float* forward(const float* x, int batch) {
    if (gate_) gate_->forward_begins();
    return run_forward(x, batch);
  }
  // Softmax cross-entropy of the last forward's logits against `labels` (batch × the spec's
  // labels_per_sample()). The gradient is scaled so that the sum over samples of the per-sample
  // loss times grad_scale is what backward differentiates; the loss slot of grads() receives
  // that sum (added to it with `accumulate`); loss_mean() the plain mean over these samples.
  virtual void loss(const int32_t* labels, int batch, float grad_scale, bool accumulate = false) = 0;
  // Backward of the last forward/loss. Calls listener (may be null) after each tensor, in
  // layout() order. `accumulate` adds the gradients to those already in grads() (PyTorch's .grad
  // accumulation, for micro-batches) instead of overwriting them.
  void backward(const float* x, int batch, GradListener* listener, bool accumulate = false) {
    if (gate_) gate_->backward_begins();
    run_backward(x, batch, listener, accumulate);
  }
  // Correct predictions (argmax == label) of the last forward against labels (waits).
  virtual int64_t count_correct(const int32_t* labels, int batch) = 0;

  // With `check_finite` the same pass is the step's finite check (Device::sgd): every updated
  // weight, which a non-finite gradient (as the update reads it: after the all-reduce) or weight
  // always makes non-finite, into the flag take_losses() reads with the losses. No pass of its
  // own, no fill: see check_finite().
  void sgd_step(const SgdConfig& cfg, bool check_finite = false);
  // Allocates what sgd_step(cfg) keeps between steps (the momentum buffer), so the first
  // update allocates nothing (on CUDA a cudaMalloc, which synchronises the device).
  void allocate_optimizer_state(const SgdConfig& cfg);

  // Non-finite detection (finite_check.h) in passes of their own, for a step without an update
  // (warm-up): the gradient buffer (loss slot included), then the parameters, into the same flag
  // as sgd_step(cfg, true). Queued on the device, read by take_losses() with the losses: no wait.
  // The flag is raised only by a step that found something, and take_losses() lowers it after
  // reading it raised, so a step pays for no clearing.
  void check_finite();
  // The device flag every finite check reports into (a step's optimizer pass, with an
  // Optimizer of optimizer.h, too); read and lowered by take_losses().
  float* nonfinite_flag();
  // After a flag: "gradient layers.0.weight[3, 17] is nan" (gradients first, then parameters);
  // "" when both are finite. Downloads both buffers: for the error path only.
  std::string describe_nonfinite();

  float loss_mean();        // waits for the device
  float loss_slot_value();  // waits for the device
  // Both at once, with one wait: what a training step reads. = queue_losses() + take_losses().
  StepLosses read_losses();
  // The two halves, so a step can queue the copy of the slot, then wait on the host for other
  // things (the communicator's drain), then download: queue_losses() queues a device copy of
  // the slot beside the mean and the flag; take_losses() downloads them (waits). `local` is the
  // mean of this step's micro-batches' shard means (keep_micro_loss()).
  void queue_losses();
  StepLosses take_losses();
  // Gradient accumulation: adds the last loss()'s shard mean to the step's sum on the device, so
  // a micro-batch before the last needs no host wait for its loss.
  void keep_micro_loss();

  // The gate forward and backward tell before each parameter they read (null: none, the
  // parameters are whole in params()). Not owned; set between steps.
  void set_param_gate(ParamGate* gate) { gate_ = gate; }

 protected:
  // The model's own forward and backward (forward() and backward() above, less the gate's calls).
  virtual const float* run_forward(const float* x, int batch) = 0;
  virtual void run_backward(const float* x, int batch, GradListener* listener, bool accumulate) = 0;
  // Tensor `index`'s parameters (backward order), after telling the gate: every read of a
  // parameter in forward and backward goes through here.
  const float* param(int index) {
    const FlatTensor& t = layout_.tensors()[static_cast<size_t>(index)];
    if (gate_) gate_->param_needed(t);
    return params_.data() + t.offset;
  }

  Model(Device& dev, ParamLayout layout, int max_batch);
  // The loss of `rows` rows of logits [rows, cols] (Device::softmax_xent): dlogits =
  // (p - y)·grad_scale; the slot gets Σ loss · grad_scale (added with `accumulate`), the mean
  // slot Σ loss / rows.
  void softmax_loss(const float* logits, const int32_t* labels, int rows, int cols, float grad_scale,
                    float* dlogits, bool accumulate);
  // dst[0..n) += src[0..n) on the device (Device::add: exact under TF32 too).
  void add_into(float* dst, const float* src, int64_t n);

  Device& dev_;
  ParamLayout layout_;
  int max_batch_;
  DeviceBuffer<float> params_, grads_, velocity_;

 private:
  DeviceBuffer<float> loss_mean_;  // [0] the rows' mean loss, [1] a copy of the slot,
                                   // [2] the non-finite flag (1 when a check found one),
                                   // [3] a micro-batch's scaled loss, [4] the sum of the
                                   // step's earlier micro-batches' shard means
  int kept_micro_ = 0;             // micro-batch means summed into [4] this step
  ParamGate* gate_ = nullptr;
};

// FNV-1a 64 over the bytes of a float vector: the replica checksum ranks compare.
uint64_t checksum_floats(const std::vector<float>& v);

}  // namespace dpscale
