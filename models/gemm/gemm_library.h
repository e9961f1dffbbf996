// gemm_library.h — the GEMM libraries the CPU backend can call, behind one small interface.
//
// CpuDevice::gemm forwards to one GemmLibrary: OpenBLAS (always built in), BLIS and oneDNN (built
// in when CMake found them: DPSCALE_HAVE_BLIS, DPSCALE_HAVE_ONEDNN). One file per library
// (gemm_openblas.cpp, gemm_blis.cpp, gemm_onednn.cpp); gemm_choice.h picks one for `--gemm auto`.
//
// Every library is called row-major, C[m,n] = alpha · op(A)[m,k] · op(B)[k,n] + beta · C, with
// lda/ldb/ldc the row strides of the stored (untransposed) matrices — Device::gemm's contract, so
// no library sees a transposition trick: OpenBLAS takes CblasRowMajor, BLIS takes a row stride
// and a column stride of 1, oneDNN's dnnl_sgemm is row-major by definition.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace dpscale {

// What a library says about itself, for the record and the banner.
struct GemmLibraryInfo {
  std::string library;  // openblas | blis | onednn
  std::string kernel;   // the kernels it runs here, as it reports them: "OpenBLAS 0.3.21 Cooperlake"
  int threads = 1;      // threads it uses per call
  // The environment variable that pinned its kernels, as NAME=VALUE ("" when none was set). Left
  // as it is: a pin is set where the library's own pick computes wrong results or crashes.
  std::string pinned;
};

// What the record says about a run's GEMMs (Device::gemm_report): the library and its kernels,
// how it was chosen (GemmChoice::how: "requested", "auto: measured", ...) and why the others were
// passed over. An empty library where no GemmLibrary runs (the CUDA backend: cuBLAS).
struct GemmReport {
  GemmLibraryInfo info;
  std::string choice;
  std::string passed_over;
};

class GemmLibrary {
 public:
  virtual ~GemmLibrary() = default;
  virtual void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                     const float* b, int ldb, float beta, float* c, int ldc) = 0;
  virtual GemmLibraryInfo info() const = 0;
};

// Every library --gemm names, in the order auto measures them: openblas, blis, onednn.
const std::vector<std::string>& gemm_library_names();
// "" when `name` is built into this binary; else why not ("BLIS: not built in (libblis-dev was not
// found when this build was configured)"). InputError for a name that is no library.
std::string gemm_library_missing(const std::string& name);
// The library `name` with `threads` threads per call. InputError for an unknown name or one that
// is not built in. Under DPSCALE_TEST_GEMM_BROKEN=NAME (a test hook, inert unless set) that
// library returns without computing: fast and wrong, for the negative control of the auto choice.
std::unique_ptr<GemmLibrary> make_gemm_library(const std::string& name, int threads);
// The hook's value ("" when unset): the choice's cache key includes it, so a choice made under
// the hook is never served to a run without it.
std::string gemm_test_hook();

// One factory per library file.
std::unique_ptr<GemmLibrary> make_openblas_gemm(int threads);
#if DPSCALE_HAVE_BLIS
std::unique_ptr<GemmLibrary> make_blis_gemm(int threads);
#endif
#if DPSCALE_HAVE_ONEDNN
std::unique_ptr<GemmLibrary> make_onednn_gemm(int threads);
#endif

// NAME=VALUE of the first of `vars` set in the environment, "" when none is.
std::string env_pin(std::initializer_list<const char*> vars);

}  // namespace dpscale
