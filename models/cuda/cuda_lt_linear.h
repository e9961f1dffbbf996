// cuda_lt_linear.h — a layer's forward as one cuBLASLt call: the GEMM with the bias and the ReLU
// in its epilogue (CUBLASLT_EPILOGUE_BIAS / RELU_BIAS), so the activation is written once instead
// of written by the GEMM and then read and written again by a bias pass.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>

namespace dpscale {

class LtLinear {
 public:
  virtual ~LtLinear() = default;
  // Row-major y[rows, n_out] = act(x[rows, n_in] · w[n_out, n_in]ᵀ + bias), queued on the stream.
  // False, with nothing queued, when cuBLASLt has no kernel for this call (its shape, math mode or
  // pointer alignment): the caller runs the GEMM and the bias pass instead. A call that cuBLASLt
  // answers once is planned once (descriptors and algorithm kept per shape and alignment).
  virtual bool run(const float* x, const float* w, const float* bias, float* y, int rows, int n_in, int n_out,
                   bool relu) = 0;
};

// `math` as CudaDevice takes it: "pedantic", "default" or "tf32" (device.h, cublas_math_names).
std::unique_ptr<LtLinear> make_lt_linear(cudaStream_t stream, const std::string& math);

}  // namespace dpscale
