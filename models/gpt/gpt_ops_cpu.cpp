// gpt_ops_cpu.cpp — the CPU backend's GptOps: gpt_layers.h's loops, and attention's GEMMs per
// sample and head through Device::gemm on column slices of qkv (row stride 3d):
//   scores[S,S] = q·kᵀ/√hd (N, T) → causal softmax → p;  y[S,hd] = p · v (N, N) into atty (stride d)
//   dp = dy · vᵀ (N, T);  dv = pᵀ · dy (T, N);  ds = softmax'(dp)/√hd;  dq = ds · k (N, N);  dk = dsᵀ · q (T, N)
#include <cmath>

#include "models/gpt/gpt_layers.h"
#include "models/gpt/gpt_ops.h"

#if DPSCALE_HAVE_CUDA
#include "models/cuda/gpt_ops_cuda.h"
#endif

namespace dpscale {

namespace {

class CpuGptOps final : public GptOps {
 public:
  explicit CpuGptOps(Device& dev) : dev_(dev) {}

  void encoder_forward(float* out, const float* tokens, const float* wte, const float* wpe, int B, int S,
                       int d) override {
    gpt_cpu::encoder_forward(out, tokens, wte, wpe, B, S, d);
  }
  void encoder_backward(float* dwte, float* dwpe, const float* dout, const float* tokens, int B, int S, int d,
                        int context, bool accumulate) override {
    gpt_cpu::encoder_backward(dwte, dwpe, dout, tokens, B, S, d, context, accumulate);
  }
  void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                         int d) override {
    gpt_cpu::layernorm_forward(out, mean, rstd, inp, w, b, N, d);
  }
  void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                          const float* mean, const float* rstd, int N, int d, bool accumulate) override {
    gpt_cpu::layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, N, d, accumulate);
  }
  void gelu_forward(float* out, const float* inp, int64_t n) override { gpt_cpu::gelu_forward(out, inp, n); }
  void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n) override {
    gpt_cpu::gelu_backward(dinp, inp, dout, n);
  }
  int64_t attention_scratch_floats(int, int S, int) const override { return int64_t{S} * S; }

  void attention_forward(float* atty, float* att, const float* qkv, int B, int S, int H, int hd) override {
    const int d = H * hd;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    for (int b = 0; b < B; ++b) {
      for (int h = 0; h < H; ++h) {
        const float* q = qkv + static_cast<int64_t>(b) * S * 3 * d + h * hd;
        const float* k = q + d;
        const float* v = q + 2 * d;
        float* pr = att + (static_cast<int64_t>(b) * H + h) * S * S;
        // (S,hd) x (S,hd)^T -> (S,S), α = 1/√hd, β = 0
        dev_.gemm(false, true, S, S, hd, scale, q, 3 * d, k, 3 * d, 0.0f, pr, S);
        gpt_cpu::causal_softmax(pr, S);
        // (S,S) x (S,hd) -> (S,hd) into head h's columns of atty, β = 0
        dev_.gemm(false, false, S, hd, S, 1.0f, pr, S, v, 3 * d, 0.0f, atty + static_cast<int64_t>(b) * S * d + h * hd, d);
      }
    }
  }

  void attention_backward(float* dqkv, const float* datty, const float* qkv, const float* att, float* dp, int B, int S,
                          int H, int hd) override {
    const int d = H * hd;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    for (int b = 0; b < B; ++b) {
      for (int h = 0; h < H; ++h) {
        const int64_t row = static_cast<int64_t>(b) * S;
        const float* q = qkv + row * 3 * d + h * hd;
        const float* k = q + d;
        const float* v = q + 2 * d;
        float* dq = dqkv + row * 3 * d + h * hd;
        float* dk = dq + d;
        float* dv = dq + 2 * d;
        const float* pr = att + (static_cast<int64_t>(b) * H + h) * S * S;
        const float* dy = datty + row * d + h * hd;
        // dp: (S,hd) x (S,hd)^T -> (S,S), β = 0
        dev_.gemm(false, true, S, S, hd, 1.0f, dy, d, v, 3 * d, 0.0f, dp, S);
        // dv: (S,S)^T x (S,hd) -> (S,hd), β = 0
        dev_.gemm(true, false, S, hd, S, 1.0f, pr, S, dy, d, 0.0f, dv, 3 * d);
        gpt_cpu::causal_softmax_backward(dp, pr, S, scale);
        // dq: (S,S) x (S,hd) -> (S,hd); dk: (S,S)^T x (S,hd) -> (S,hd); β = 0
        dev_.gemm(false, false, S, hd, S, 1.0f, dp, S, k, 3 * d, 0.0f, dq, 3 * d);
        dev_.gemm(true, false, S, hd, S, 1.0f, dp, S, q, 3 * d, 0.0f, dk, 3 * d);
      }
    }
  }

 private:
  Device& dev_;
};

}  // namespace

std::unique_ptr<GptOps> make_gpt_ops(Device& dev) {
#if DPSCALE_HAVE_CUDA
  if (dev.backend() == Backend::cuda) return make_cuda_gpt_ops(dev);
#endif
  return std::make_unique<CpuGptOps>(dev);
}

}  // namespace dpscale
