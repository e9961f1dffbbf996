// gpt.h — the GPT-2-style decoder (a Model, models/model.h) on the CPU backend.
//
// GPT-2's layout and maths: token + position embeddings; L blocks of
//   x = x + attn.c_proj(causal_mha(ln_1(x)))      (scores scaled by 1/√head_dim)
//   x = x + mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(x))))
// then ln_f and the LM head tied to wte (logits = ln_f(x) · wteᵀ); softmax cross-entropy, the
// mean over every position of the batch; no dropout. Tensors and their order: gpt_spec.h.
//
// A sample is seq_len token ids (the dataset's floats, whole numbers: token_data.h) and seq_len
// target ids. The Conv1D GEMMs and the tied head go through Device::gemm (on the CPU the measured
// GEMM library, on CUDA cuBLAS); the embedding, LayerNorm, attention and GELU through the
// backend's GptOps (gpt_ops.h). On CUDA the model runs (tests/models/test_cuda_vs_cpu.cpp checks
// it against the CPU where a GPU answers); the trainers take it on the CPU only until that passed.
#pragma once

#include <vector>

#include <memory>

#include "models/gpt/gpt_ops.h"
#include "models/gpt/gpt_spec.h"
#include "models/model.h"

namespace dpscale {

class Gpt : public Model {
 public:
  Gpt(Device& dev, GptSpec spec, int max_batch);

  const GptSpec& spec() const { return spec_; }

  // GPT-2's initialisation: every weight matrix and both embeddings normal(0, 0.02), the
  // residual projections (attn.c_proj.weight, mlp.c_proj.weight) normal(0, 0.02/√(2L)), biases
  // 0, LayerNorm gains 1. Tensor i (forward order) from CounterRng(seed, 0x6E7000 + i), element
  // j = index j row-major. Independent of world size, rank and backend.
  void init_params(uint64_t seed) override;

  const float* run_forward(const float* x, int batch) override;  // logits [batch·S, vocab]
  // The mean over all batch·S positions: each position's gradient scaled by grad_scale / S, so a
  // sample's S positions weigh what one MLP row weighs.
  void loss(const int32_t* labels, int batch, float grad_scale, bool accumulate = false) override;
  void run_backward(const float* x, int batch, GradListener* listener, bool accumulate) override;
  int64_t count_correct(const int32_t* labels, int batch) override;  // over positions

 private:
  struct Block {  // what backward needs of one block's forward
    DeviceBuffer<float> ln1, ln1_mean, ln1_rstd, qkv, att, atty, res2, ln2, ln2_mean, ln2_rstd, fch, fch_gelu, res3;
  };
  // The tensors of block l and of the rest, by what they are (indices into layout().tensors()).
  struct BlockTensors {
    int ln1_w, ln1_b, attn_w, attn_b, aproj_w, aproj_b, ln2_w, ln2_b, fc_w, fc_b, mproj_w, mproj_b;
  };
  const float* p(int tensor) { return param(tensor); }
  float* g(int tensor) { return grads_.data() + layout_.tensors()[static_cast<size_t>(tensor)].offset; }
  void ready(GradListener* listener, int tensor) {
    if (listener) listener->on_grad_ready(layout_.tensors()[static_cast<size_t>(tensor)]);
  }
  // y[N, out] = x[N, in] · W[in, out] + b, with `beta` = 1 adding to what y holds (the residual).
  void conv_forward(const float* x, int w, int b, float* y, int rows, int in, int out, float beta);
  // The Conv1D's backward: dW (β = 0, or 1 when accumulating), db, the listener, then
  // dx[N, in] = dy · Wᵀ (β = 0) when dx is not null.
  void conv_backward(const float* x, int w, int b, const float* dy, float* dx, int rows, int in, int out,
                     bool accumulate, GradListener* listener);

  GptSpec spec_;
  std::unique_ptr<GptOps> ops_;
  std::vector<BlockTensors> bt_;
  int wte_ = 0, wpe_ = 0, lnf_w_ = 0, lnf_b_ = 0;
  DeviceBuffer<float> enc_, lnf_, lnf_mean_, lnf_rstd_, logits_, dlogits_;
  std::vector<Block> blocks_;
  DeviceBuffer<float> dres_, dbig_, dln_, datty_, dqkv_, dp_, dbias_;
  const float* last_input_ = nullptr;
};

}  // namespace dpscale
