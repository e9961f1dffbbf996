// gemm_blis.cpp — BLIS behind GemmLibrary: its typed API, bli_sgemm, with general strides.
//
// Row-major is a row stride of ld and a column stride of 1 for every operand. BLIS's own names
// (bli_*) are called, never its BLAS or CBLAS layer: those share their symbol names with
// OpenBLAS's in one process. Kernels: BLIS picks a sub-configuration from the CPU at run time
// (bli_arch_query_id; "zen3", "skx", "haswell"...), unless BLIS_ARCH_TYPE names one. The thread
// count is process-wide.
#include <blis.h>

#include "gemm_library.h"

namespace dpscale {

namespace {

class BlisGemm final : public GemmLibrary {
 public:
  explicit BlisGemm(int threads) : threads_(threads) { bli_thread_set_num_threads(threads); }

  void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
             int ldb, float beta, float* c, int ldc) override {
    bli_sgemm(trans_a ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, trans_b ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, m, n, k,
              &alpha, const_cast<float*>(a), lda, 1, const_cast<float*>(b), ldb, 1, &beta, c, ldc, 1);
  }

  GemmLibraryInfo info() const override {
    std::string kernel = "BLIS ";
    kernel += bli_info_get_version_str();
    kernel += " ";
    kernel += bli_arch_string(bli_arch_query_id());
    return {"blis", kernel, threads_, env_pin({"BLIS_ARCH_TYPE"})};
  }

 private:
  int threads_;
};

}  // namespace

std::unique_ptr<GemmLibrary> make_blis_gemm(int threads) { return std::make_unique<BlisGemm>(threads); }

}  // namespace dpscale
