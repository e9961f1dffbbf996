// param_layout.h — where every tensor lives in the one flat parameter (and gradient) buffer.
//
// Tensors are laid out in the order backward produces their gradients: last layer first, and
// within a layer the weight [out, in] (row-major, as nn.Linear stores it) then the bias [out].
// So a DDP bucket is a contiguous slice, SGD is one loop over one buffer, and a checkpoint is
// a set of views. The gradient buffer has one float more than the parameters: the loss slot,
// right after the last tensor backward produces, so the step's loss rides inside the last
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

class ParamLayout {
 public:
  explicit ParamLayout(const MlpSpec& spec);

  const std::vector<FlatTensor>& tensors() const { return tensors_; }  // backward order
  const FlatTensor& weight(int layer) const { return tensors_[weight_index_[layer]]; }
  const FlatTensor& bias(int layer) const { return tensors_[weight_index_[layer] + 1]; }
  int64_t n_params() const { return n_params_; }
  // Index of the loss slot in the gradient buffer (== n_params()).
  int64_t loss_slot() const { return n_params_; }
  int64_t grad_buffer_count() const { return n_params_ + 1; }

 private:
  std::vector<FlatTensor> tensors_;
  std::vector<int> weight_index_;  // layer -> index of its weight in tensors_
  int64_t n_params_ = 0;
};

}  // namespace dpscale
