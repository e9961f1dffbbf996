// gpt_spec.h — the shape of a GPT-2-style decoder: presets, --model gpt:..., tensor layout, GEMMs.
//
//   gpt-tiny      2 layers, d 64,   4 heads,  vocabulary 256,   context 64 (a K = 4 test in seconds)
//   gpt2-small   12 layers, d 768,  12 heads, vocabulary 50257, context 1024 (124M parameters)
//   gpt2-medium  24 layers, d 1024, 16 heads, vocabulary 50257, context 1024 (350M parameters)
//   gpt:layers=L,dim=D,heads=H,vocab=V,context=C   any other (every key once, D divisible by H)
// seq_len (--seq-len, tokens per sample) is at most the context; 0 asks for the context.
//
// The tensors in backward-completion order (the flat buffer's, param_layout.h), with Hugging Face
// GPT-2's names and shapes (Conv1D weights stored [in, out]):
//   ln_f.weight, ln_f.bias;
//   per block N from the last: h.N.mlp.c_proj.{weight [4d, d], bias}, h.N.mlp.c_fc.{weight
//   [d, 4d], bias}, h.N.ln_2.{weight, bias}, h.N.attn.c_proj.{weight [d, d], bias},
//   h.N.attn.c_attn.{weight [d, 3d], bias}, h.N.ln_1.{weight, bias};
//   wpe.weight [C, d]; wte.weight [V, d] last: the tied LM head's gradient is written at the start
//   of backward and completed by the embedding's scatter-add at its very end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/gemm/step_gemms.h"
#include "models/param_layout.h"

namespace dpscale {

struct GptSpec {
  std::string name;  // preset name, or "custom"
  int layers = 0, dim = 0, heads = 0, vocab = 0, context = 0;
  int seq_len = 0;   // tokens per sample (≤ context)

  int head_dim() const { return dim / heads; }
  int64_t n_params() const;
  // The name results go by: the preset's, or the spec as --model gives it.
  std::string key() const;
  std::string describe() const;  // "gpt-tiny [L 2, d 64, heads 4, vocab 256, context 64], seq 32"
};

// Whether --model names a transformer (a gpt preset or gpt:...).
bool is_gpt_model(const std::string& text);
// The preset names: gpt-tiny, gpt2-small, gpt2-medium.
const std::vector<std::string>& gpt_preset_names();
// A preset or gpt:layers=..,dim=..,heads=..,vocab=..,context=..; seq_len 0 = the context.
// Throws OptionError naming the problem (--model, or --seq-len when it exceeds the context).
GptSpec parse_gpt(const std::string& text, int seq_len);

// The tensors in backward-completion order (above).
std::vector<TensorDesc> gpt_tensors(const GptSpec& spec);

// The GEMMs of one training step at `batch` samples, in the order gpt.cpp runs them (attention's
// per-(sample, head) GEMMs once per layer: they repeat batch × heads times with the same shape).
std::vector<GemmShape> gpt_step_gemms(const GptSpec& spec, int batch);

// Bytes one Gpt replica allocates for `max_batch` samples (parameters, gradients, momentum when
// used, the activations backward keeps, its scratch); nullopt when it overflows 64 bits.
std::optional<uint64_t> gpt_bytes(const GptSpec& spec, int64_t max_batch, bool momentum);

}  // namespace dpscale
