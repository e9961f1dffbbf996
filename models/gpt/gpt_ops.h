// gpt_ops.h — the transformer's layers other than its Conv1D GEMMs, per backend: what Gpt calls
// for the embedding, LayerNorm, attention and GELU. The CPU's (gpt_ops_cpu.cpp) loops over
// gpt_layers.h and runs attention's GEMMs per sample and head through Device::gemm (the measured
// GEMM library); CUDA's (models/cuda/gpt_ops_cuda.cu) launches kernels of its own and runs
// attention's GEMMs as cuBLAS strided-batched GEMMs. Both on the device's memory and stream.
// Shapes: N = B·S rows, d the width, H heads of hd = d/H; qkv is [N, 3d] (q | k | v columns),
// att the probabilities [B, H, S, S]. Backward functions say per output: = overwrite, += add.
#pragma once

#include <cstdint>
#include <memory>

#include "models/device.h"

namespace dpscale {

class GptOps {
 public:
  virtual ~GptOps() = default;
  // out[N, d] = wte[tokens[n]] + wpe[n mod S] (tokens: whole floats).
  virtual void encoder_forward(float* out, const float* tokens, const float* wte, const float* wpe, int B, int S,
                               int d) = 0;
  // dwpe = (+= when accumulating; rows ≥ S zeroed otherwise) Σ_b dout[b, t]; dwte[token] += dout.
  virtual void encoder_backward(float* dwte, float* dwpe, const float* dout, const float* tokens, int B, int S, int d,
                                int context, bool accumulate) = 0;
  virtual void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w,
                                 const float* b, int N, int d) = 0;
  // dinp += ; dw, db = (+= when accumulating).
  virtual void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp,
                                  const float* w, const float* mean, const float* rstd, int N, int d,
                                  bool accumulate) = 0;
  // att = causal_softmax(q·kᵀ/√hd); atty[N, d] (head h in columns h·hd..) = att · v.
  virtual void attention_forward(float* atty, float* att, const float* qkv, int B, int S, int H, int hd) = 0;
  // dqkv[N, 3d] = (overwrite) the gradients of q, k and v from datty; `scratch` holds
  // attention_scratch_floats() floats.
  virtual void attention_backward(float* dqkv, const float* datty, const float* qkv, const float* att,
                                  float* scratch, int B, int S, int H, int hd) = 0;
  virtual int64_t attention_scratch_floats(int B, int S, int H) const = 0;
  virtual void gelu_forward(float* out, const float* inp, int64_t n) = 0;
  // dinp = dout · gelu'(inp) (dinp may be dout).
  virtual void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n) = 0;
};

// The ops of `dev`'s backend (CUDA where the device is a CudaDevice and CUDA was compiled in).
std::unique_ptr<GptOps> make_gpt_ops(Device& dev);

}  // namespace dpscale
