// gemm_openblas.cpp — OpenBLAS behind GemmLibrary: cblas_sgemm in row-major mode.
//
// Kernels: OpenBLAS built with DYNAMIC_ARCH picks its kernels from the CPU at load time, unless
// OPENBLAS_CORETYPE names them (set on machines where its own pick computes wrong results or
// crashes); openblas_get_corename() says which it runs. The thread count is process-wide.
#include <cblas.h>

#include "gemm_library.h"

extern "C" {
// In OpenBLAS's cblas.h; declared again so a cblas.h of another library cannot hide them.
char* openblas_get_corename(void);
char* openblas_get_config(void);
}

namespace dpscale {

namespace {

class OpenBlasGemm final : public GemmLibrary {
 public:
  explicit OpenBlasGemm(int threads) : threads_(threads) { openblas_set_num_threads(threads); }

  void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
             int ldb, float beta, float* c, int ldc) override {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                alpha, a, lda, b, ldb, beta, c, ldc);
  }

  GemmLibraryInfo info() const override {
    // The config string starts "OpenBLAS 0.3.21 ...": its first two words are the version.
    std::string config = openblas_get_config();
    const auto second_space = config.find(' ', config.find(' ') + 1);
    std::string kernel = config.substr(0, second_space) + " " + openblas_get_corename();
    return {"openblas", kernel, threads_, env_pin({"OPENBLAS_CORETYPE"})};
  }

 private:
  int threads_;
};

}  // namespace

std::unique_ptr<GemmLibrary> make_openblas_gemm(int threads) { return std::make_unique<OpenBlasGemm>(threads); }

}  // namespace dpscale
