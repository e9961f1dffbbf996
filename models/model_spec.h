// model_spec.h — which model --model names: an MLP (mlp_spec.h) or a transformer (gpt/gpt_spec.h),
// and what the trainers need of either before a replica exists.
//
// The trainers hold a ModelSpec; only here and in make_model() is the kind of model switched on.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/device.h"
#include "models/gemm/step_gemms.h"
#include "models/gpt/gpt_spec.h"
#include "models/mlp_spec.h"
#include "models/model.h"
#include "models/param_layout.h"

namespace dpscale {

struct ModelSpec {
  std::string name;         // MLP: its preset or "custom"; transformer: its key (a preset or gpt:...)
  std::vector<int> widths;  // the MLP's widths; empty for a transformer
  std::optional<GptSpec> gpt;

  bool is_gpt() const { return gpt.has_value(); }
  MlpSpec mlp() const { return MlpSpec{name, widths}; }
  int64_t n_params() const;
  // Floats of x per sample (the MLP's input width; a transformer's seq_len token ids).
  int in_width() const;
  // Classes of the softmax (the MLP's output width; the vocabulary).
  int out_width() const;
  // int32 labels per sample (1; a transformer's seq_len targets).
  int labels_per_sample() const { return is_gpt() ? gpt->seq_len : 1; }
  int seq_len() const { return is_gpt() ? gpt->seq_len : 0; }
  // The name results go by: model_key for the MLP, the preset name or the spec for a transformer.
  std::string key() const;
  // The banner's line: "medium [784,2048,...], N params" or the transformer's shape.
  std::string describe() const;
  ParamLayout layout() const;
  // The GEMMs of one training step at `batch` samples (--gemm auto measures on them).
  std::vector<GemmShape> step_gemms(int batch) const;
  // Bytes one replica allocates for `max_batch` samples (memory_check.h's check).
  std::optional<uint64_t> bytes(int64_t max_batch, bool momentum) const;
  // What a checkpoint's __metadata__ records beside format and producer.
  std::map<std::string, std::string> checkpoint_metadata() const;
};

// --model (with --seq-len, a transformer's tokens per sample; 0 = its context). Throws
// OptionError naming the problem.
ModelSpec parse_model_spec(const std::string& text, int seq_len);

// A replica of `spec` on `dev` for batches of at most max_batch samples.
std::unique_ptr<Model> make_model(Device& dev, const ModelSpec& spec, int max_batch);

// FLOP/s of the model's largest forward GEMM at `batch` samples (the link dilation's F).
double measure_model_gemm_flops(Device& dev, const ModelSpec& spec, int batch);

}  // namespace dpscale
