// gemm_library.cpp — which GEMM libraries this build has, and the factory --gemm uses.
#include "gemm_library.h"

#include <cstdlib>

#include "core/errors.h"

namespace dpscale {

namespace {

// DPSCALE_TEST_GEMM_BROKEN's library: every call returns at once, C untouched. It is the fastest
// "library" there is and its results are wrong, which is what the auto choice must pass over.
class BrokenGemm final : public GemmLibrary {
 public:
  explicit BrokenGemm(std::unique_ptr<GemmLibrary> real) : real_(std::move(real)) {}
  void sgemm(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int) override {}
  GemmLibraryInfo info() const override {
    GemmLibraryInfo i = real_->info();
    i.kernel += " (broken by DPSCALE_TEST_GEMM_BROKEN)";
    return i;
  }

 private:
  std::unique_ptr<GemmLibrary> real_;
};

std::string known_names() {
  std::string all;
  for (const std::string& n : gemm_library_names()) all += (all.empty() ? "" : ", ") + n;
  return all;
}

}  // namespace

const std::vector<std::string>& gemm_library_names() {
  static const std::vector<std::string> names = {"openblas", "blis", "onednn"};
  return names;
}

std::string gemm_library_missing(const std::string& name) {
  if (name == "openblas") return "";
  if (name == "blis") {
    return DPSCALE_HAVE_BLIS ? "" : "BLIS: not built in (libblis-dev was not found when this build was configured)";
  }
  if (name == "onednn") {
    return DPSCALE_HAVE_ONEDNN ? "" : "oneDNN: not built in (libdnnl-dev was not found when this build was configured)";
  }
  throw InputError("--gemm: unknown GEMM library '" + name + "' (use auto, " + known_names() + ")");
}

std::string gemm_test_hook() {
  const char* v = std::getenv("DPSCALE_TEST_GEMM_BROKEN");
  return v ? v : "";
}

std::unique_ptr<GemmLibrary> make_gemm_library(const std::string& name, int threads) {
  if (threads < 1) throw InputError("--threads must be at least 1 (got " + std::to_string(threads) + ")");
  const std::string missing = gemm_library_missing(name);
  if (!missing.empty()) throw InputError("--gemm " + name + ": " + missing);
  std::unique_ptr<GemmLibrary> lib;
  if (name == "openblas") lib = make_openblas_gemm(threads);
#if DPSCALE_HAVE_BLIS
  if (name == "blis") lib = make_blis_gemm(threads);
#endif
#if DPSCALE_HAVE_ONEDNN
  if (name == "onednn") lib = make_onednn_gemm(threads);
#endif
  if (gemm_test_hook() == name) return std::make_unique<BrokenGemm>(std::move(lib));
  return lib;
}

std::string env_pin(std::initializer_list<const char*> vars) {
  for (const char* var : vars) {
    if (const char* v = std::getenv(var)) return std::string(var) + "=" + v;
  }
  return "";
}

}  // namespace dpscale
