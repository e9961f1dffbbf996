// adamw_kernel.cu — AdamW on the GPU: a grid-stride loop around ew::adamw_update (adamw.h), the
// scalars passed by value (worked out on the host once a step), the finite check a warp vote
// as in the SGD kernel (kernels.cu): every writer stores the same 1.0f, a benign race.
#include "adamw_kernel.h"

#include "cuda_check.h"
#include "models/finite_check.h"

namespace dpscale::cuda {

namespace {

constexpr int kThreads = 256;

template <bool kCheck>
__global__ void adamw_kernel(float* w, const float* g, float* m, float* v, int64_t n, AdamWScalars s, float* flag) {
  bool bad = false;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const float wi = ew::adamw_update(w[i], g[i], &m[i], &v[i], s);
    w[i] = wi;
    if (kCheck) bad |= !ew::is_finite(wi);
  }
  if (kCheck && __any_sync(0xffffffffu, bad) && (threadIdx.x % 32) == 0) *flag = 1.0f;
}

}  // namespace

void adamw(float* w, const float* g, float* m, float* v, int64_t n, const AdamWScalars& s, float* nonfinite_flag,
           cudaStream_t stream) {
  if (n <= 0) return;
  const int64_t want = (n + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(want < 4096 ? want : 4096);
  if (nonfinite_flag) {
    adamw_kernel<true><<<blocks, kThreads, 0, stream>>>(w, g, m, v, n, s, nonfinite_flag);
  } else {
    adamw_kernel<false><<<blocks, kThreads, 0, stream>>>(w, g, m, v, n, s, nullptr);
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace dpscale::cuda
