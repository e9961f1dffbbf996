// nccl_order_hook.cu — the delay and ×2 kernels of nccl_order_hook.h, and reading its variables.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "models/cuda/cuda_check.h"
#include "nccl_order_hook.h"

namespace dpscale {

namespace {

// One thread polls the GPU's global nanosecond timer: the stream is busy for `ns`.
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

__global__ void double_kernel(float* x, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    x[i] *= 2.0f;
  }
}

void spin(cudaStream_t s) {
  spin_kernel<<<1, 1, 0, s>>>(static_cast<unsigned long long>(kSpinMs * 1e6));
  CUDA_CHECK_LAUNCH();
}

void twice(float* x, size_t n, cudaStream_t s) {
  const size_t blocks = (n + 255) / 256;
  double_kernel<<<static_cast<int>(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096), 256, 0, s>>>(x, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

NcclOrderHook NcclOrderHook::from_env() {
  NcclOrderHook h;
  if (const char* v = std::getenv("DPSCALE_TEST_NCCL_ORDER"); v && *v) {
    const std::string w = v;
    if (w == "after") h.at = At::after;
    else if (w == "before") h.at = At::before;
    else throw std::invalid_argument("DPSCALE_TEST_NCCL_ORDER: '" + w + "' is neither after nor before");
  }
  if (const char* v = std::getenv("DPSCALE_TEST_NCCL_NO_FINISH_WAIT"); v && *v) h.no_finish_wait = std::string(v) == "1";
  return h;
}

void NcclOrderHook::before(float* x, size_t n, cudaStream_t s) const {
  (void)x;
  (void)n;
  if (at == At::before) spin(s);
}

void NcclOrderHook::after(float* x, size_t n, cudaStream_t s) const {
  if (at == At::off) return;
  if (at == At::after) spin(s);
  twice(x, n, s);
}

}  // namespace dpscale
