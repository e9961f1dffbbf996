// kernels.cu — the CUDA backend's element-wise kernels. The arithmetic is elementwise.h's,
// shared with the CPU backend; these are only the grid loops around it.
#include "../elementwise.h"
#include "../finite_check.h"
#include "cuda_check.h"
#include "kernels.cuh"

namespace dpscale::cuda {

namespace {

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);  // grid-stride beyond
}

__global__ void fill_kernel(float* x, float value, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) x[i] = value;
}

__global__ void bias_act_kernel(float* y, const float* bias, int64_t n, int cols, bool relu) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const float b = bias[i % cols];
    y[i] = relu ? ew::bias_relu(y[i], b) : ew::bias_only(y[i], b);
  }
}

// Four floats per load and store where both buffers are 16-byte aligned (every Device buffer is),
// the rest one by one: the pass is bound by memory, and scalar loads left it well short of a copy.
__global__ void relu_backward_kernel(float* dx, const float* y, int64_t n, bool vectors) {
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t first = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t n4 = vectors ? n / 4 : 0;
  for (int64_t i = first; i < n4; i += stride) {
    float4 d = reinterpret_cast<const float4*>(dx)[i];
    const float4 v = reinterpret_cast<const float4*>(y)[i];
    d.x = ew::relu_grad(d.x, v.x);
    d.y = ew::relu_grad(d.y, v.y);
    d.z = ew::relu_grad(d.z, v.z);
    d.w = ew::relu_grad(d.w, v.w);
    reinterpret_cast<float4*>(dx)[i] = d;
  }
  for (int64_t i = 4 * n4 + first; i < n; i += stride) dx[i] = ew::relu_grad(dx[i], y[i]);
}

// One thread per row: output widths are small (10 classes in every preset).
__global__ void xent_rows_kernel(const float* z, const int32_t* labels, int rows, int cols,
                                 float grad_scale, float* dz, float* row_loss) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const int64_t off = int64_t{r} * cols;
  row_loss[r] = ew::softmax_xent_row(z + off, labels[r], cols, grad_scale, dz + off);
}

// Single block, fixed summation order: the same loss bits on every run. The sum is in double,
// as CpuDevice::softmax_xent's is: the row losses are float on both backends, and summing them
// in double and rounding once leaves the two backends' losses apart only by the row losses'
// own last bits (expf), not by a float sum's order-dependent error (~√rows ulps). A batch's
// worth of doubles costs nothing next to the step's GEMMs.
__global__ void loss_reduce_kernel(const float* row_loss, int rows, float* loss_mean,
                                   float* loss_scaled, float scaled_factor) {
  __shared__ double partial[kThreads];
  double acc = 0.0;
  for (int i = threadIdx.x; i < rows; i += kThreads) acc += row_loss[i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *loss_mean = static_cast<float>(partial[0] / rows);
    *loss_scaled = static_cast<float>(partial[0] * scaled_factor);
  }
}

__global__ void count_correct_kernel(const float* z, const int32_t* labels, int rows, int cols,
                                     unsigned long long* count) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows && ew::argmax_row(z + int64_t{r} * cols, cols) == labels[r]) atomicAdd(count, 1ULL);
}

// The optimizer pass (elementwise.h's sgd_update), momentum and update in one pass, and with
// kCheck the finite check folded in: the pass already reads every gradient and writes every
// weight, so the check is one bit test of the weight it writes (which a non-finite gradient
// always makes non-finite: device.h), no pass of its own. Four floats per load and store where
// the buffers allow (16-byte aligned: every Device buffer is 256-byte aligned), the rest one by
// one. The flag as flag_nonfinite_kernel's: a warp vote, a benign race.
template <bool kMomentum, bool kCheck>
__device__ inline bool sgd_one(float& w, float g, float& v, float lr, float momentum, float weight_decay) {
  w = ew::sgd_update(w, g, &v, lr, kMomentum ? momentum : 0.0f, weight_decay);
  return kCheck && !ew::is_finite(w);
}

template <bool kMomentum, bool kCheck>
__global__ void sgd_kernel(float* w, const float* g, float* v, int64_t n, bool vectors, float lr, float momentum,
                           float weight_decay, float* flag) {
  bool bad = false;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  const int64_t first = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t n4 = vectors ? n / 4 : 0;
  for (int64_t i = first; i < n4; i += stride) {
    float4 wv = reinterpret_cast<const float4*>(w)[i];
    const float4 gv = reinterpret_cast<const float4*>(g)[i];
    float4 vv = kMomentum ? reinterpret_cast<const float4*>(v)[i] : float4{0.0f, 0.0f, 0.0f, 0.0f};
    bad |= sgd_one<kMomentum, kCheck>(wv.x, gv.x, vv.x, lr, momentum, weight_decay);
    bad |= sgd_one<kMomentum, kCheck>(wv.y, gv.y, vv.y, lr, momentum, weight_decay);
    bad |= sgd_one<kMomentum, kCheck>(wv.z, gv.z, vv.z, lr, momentum, weight_decay);
    bad |= sgd_one<kMomentum, kCheck>(wv.w, gv.w, vv.w, lr, momentum, weight_decay);
    reinterpret_cast<float4*>(w)[i] = wv;
    if (kMomentum) reinterpret_cast<float4*>(v)[i] = vv;
  }
  for (int64_t i = 4 * n4 + first; i < n; i += stride) {
    float vi = kMomentum ? v[i] : 0.0f;
    bad |= sgd_one<kMomentum, kCheck>(w[i], g[i], vi, lr, momentum, weight_decay);
    if (kMomentum) v[i] = vi;
  }
  if (kCheck && __any_sync(0xffffffffu, bad) && (threadIdx.x % 32) == 0) *flag = 1.0f;
}

// Grid-stride over x; a warp votes, and one lane of a warp that saw a non-finite value stores
// the flag. Every writer stores the same 1.0f, so the race is benign and needs no atomics; the
// flag is never cleared here, so the gradient and the parameter checks can share one.
__global__ void flag_nonfinite_kernel(const float* x, int64_t n, float* flag) {
  bool bad = false;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    bad |= !ew::is_finite(x[i]);
  }
  if (__any_sync(0xffffffffu, bad) && (threadIdx.x % 32) == 0) *flag = 1.0f;
}

}  // namespace

void fill(float* x, float value, int64_t n, cudaStream_t s) {
  fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, value, n);
  CUDA_CHECK_LAUNCH();
}

void bias_act(float* y, const float* bias, int rows, int cols, bool relu, cudaStream_t s) {
  const int64_t n = int64_t{rows} * cols;
  bias_act_kernel<<<blocks_for(n), kThreads, 0, s>>>(y, bias, n, cols, relu);
  CUDA_CHECK_LAUNCH();
}

void relu_backward(float* dx, const float* y, int64_t n, cudaStream_t s) {
  const bool vectors = reinterpret_cast<uintptr_t>(dx) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  relu_backward_kernel<<<blocks_for(vectors ? (n + 3) / 4 : n), kThreads, 0, s>>>(dx, y, n, vectors);
  CUDA_CHECK_LAUNCH();
}

void softmax_xent(const float* z, const int32_t* labels, int rows, int cols, float grad_scale,
                  float* dz, float* row_loss, float* loss_mean, float* loss_scaled,
                  float scaled_factor, cudaStream_t s) {
  xent_rows_kernel<<<blocks_for(rows), kThreads, 0, s>>>(z, labels, rows, cols, grad_scale, dz, row_loss);
  CUDA_CHECK_LAUNCH();
  loss_reduce_kernel<<<1, kThreads, 0, s>>>(row_loss, rows, loss_mean, loss_scaled, scaled_factor);
  CUDA_CHECK_LAUNCH();
}

void count_correct(const float* z, const int32_t* labels, int rows, int cols,
                   unsigned long long* count, cudaStream_t s) {
  count_correct_kernel<<<blocks_for(rows), kThreads, 0, s>>>(z, labels, rows, cols, count);
  CUDA_CHECK_LAUNCH();
}

void sgd(float* w, const float* g, float* v, int64_t n, float lr, float momentum, float weight_decay,
         float* nonfinite_flag, cudaStream_t s) {
  const bool mom = momentum > 0.0f, check = nonfinite_flag != nullptr;
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool vectors = aligned(w) && aligned(g) && (!mom || aligned(v));
  const int blocks = blocks_for(vectors ? (n + 3) / 4 : n);
  if (mom && check) {
    sgd_kernel<true, true><<<blocks, kThreads, 0, s>>>(w, g, v, n, vectors, lr, momentum, weight_decay, nonfinite_flag);
  } else if (mom) {
    sgd_kernel<true, false><<<blocks, kThreads, 0, s>>>(w, g, v, n, vectors, lr, momentum, weight_decay, nullptr);
  } else if (check) {
    sgd_kernel<false, true><<<blocks, kThreads, 0, s>>>(w, g, v, n, vectors, lr, momentum, weight_decay, nonfinite_flag);
  } else {
    sgd_kernel<false, false><<<blocks, kThreads, 0, s>>>(w, g, v, n, vectors, lr, momentum, weight_decay, nullptr);
  }
  CUDA_CHECK_LAUNCH();
}

void flag_nonfinite(const float* x, int64_t n, float* flag, cudaStream_t s) {
  flag_nonfinite_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, n, flag);
  CUDA_CHECK_LAUNCH();
}

}  // namespace dpscale::cuda
