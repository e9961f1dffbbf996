// step_gemms.h — the GEMMs one training step of an MLP runs, exactly as models/mlp.cpp calls
// Device::gemm (row-major; W stored [out, in] as nn.Linear does):
//   forward      Y[B,out]   = X[B,in] · W[out,in]ᵀ     gemm(N, T)  m=B   n=out k=in
//   weight_grad  dW[out,in] = dY[B,out]ᵀ · X[B,in]     gemm(T, N)  m=out n=in  k=B
//   input_grad   dX[B,in]   = dY[B,out] · W[out,in]    gemm(N, N)  m=B   n=in  k=out  (not layer 0)
// --gemm auto (gemm_choice.h) checks and times the libraries on this list; bench_gemm times each
// shape in each library, bench_step the whole list against a full step.
#pragma once

#include <string>
#include <vector>

#include "models/mlp_spec.h"

namespace dpscale {

enum class GemmKind { forward, weight_grad, input_grad };
const char* gemm_kind_name(GemmKind k);

struct GemmShape {
  int layer = 0;
  GemmKind kind = GemmKind::forward;
  bool trans_a = false, trans_b = false;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0, ldc = 0;  // row strides of the stored matrices, as mlp.cpp passes them

  double flops() const { return 2.0 * m * n * k; }
  // Size of the operands A, B and the output C, in floats.
  long long a_count() const { return static_cast<long long>(trans_a ? k : m) * lda; }
  long long b_count() const { return static_cast<long long>(trans_b ? n : k) * ldb; }
  long long c_count() const { return static_cast<long long>(m) * ldc; }
  std::string label() const;  // "L2/weight_grad/TN/m:2048/n:2048/k:1024"
  // What the library sees, without layer and kind: "TN/m:2048/n:2048/k:1024/ld:2048,1024,1024".
  // Two GEMMs with one key are the same call on operands of the same layout.
  std::string call_key() const;
};

// In the order a step runs them: forward layer 0..L-1, then per layer L-1..0 its weight
// gradient and (except layer 0) its input gradient.
std::vector<GemmShape> training_step_gemms(const MlpSpec& spec, int batch);

}  // namespace dpscale
