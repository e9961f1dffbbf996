// param_layout.h — where every tensor lives in the one flat parameter (and gradient) buffer.
//
// Tensors are laid out in the order backward produces their gradients: for the MLP last layer
// first, and within a layer the weight [out, in] (row-major, as nn.Linear stores it) then the
// bias [out]; any other model (the transformer) lists its tensors itself (TensorDesc), in the
// order its backward completes them.
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
  int rows = 0, cols = 0;  // weight: [out, in]; bias: [out, 1] (a vector is [n, 1])
  std::string label;       // the model's own name for it; empty: the MLP's layers.{i}.*
  int forward_index = 0;   // position in forward (state_dict) order: how checkpoints list it

  int64_t nbytes() const { return count * static_cast<int64_t>(sizeof(float)); }
  std::string name() const;  // label, else "layers.{i}.weight" / "layers.{i}.bias"
  // The stored shape: [rows, cols], or [rows] for a vector (cols 1 and is_bias).
  std::vector<int64_t> shape() const;
};

// A tensor as a model describes it, for ParamLayout's general constructor.
struct TensorDesc {
  std::string name;
  int layer = 0;         // the block it belongs to (-1: none, e.g. embeddings)
  bool is_vector = false;  // a bias or a LayerNorm gain: shape [rows]
  int rows = 0, cols = 1;
  int forward_index = 0;
};

// Tensor offsets are multiples of this many floats (256 bytes; cudaMalloc's own alignment).
constexpr int64_t kTensorAlignFloats = 64;

class ParamLayout {
 public:
  explicit ParamLayout(const MlpSpec& spec);
  // Any model: `backward_order` lists the tensors in the order backward completes them.
  explicit ParamLayout(const std::vector<TensorDesc>& backward_order);

  const std::vector<FlatTensor>& tensors() const { return tensors_; }  // backward order
  // The MLP's layer l (only a layout built from an MlpSpec has them).
  const FlatTensor& weight(int layer) const { return tensors_[weight_index_.at(layer)]; }
  const FlatTensor& bias(int layer) const { return tensors_[weight_index_.at(layer) + 1]; }
  // Indices into tensors() in forward order (a state_dict's order: checkpoints, error names).
  const std::vector<int>& forward_order() const { return forward_order_; }
  // The largest tensor's bytes (what a record reports beside the count).
  int64_t largest_tensor_bytes() const;
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
  std::vector<int> weight_index_;  // MLP layer -> index of its weight in tensors_
  std::vector<int> forward_order_;
  void finish_forward_order();
  int64_t n_params_ = 0;
  int64_t buffer_count_ = 0;
};

}  // namespace dpscale
