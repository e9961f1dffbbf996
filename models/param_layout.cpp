// param_layout.cpp — builds the backward-ordered flat layout, each tensor on a 256-byte boundary.
#include "param_layout.h"

#include <algorithm>
#include <stdexcept>

namespace dpscale {

std::string FlatTensor::name() const {
  if (!label.empty()) return label;
  return "layers." + std::to_string(layer) + (is_bias ? ".bias" : ".weight");
}

std::vector<int64_t> FlatTensor::shape() const {
  if (is_bias) return {rows};
  return {rows, cols};
}

namespace {
int64_t align_up(int64_t offset) { return (offset + kTensorAlignFloats - 1) / kTensorAlignFloats * kTensorAlignFloats; }
}  // namespace

ParamLayout::ParamLayout(const MlpSpec& spec) : weight_index_(spec.n_layers()) {
  int64_t offset = 0;
  for (int layer = spec.n_layers() - 1; layer >= 0; --layer) {
    const int in = spec.widths[layer], out = spec.widths[layer + 1];
    offset = align_up(offset);
    FlatTensor w{static_cast<int>(tensors_.size()), layer, false, offset,
                 static_cast<int64_t>(out) * in, out, in, "", 2 * layer};
    weight_index_[layer] = w.index;
    tensors_.push_back(w);
    offset += w.count;
    n_params_ += w.count;
    offset = align_up(offset);
    FlatTensor b{static_cast<int>(tensors_.size()), layer, true, offset, out, out, 1, "", 2 * layer + 1};
    tensors_.push_back(b);
    offset += b.count;
    n_params_ += b.count;
  }
  // No padding after the last tensor: the loss slot follows it, inside one all-reduce.
  buffer_count_ = offset;
  finish_forward_order();
}

ParamLayout::ParamLayout(const std::vector<TensorDesc>& backward_order) {
  int64_t offset = 0;
  for (const TensorDesc& d : backward_order) {
    offset = align_up(offset);
    FlatTensor t{static_cast<int>(tensors_.size()), d.layer, d.is_vector, offset,
                 static_cast<int64_t>(d.rows) * d.cols, d.rows, d.is_vector ? 1 : d.cols, d.name, d.forward_index};
    tensors_.push_back(t);
    offset += t.count;
    n_params_ += t.count;
  }
  buffer_count_ = offset;
  finish_forward_order();
}

void ParamLayout::finish_forward_order() {
  forward_order_.resize(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i) forward_order_[i] = static_cast<int>(i);
  std::sort(forward_order_.begin(), forward_order_.end(),
            [&](int a, int b) { return tensors_[a].forward_index < tensors_[b].forward_index; });
}

int64_t ParamLayout::largest_tensor_bytes() const {
  int64_t most = 0;
  for (const FlatTensor& t : tensors_) most = std::max(most, t.nbytes());
  return most;
}

}  // namespace dpscale
