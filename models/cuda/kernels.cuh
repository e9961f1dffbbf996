// kernels.cuh — launchers for the CUDA backend's element-wise kernels (kernels.cu). Each
// kernel is a thin grid loop around a function of elementwise.h; each launcher checks the launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace dpscale::cuda {

void fill(float* x, float value, int64_t n, cudaStream_t s);
void bias_act(float* y, const float* bias, int rows, int cols, bool relu, cudaStream_t s);
void relu_backward(float* dx, const float* y, int64_t n, cudaStream_t s);
// Row losses into row_loss[rows]; then one block sums them in double, in a fixed order
// (deterministic; double as on the CPU backend), and writes *loss_mean = S / rows and
// *loss_scaled = S · scaled_factor, each rounded to float once.
void softmax_xent(const float* z, const int32_t* labels, int rows, int cols, float grad_scale,
                  float* dz, float* row_loss, float* loss_mean, float* loss_scaled,
                  float scaled_factor, cudaStream_t s);
// Adds the number of rows whose argmax equals the label to *count (integer atomics: exact).
void count_correct(const float* z, const int32_t* labels, int rows, int cols,
                   unsigned long long* count, cudaStream_t s);
// The optimizer pass; with a non-null nonfinite_flag the finite check folded in (device.h, sgd).
void sgd(float* w, const float* g, float* v, int64_t n, float lr, float momentum, float weight_decay,
         float* nonfinite_flag, cudaStream_t s);
// *flag = 1 when any of x[0, n) is non-finite (finite_check.h's predicate); untouched otherwise.
void flag_nonfinite(const float* x, int64_t n, float* flag, cudaStream_t s);

}  // namespace dpscale::cuda
