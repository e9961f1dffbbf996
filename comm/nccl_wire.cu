// nccl_wire.cu — grid loops around grad_format.h's encode_grad / decode_grad.
#include "models/cuda/cuda_check.h"
#include "nccl_wire.cuh"

namespace dpscale::nccl_wire {

namespace {

constexpr int kThreads = 256;

int blocks_for(size_t n) {
  const size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);  // grid-stride beyond
}

__global__ void pack_kernel(GradFormat f, const float* x, uint16_t* wire, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    wire[i] = encode_grad(f, x[i]);
  }
}

__global__ void unpack_kernel(GradFormat f, const uint16_t* wire, float* x, size_t n, size_t skip) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    if (i != skip) x[i] = decode_grad(f, wire[i]);
  }
}

}  // namespace

void pack(GradFormat f, const float* x, uint16_t* wire, size_t n, cudaStream_t s) {
  pack_kernel<<<blocks_for(n), kThreads, 0, s>>>(f, x, wire, n);
  CUDA_CHECK_LAUNCH();
}

void unpack(GradFormat f, const uint16_t* wire, float* x, size_t n, size_t skip, cudaStream_t s) {
  unpack_kernel<<<blocks_for(n), kThreads, 0, s>>>(f, wire, x, n, skip);
  CUDA_CHECK_LAUNCH();
}

}  // namespace dpscale::nccl_wire
