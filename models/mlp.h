// mlp.h — the MLP replica: flat parameters and gradients on a Device, forward, loss, backward, SGD.
//
// One training step, as data flows:
//   forward(x)            layer by layer: GEMM, then bias + ReLU fused in one pass
//   loss(labels, scale)   softmax cross-entropy; dlogits and the loss slot scaled by `scale`
//   backward(x, hook)     last layer first: dW (GEMM, β=0), db (column sum), hook(W), hook(b),
//                         then dX (GEMM, β=0) masked by ReLU'; hook sees each gradient the
//                         moment it is written, which is where data-parallel sync starts
//   sgd_step()            one pass over the flat buffers, the finite check folded in
// All buffers are allocated once, for the largest batch; a step allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "device.h"
#include "mlp_spec.h"
#include "param_layout.h"

namespace dpscale {

// Told when a gradient tensor has been written (on a GPU: queued on the compute stream).
class GradListener {
 public:
  virtual ~GradListener() = default;
  virtual void on_grad_ready(const FlatTensor& tensor) = 0;
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

class Mlp {
 public:
  Mlp(Device& dev, MlpSpec spec, int max_batch);

  const MlpSpec& spec() const { return spec_; }
  const ParamLayout& layout() const { return layout_; }
  Device& device() { return dev_; }
  int max_batch() const { return max_batch_; }

  float* params() { return params_.data(); }
  // Both laid out by layout(): param_buffer_count() floats, padding included; grads() has the
  // loss slot after them.
  float* grads() { return grads_.data(); }

  // nn.Linear's default init: weights and biases of layer i uniform in ±1/sqrt(in_i), drawn
  // from CounterRng(seed, stream = 2i for the weight, 2i+1 for the bias), element j = index j
  // in row-major order. Independent of world size, rank and backend.
  void init_params(uint64_t seed);
  // Host copies are the flat buffer itself (param_buffer_count() floats, tensors at their layout
  // offsets, zeros between); params_from_host takes only the tensors, so the padding stays zero.
  std::vector<float> params_to_host();
  void params_from_host(const std::vector<float>& host);

  // Forward of `batch` rows of x ([batch, in], device memory). Returns the logits [batch, out].
  const float* forward(const float* x, int batch);
  // Softmax cross-entropy of the last forward's logits. dlogits = (p - y)·grad_scale; the loss
  // slot of grads() receives Σ loss · grad_scale (added to it with `accumulate`); loss_mean()
  // the plain mean over these rows.
  void loss(const int32_t* labels, int batch, float grad_scale, bool accumulate = false);
  // Backward of the last forward/loss. Calls listener (may be null) after each tensor.
  // `accumulate` adds the gradients to those already in grads() (PyTorch's .grad accumulation,
  // for gradient accumulation over micro-batches: dW with GEMM β = 1, db through a scratch
  // column sum) instead of overwriting them.
  void backward(const float* x, int batch, GradListener* listener, bool accumulate = false);
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
  // Optimizer of models/optimizer.h, too); read and lowered by take_losses().
  float* nonfinite_flag();
  // After a flag: "gradient layers.0.weight[3, 17] is nan" (gradients first, then parameters);
  // "" when both are finite. Downloads both buffers: for the error path only.
  std::string describe_nonfinite();

  float loss_mean();       // waits for the device
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
  // Correct predictions of the last forward against labels (waits).
  int64_t count_correct(const int32_t* labels, int batch);

 private:
  Device& dev_;
  MlpSpec spec_;
  ParamLayout layout_;
  int max_batch_;
  DeviceBuffer<float> params_, grads_, velocity_;
  std::vector<DeviceBuffer<float>> acts_;  // acts_[l] = output of layer l ([batch, widths[l+1]])
  DeviceBuffer<float> dbuf_a_, dbuf_b_;    // ping-pong buffers for dY / dX
  DeviceBuffer<float> loss_mean_;         // [0] the rows' mean loss, [1] a copy of the slot,
                                          // [2] the non-finite flag (1 when a check found one),
                                          // [3] a micro-batch's scaled loss, [4] the sum of the
                                          // step's earlier micro-batches' shard means
  int kept_micro_ = 0;                     // micro-batch means summed into [4] this step
  // dst[0..n) += src[0..n) on the device (Device::add: exact under TF32 too).
  void add_into(float* dst, const float* src, int n);
  const float* last_input_ = nullptr;
};

// FNV-1a 64 over the bytes of a float vector: the replica checksum ranks compare.
uint64_t checksum_floats(const std::vector<float>& v);

}  // namespace dpscale
