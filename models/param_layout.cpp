// param_layout.cpp — builds the backward-ordered flat layout, each tensor on a 256-byte boundary.
#include "param_layout.h"

namespace dpscale {

std::string FlatTensor::name() const {
  return "layers." + std::to_string(layer) + (is_bias ? ".bias" : ".weight");
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
                 static_cast<int64_t>(out) * in, out, in};
    weight_index_[layer] = w.index;
    tensors_.push_back(w);
    offset += w.count;
    n_params_ += w.count;
    offset = align_up(offset);
    FlatTensor b{static_cast<int>(tensors_.size()), layer, true, offset, out, out, 1};
    tensors_.push_back(b);
    offset += b.count;
    n_params_ += b.count;
  }
  // No padding after the last tensor: the loss slot follows it, inside one all-reduce.
  buffer_count_ = offset;
}

}  // namespace dpscale
