// safetensors.h — checkpoints in the safetensors format (huggingface/safetensors):
//   8 bytes  little-endian u64 N, the header length
//   N bytes  JSON: {"<name>": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]},
//                   ..., "__metadata__": {"<key>": "<string>"}}, padded with spaces
//   rest     the byte buffer; offsets are relative to its start, cover it without holes
// The MLP's tensor names are layers.{i}.weight ([out, in], row-major, as nn.Linear) and
// layers.{i}.bias ([out]); the transformer's are Hugging Face GPT-2's (models/gpt/gpt_layout.h).
// Float32, so PyTorch's safetensors.torch.load_file / numpy read them unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/param_layout.h"

namespace dpscale {

struct StTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<char> bytes;
};

struct StFile {
  std::map<std::string, StTensor> tensors;
  std::map<std::string, std::string> metadata;
};

// Parses and validates a whole file (header length, JSON, dtypes, offsets within the buffer,
// no overlaps or holes). Throws InputError naming the file and the problem.
StFile read_safetensors(const std::string& path);

// Writes the model's parameters (host copy of the flat buffer, param_buffer_count() floats)
// atomically; the file holds the tensors packed, the buffer's padding is not written.
void save_checkpoint(const std::string& path, const MlpSpec& spec, const ParamLayout& layout,
                     const std::vector<float>& params);
// Any model: the tensors in the layout's forward order, under their names and shapes, with
// `metadata` (string pairs) beside "format" and "producer".
void save_checkpoint(const std::string& path, const ParamLayout& layout, const std::vector<float>& params,
                     const std::map<std::string, std::string>& metadata);

// Reads a checkpoint into a flat host buffer laid out as `layout` (padding zero); every tensor of the model
// must be present with the right shape and dtype F32, and no other tensor may be.
std::vector<float> load_checkpoint(const std::string& path, const ParamLayout& layout);

}  // namespace dpscale
