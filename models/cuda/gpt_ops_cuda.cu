// gpt_ops_cuda.cu — the transformer's non-Conv1D layers on CUDA, mirroring gpt_ops_cpu.cpp.
//
// One warp per row for LayerNorm and the softmaxes (rows of d or S floats: warp shuffles sum
// them; sums in float as llm.c's kernels do, the CPU's in double); one thread per column for
// LayerNorm's weight and bias gradients and the position embedding's (a fixed order over the
// rows: deterministic); the token embedding's scatter-add by atomicAdd (two positions may hold
// one token: the order of their adds, and so the last bits of wte's gradient, vary run to run).
// Attention's GEMMs: per sample b one cuBLAS strided-batched GEMM over the H heads (head h's
// columns of qkv are h·hd apart, its probabilities S·S apart), row-major as CudaDevice::gemm:
// C = op(A)·op(B) row-major is Cᵀ = op(B)ᵀ·op(A)ᵀ column-major, so each call passes B first.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "models/cuda/cuda_check.h"
#include "models/cuda/gpt_ops_cuda.h"
#include "models/gpt/gpt_math.h"

namespace dpscale {

namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;
constexpr float kEps = 1e-5f;  // GPT-2's LayerNorm ε (gpt_layers.h)

int blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);  // grid-stride beyond
}
int warp_blocks(int64_t rows) { return static_cast<int>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock); }

__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__global__ void encoder_forward_kernel(float* out, const float* tokens, const float* wte, const float* wpe, int S,
                                       int d, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t row = i / d, c = i % d;
    out[i] = wte[static_cast<int64_t>(tokens[row]) * d + c] + wpe[(row % S) * d + c];
  }
}

__global__ void wte_scatter_add_kernel(float* dwte, const float* dout, const float* tokens, int d, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t row = i / d, c = i % d;
    atomicAdd(&dwte[static_cast<int64_t>(tokens[row]) * d + c], dout[i]);
  }
}

// dwpe[t, c] += Σ_b dout[b, t, c]: one thread per (t, c), the samples in order.
__global__ void wpe_sum_kernel(float* dwpe, const float* dout, int B, int S, int d) {
  const int64_t n = int64_t{S} * d;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    float s = 0.0f;
    for (int b = 0; b < B; ++b) s += dout[int64_t{b} * n + i];
    dwpe[i] += s;
  }
}

__global__ void layernorm_forward_kernel(float* out, float* mean, float* rstd, const float* inp, const float* w,
                                         const float* b, int N, int d) {
  const int64_t row = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= N) return;
  const float* x = inp + row * d;
  float s = 0.0f;
  for (int i = lane; i < d; i += 32) s += x[i];
  const float m = warp_sum(s) / d;
  float v = 0.0f;
  for (int i = lane; i < d; i += 32) v += (x[i] - m) * (x[i] - m);
  const float r = rsqrtf(warp_sum(v) / d + kEps);
  float* o = out + row * d;
  for (int i = lane; i < d; i += 32) o[i] = (x[i] - m) * r * w[i] + b[i];
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = r;
  }
}

// dx += rstd · (g·w − mean(g·w) − norm · mean(g·w·norm)) per row.
__global__ void layernorm_dx_kernel(float* dinp, const float* dout, const float* inp, const float* w,
                                    const float* mean, const float* rstd, int N, int d) {
  const int64_t row = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= N) return;
  const float* x = inp + row * d;
  const float* g = dout + row * d;
  const float m = mean[row], r = rstd[row];
  float a = 0.0f, c = 0.0f;
  for (int i = lane; i < d; i += 32) {
    const float dn = g[i] * w[i];
    a += dn;
    c += dn * (x[i] - m) * r;
  }
  a = warp_sum(a) / d;
  c = warp_sum(c) / d;
  float* dx = dinp + row * d;
  for (int i = lane; i < d; i += 32) dx[i] += (g[i] * w[i] - a - (x[i] - m) * r * c) * r;
}

// dw[c] = (+=) Σ_rows g·norm, db[c] = (+=) Σ_rows g: one thread per column, rows in order.
__global__ void layernorm_dwdb_kernel(float* dw, float* db, const float* dout, const float* inp, const float* mean,
                                      const float* rstd, int N, int d, bool accumulate) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= d) return;
  float sw = 0.0f, sb = 0.0f;
  for (int64_t n = 0; n < N; ++n) {
    const float g = dout[n * d + c];
    sw += g * (inp[n * d + c] - mean[n]) * rstd[n];
    sb += g;
  }
  dw[c] = accumulate ? dw[c] + sw : sw;
  db[c] = accumulate ? db[c] + sb : sb;
}

// Rows of [rows, S]: row r is query position t = r mod S; columns j ≤ t kept, the rest zeroed.
__global__ void causal_softmax_kernel(float* p, int64_t rows, int S) {
  const int64_t row = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int t = static_cast<int>(row % S);
  float* x = p + row * S;
  float mx = -INFINITY;
  for (int j = lane; j <= t; j += 32) mx = fmaxf(mx, x[j]);
  mx = warp_max(mx);
  float s = 0.0f;
  for (int j = lane; j <= t; j += 32) {
    x[j] = expf(x[j] - mx);
    s += x[j];
  }
  const float inv = 1.0f / warp_sum(s);
  for (int j = lane; j < S; j += 32) x[j] = j <= t ? x[j] * inv : 0.0f;
}

__global__ void causal_softmax_backward_kernel(float* ds, const float* p, int64_t rows, int S, float scale) {
  const int64_t row = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int t = static_cast<int>(row % S);
  const float* pr = p + row * S;
  float* g = ds + row * S;
  float dot = 0.0f;
  for (int j = lane; j <= t; j += 32) dot += pr[j] * g[j];
  dot = warp_sum(dot);
  for (int j = lane; j < S; j += 32) g[j] = j <= t ? scale * pr[j] * (g[j] - dot) : 0.0f;
}

__global__ void gelu_forward_kernel(float* out, const float* inp, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = gpt_math::gelu(inp[i]);
  }
}

__global__ void gelu_backward_kernel(float* dinp, const float* inp, const float* dout, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    dinp[i] = dout[i] * gpt_math::gelu_grad(inp[i]);
  }
}

class CudaGptOps final : public GptOps {
 public:
  explicit CudaGptOps(Device& dev) : stream_(static_cast<cudaStream_t>(dev.stream())) {
    if (dev.backend() != Backend::cuda) throw std::invalid_argument("CudaGptOps: not a CUDA device");
    CUBLAS_CHECK(cublasCreate(&blas_));
    CUBLAS_CHECK(cublasSetStream(blas_, stream_));
    // The device's math mode (pedantic fp32 unless --tf32), as its own GEMMs run.
    const std::string math = dev.gemm_math();
    CUBLAS_CHECK(cublasSetMathMode(blas_, math == "tf32"      ? CUBLAS_TF32_TENSOR_OP_MATH
                                          : math == "default" ? CUBLAS_DEFAULT_MATH
                                                              : CUBLAS_PEDANTIC_MATH));
  }
  ~CudaGptOps() override { cublasDestroy(blas_); }

  void encoder_forward(float* out, const float* tokens, const float* wte, const float* wpe, int B, int S,
                       int d) override {
    const int64_t n = int64_t{B} * S * d;
    encoder_forward_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(out, tokens, wte, wpe, S, d, n);
    CUDA_CHECK_LAUNCH();
  }
  void encoder_backward(float* dwte, float* dwpe, const float* dout, const float* tokens, int B, int S, int d,
                        int context, bool accumulate) override {
    if (!accumulate) CUDA_CHECK(cudaMemsetAsync(dwpe, 0, sizeof(float) * static_cast<size_t>(context) * d, stream_));
    wpe_sum_kernel<<<blocks_for(int64_t{S} * d), kThreads, 0, stream_>>>(dwpe, dout, B, S, d);
    CUDA_CHECK_LAUNCH();
    const int64_t n = int64_t{B} * S * d;
    wte_scatter_add_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(dwte, dout, tokens, d, n);
    CUDA_CHECK_LAUNCH();
  }
  void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N,
                         int d) override {
    layernorm_forward_kernel<<<warp_blocks(N), kThreads, 0, stream_>>>(out, mean, rstd, inp, w, b, N, d);
    CUDA_CHECK_LAUNCH();
  }
  void layernorm_backward(float* dinp, float* dw, float* db, const float* dout, const float* inp, const float* w,
                          const float* mean, const float* rstd, int N, int d, bool accumulate) override {
    layernorm_dx_kernel<<<warp_blocks(N), kThreads, 0, stream_>>>(dinp, dout, inp, w, mean, rstd, N, d);
    CUDA_CHECK_LAUNCH();
    layernorm_dwdb_kernel<<<(d + kThreads - 1) / kThreads, kThreads, 0, stream_>>>(dw, db, dout, inp, mean, rstd, N, d,
                                                                                   accumulate);
    CUDA_CHECK_LAUNCH();
  }
  void gelu_forward(float* out, const float* inp, int64_t n) override {
    gelu_forward_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(out, inp, n);
    CUDA_CHECK_LAUNCH();
  }
  void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n) override {
    gelu_backward_kernel<<<blocks_for(n), kThreads, 0, stream_>>>(dinp, inp, dout, n);
    CUDA_CHECK_LAUNCH();
  }
  int64_t attention_scratch_floats(int B, int S, int H) const override { return int64_t{B} * H * S * S; }

  void attention_forward(float* atty, float* att, const float* qkv, int B, int S, int H, int hd) override {
    const int d = H * hd;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const int64_t SS = int64_t{S} * S;
    for (int b = 0; b < B; ++b) {
      const float* q = qkv + int64_t{b} * S * 3 * d;
      float* p = att + int64_t{b} * H * SS;
      // per head: (S,hd) x (S,hd)^T -> (S,S), α = 1/√hd, β = 0
      batched(false, true, S, S, hd, scale, q, 3 * d, hd, q + d, 3 * d, hd, 0.0f, p, S, SS, H);
    }
    causal_softmax_kernel<<<warp_blocks(int64_t{B} * H * S), kThreads, 0, stream_>>>(att, int64_t{B} * H * S, S);
    CUDA_CHECK_LAUNCH();
    for (int b = 0; b < B; ++b) {
      const float* v = qkv + int64_t{b} * S * 3 * d + 2 * d;
      // per head: (S,S) x (S,hd) -> (S,hd) into head h's columns of atty, β = 0
      batched(false, false, S, hd, S, 1.0f, att + int64_t{b} * H * SS, S, SS, v, 3 * d, hd, 0.0f,
              atty + int64_t{b} * S * d, d, hd, H);
    }
  }

  void attention_backward(float* dqkv, const float* datty, const float* qkv, const float* att, float* dp, int B, int S,
                          int H, int hd) override {
    const int d = H * hd;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const int64_t SS = int64_t{S} * S;
    for (int b = 0; b < B; ++b) {
      const int64_t row = int64_t{b} * S;
      const float* v = qkv + row * 3 * d + 2 * d;
      const float* dy = datty + row * d;
      // dp: (S,hd) x (S,hd)^T -> (S,S); dv: (S,S)^T x (S,hd) -> (S,hd); β = 0
      batched(false, true, S, S, hd, 1.0f, dy, d, hd, v, 3 * d, hd, 0.0f, dp + int64_t{b} * H * SS, S, SS, H);
      batched(true, false, S, hd, S, 1.0f, att + int64_t{b} * H * SS, S, SS, dy, d, hd, 0.0f,
              dqkv + row * 3 * d + 2 * d, 3 * d, hd, H);
    }
    causal_softmax_backward_kernel<<<warp_blocks(int64_t{B} * H * S), kThreads, 0, stream_>>>(dp, att, int64_t{B} * H * S,
                                                                                             S, scale);
    CUDA_CHECK_LAUNCH();
    for (int b = 0; b < B; ++b) {
      const int64_t row = int64_t{b} * S;
      const float* q = qkv + row * 3 * d;
      const float* ds = dp + int64_t{b} * H * SS;
      // dq: (S,S) x (S,hd) -> (S,hd); dk: (S,S)^T x (S,hd) -> (S,hd); β = 0
      batched(false, false, S, hd, S, 1.0f, ds, S, SS, q + d, 3 * d, hd, 0.0f, dqkv + row * 3 * d, 3 * d, hd, H);
      batched(true, false, S, hd, S, 1.0f, ds, S, SS, q, 3 * d, hd, 0.0f, dqkv + row * 3 * d + d, 3 * d, hd, H);
    }
  }

 private:
  // Row-major C[m,n] = α·op(A)[m,k]·op(B)[k,n] + β·C for `count` matrices at the given strides
  // (elements), as CudaDevice::gemm: operands swapped for cuBLAS's column-major view.
  void batched(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, int64_t stride_a,
               const float* b, int ldb, int64_t stride_b, float beta, float* c, int ldc, int64_t stride_c, int count) {
    CUBLAS_CHECK(cublasSgemmStridedBatched(blas_, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                           n, m, k, &alpha, b, ldb, stride_b, a, lda, stride_a, &beta, c, ldc, stride_c,
                                           count));
  }

  cudaStream_t stream_;
  cublasHandle_t blas_ = nullptr;
};

}  // namespace

std::unique_ptr<GptOps> make_cuda_gpt_ops(Device& dev) { return std::make_unique<CudaGptOps>(dev); }

}  // namespace dpscale
