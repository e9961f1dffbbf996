// param_layout.h — where every tensor lives in the one flat parameter (and gradient) buffer.
//
// Tensors are laid out in the order backward produces their gradients: last layer first, and
// within a layer the weight [out, in] (row-major, as nn.Linear stores it) then the bias [out].
// So a DDP bucket is a contiguous slice, SGD is one loop over one buffer, and a checkpoint is
// a set of views. Every tensor starts on a multiple of kTensorAlignFloats (64 floats, 256 bytes):
// cuBLAS picks its kernels by pointer alignment (TF32 and tensor-core paths want 16 B, Hopper's
// TMA more) and NCCL gets the same per-tensor and per-bucket pointers, while a 10-float bias
// packed tightly would leave every later tensor 8 bytes off. The padding between tensors holds
// zeros in both buffers (nothing writes it), so the one-loop SGD, the checks and the checksums
// may run over it. The gradient buffer has one float more than the parameter buffer: the loss
// slot, right after the last tensor backward produces, so the step's loss rides inside the last
// all-reduce instead of costing a collective of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlp_spec.h"

namespace dpscale {

// One tensor of the flat buffer: where it sits (offset, count) and what it is (layer, weight or
// bias, shape). It holds no pointer: the same entry locates the parameter and its gradient.
struct FlatTensor {
  int index = 0;         // position in backward order (0 = first gradient produced)
  int layer = 0;         // layer number i, as in layers.{i}.weight
  bool is_bias = false;
  int64_t offset = 0;    // in floats, into the flat buffer
  int64_t count = 0;     // elements
  int rows = 0, cols = 0;  // weight: [out, in]; bias: [out, 1]

  int64_t nbytes() const { return count * static_cast<int64_t>(sizeof(float)); }
  std::string name() const;  // "layers.{i}.weight" / "layers.{i}.bias"
};

// Tensor offsets are multiples of this many floats (256 bytes; cudaMalloc's own alignment).
constexpr int64_t kTensorAlignFloats = 64;

class ParamLayout {
 public:
  explicit ParamLayout(const MlpSpec& spec);

  const std::vector<FlatTensor>& tensors() const { return tensors_; }  // backward order
  const FlatTensor& weight(int layer) const { return tensors_[weight_index_[layer]]; }
  const FlatTensor& bias(int layer) const { return tensors_[weight_index_[layer] + 1]; }
  // The model's parameters (what a record reports); the buffers are larger by the padding.
  int64_t n_params() const { return n_params_; }
  // Floats in the flat parameter buffer: the tensors and the padding between them (it ends
  // where the last tensor backward produces ends). Host copies of the parameters have this size.
  int64_t param_buffer_count() const { return buffer_count_; }
  // Index of the loss slot in the gradient buffer (== param_buffer_count()).
  int64_t loss_slot() const { return buffer_count_; }
  int64_t grad_buffer_count() const { return buffer_count_ + 1; }

 private:
  std::vector<FlatTensor> tensors_;
  std::vector<int> weight_index_;  // layer -> index of its weight in tensors_
  int64_t n_params_ = 0;
  int64_t buffer_count_ = 0;
};

}  // namespace dpscale
