// gemm_onednn.cpp — oneDNN behind GemmLibrary: dnnl_sgemm, its BLAS-like row-major sgemm.
//
// dnnl_sgemm runs oneDNN's JIT-generated GEMM kernels for the best instruction set the CPU has
// (dnnl_get_effective_cpu_isa), capped by ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA when set. This
// build threads with OpenMP, whose thread count belongs to the calling thread: it is set on each
// call where it differs (a read of a thread-local value otherwise), so a GEMM from any thread —
// the trainer's, a probe's — runs with the library's threads.
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <stdexcept>
#include <string>

#include "gemm_library.h"

namespace dpscale {

namespace {

const char* isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

class OneDnnGemm final : public GemmLibrary {
 public:
  explicit OneDnnGemm(int threads) : threads_(threads) {}

  void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
             int ldb, float beta, float* c, int ldc) override {
    if (omp_get_max_threads() != threads_) omp_set_num_threads(threads_);
    const dnnl_status_t st =
        dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (st != dnnl_success) {
      throw std::runtime_error("dnnl_sgemm failed with status " + std::to_string(static_cast<int>(st)) + " (m " +
                               std::to_string(m) + ", n " + std::to_string(n) + ", k " + std::to_string(k) + ")");
    }
  }

  GemmLibraryInfo info() const override {
    const dnnl_version_t* v = dnnl_version();
    std::string kernel = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                         std::to_string(v->patch) + " " + isa_name(dnnl_get_effective_cpu_isa());
    return {"onednn", kernel, threads_, env_pin({"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"})};
  }

 private:
  int threads_;
};

}  // namespace

std::unique_ptr<GemmLibrary> make_onednn_gemm(int threads) { return std::make_unique<OneDnnGemm>(threads); }

}  // namespace dpscale
