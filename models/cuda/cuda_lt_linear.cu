// cuda_lt_linear.cu — LtLinear on cuBLASLt (cuda_lt_linear.h), every call's status checked.
//
// The row-major product y = x · wᵀ is, in cuBLAS's column-major terms, yᵀ[n_out, rows] =
// op(W)[n_out, n_in] · xᵀ[n_in, rows] with W the stored w read as column-major [n_in, n_out]
// (transposed) and xᵀ the stored x as column-major [n_in, rows]: the operands cuda_device.cu's
// gemm() hands cublasSgemm for the same call. The bias is a vector over D's rows (n_out), added
// to every column, then the ReLU: cuBLASLt's BIAS and RELU_BIAS epilogues.
#include "cuda_lt_linear.h"

#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <tuple>

#include "cuda_check.h"

namespace dpscale {

namespace {

// The largest power of two up to 256 dividing the address: what cuBLASLt may assume of it.
uint32_t alignment_of(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 4 && a % align != 0) align /= 2;
  return align;
}

class CublasLtLinear final : public LtLinear {
 public:
  CublasLtLinear(cudaStream_t stream, const std::string& math)
      : stream_(stream),
        compute_(math == "tf32"      ? CUBLAS_COMPUTE_32F_FAST_TF32
                 : math == "default" ? CUBLAS_COMPUTE_32F
                                     : CUBLAS_COMPUTE_32F_PEDANTIC) {
    CUBLAS_CHECK(cublasLtCreate(&lt_));
    CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
  }
  ~CublasLtLinear() override {
    // Destructors must not throw: release quietly.
    for (auto& [key, p] : plans_) {
      if (p.pref) cublasLtMatmulPreferenceDestroy(p.pref);
      if (p.d) cublasLtMatrixLayoutDestroy(p.d);
      if (p.b) cublasLtMatrixLayoutDestroy(p.b);
      if (p.a) cublasLtMatrixLayoutDestroy(p.a);
      if (p.op) cublasLtMatmulDescDestroy(p.op);
    }
    cudaFree(workspace_);
    cublasLtDestroy(lt_);
  }

  bool run(const float* x, const float* w, const float* bias, float* y, int rows, int n_in, int n_out,
           bool relu) override {
    const Key key{rows, n_in, n_out, relu, alignment_of(x), alignment_of(w), alignment_of(y), alignment_of(bias)};
    Plan& p = plan(key);
    if (!p.usable) return false;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    const float one = 1.0f, zero = 0.0f;
    const cublasStatus_t st = cublasLtMatmul(lt_, p.op, &one, w, p.a, x, p.b, &zero, y, p.d, y, p.d, &p.algo,
                                             workspace_, kWorkspaceBytes, stream_);
    // A plan's first call may still be declined (the heuristic's answer is not a promise): the
    // separate passes for it from then on. Once a plan has run, a failure is an error.
    if (st != CUBLAS_STATUS_SUCCESS && !p.ran) {
      p.usable = false;
      return false;
    }
    CUBLAS_CHECK(st);
    p.ran = true;
    return true;
  }

 private:
  // rows, n_in, n_out, relu, and the alignments of x, w, y and the bias
  using Key = std::tuple<int, int, int, bool, uint32_t, uint32_t, uint32_t, uint32_t>;
  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulAlgo_t algo{};
    bool usable = false;
    bool ran = false;  // has run once
  };

  // The plan for `key`, made on first use. cuBLASLt refusing any part of it (a math mode without
  // Lt kernels, an alignment, no algorithm for the shape) leaves it unusable, which is an answer
  // (the separate passes), not an error.
  Plan& plan(const Key& key) {
    const auto found = plans_.find(key);
    if (found != plans_.end()) return found->second;
    Plan& p = plans_[key];
    const auto [rows, n_in, n_out, relu, ax, aw, ay, abias] = key;
    if (abias < 16) return p;  // the epilogue reads the bias in vectors
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    const cublasLtEpilogue_t epilogue = relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    const uint64_t ws = kWorkspaceBytes;
    const bool made =
        cublasLtMatmulDescCreate(&p.op, compute_, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) == CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) == CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue) ==
            CUBLAS_STATUS_SUCCESS &&
        cublasLtMatrixLayoutCreate(&p.a, CUDA_R_32F, n_in, n_out, n_in) == CUBLAS_STATUS_SUCCESS &&  // w (op: T)
        cublasLtMatrixLayoutCreate(&p.b, CUDA_R_32F, n_in, rows, n_in) == CUBLAS_STATUS_SUCCESS &&   // x
        cublasLtMatrixLayoutCreate(&p.d, CUDA_R_32F, n_out, rows, n_out) == CUBLAS_STATUS_SUCCESS && // y (C, D)
        cublasLtMatmulPreferenceCreate(&p.pref) == CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulPreferenceSetAttribute(p.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws) ==
            CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulPreferenceSetAttribute(p.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &aw, sizeof aw) ==
            CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulPreferenceSetAttribute(p.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ax, sizeof ax) ==
            CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulPreferenceSetAttribute(p.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ay, sizeof ay) ==
            CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulPreferenceSetAttribute(p.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &ay, sizeof ay) ==
            CUBLAS_STATUS_SUCCESS;
    if (!made) return p;
    cublasLtMatmulHeuristicResult_t r{};
    int n = 0;
    if (cublasLtMatmulAlgoGetHeuristic(lt_, p.op, p.a, p.b, p.d, p.d, p.pref, 1, &r, &n) != CUBLAS_STATUS_SUCCESS ||
        n == 0 || r.state != CUBLAS_STATUS_SUCCESS) {
      return p;
    }
    p.algo = r.algo;
    p.usable = true;
    return p;
  }

  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // cuBLAS's advice for Hopper
  cudaStream_t stream_;
  cublasComputeType_t compute_;
  cublasLtHandle_t lt_ = nullptr;
  void* workspace_ = nullptr;
  std::map<Key, Plan> plans_;
};

}  // namespace

std::unique_ptr<LtLinear> make_lt_linear(cudaStream_t stream, const std::string& math) {
  return std::make_unique<CublasLtLinear>(stream, math);
}

}  // namespace dpscale
