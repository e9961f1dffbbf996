// gpt_layers.h — the transformer's layers that are not GEMMs, on host memory (the CPU backend).
//
// One forward and one backward per kind of layer, shapes in the signature: N = B·S rows (token
// positions), d the model width, S the sequence length. The GEMMs (the Conv1D layers, attention's
// q·kᵀ and p·v, the tied LM head) go through Device::gemm in gpt.cpp; what is here is the rest:
//   encoder    x[n] = wte[token(n)] + wpe[n mod S]; backward: wpe by sum, wte by scatter-add
//   layernorm  y = (x − mean)·rstd·w + b over d, rstd = 1/√(var + ε), ε = 1e-5 (GPT-2's)
//   softmax    causal, row t over columns j ≤ t (the scores arrive scaled by 1/√head_dim)
//   gelu       GELU's tanh form, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), as GPT-2 used
// Backward functions say per output whether they overwrite (=) or add (+=).
#pragma once

#include <cstdint>

namespace dpscale::gpt_cpu {

constexpr float kLayerNormEps = 1e-5f;

// out[N, d] = wte[tokens[n]] + wpe[n mod S]; token ids are whole floats in [0, vocab).
void encoder_forward(float* out, const float* tokens, const float* wte, const float* wpe, int B, int S, int d);
// dwpe[t] = (or += with `accumulate`) Σ_b dout[b, t]; rows t ≥ S of dwpe are zeroed unless
// accumulating; dwte[tokens[n]] += dout[n] (always added: the LM head's GEMM wrote it first).
void encoder_backward(float* dwte, float* dwpe, const float* dout, const float* tokens, int B, int S, int d,
                      int context, bool accumulate);

// out, mean[N], rstd[N] from inp[N, d].
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                       int d);
// dinp += ∂/∂inp; dw, db = (or += with `accumulate`) their gradients.
void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                        const float* mean, const float* rstd, int N, int d, bool accumulate);

// p[S, S]: scores in, causal probabilities out (p[t, j] = 0 for j > t).
void causal_softmax(float* p, int S);
// ds[S, S]: ∂/∂p in, ∂/∂(unscaled q·kᵀ) out: scale · p ⊙ (dp − Σ_j p·dp) on j ≤ t, 0 above.
void causal_softmax_backward(float* ds, const float* p, int S, float scale);

void gelu_forward(float* out, const float* inp, int64_t n);
// dinp = dout · gelu'(inp) (dinp may be dout).
void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n);

}  // namespace dpscale::gpt_cpu
