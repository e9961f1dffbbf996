// test_gemm_record.cpp — the GEMM library through the real train_single_gpu: --gemm picks it, the
// record and the banner say which one, its kernels, its threads, the environment's pin and how it
// was chosen; under --gemm auto a fast, wrong library (DPSCALE_TEST_GEMM_BROKEN) is passed over and
// the record says why; an unknown library is bad input.
//   ctest -R '^SingleGemm'
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <string>

#include "contract/record.h"
#include "models/gemm/gemm_library.h"
#include "single_run.h"

namespace dpscale {
namespace {

using test::run_trainer;
using test::tiny_run;

nlohmann::json record_of(const ProcessResult& r) {
  EXPECT_EQ(r.exit_code, 0) << "stderr:\n" << r.err;
  const auto j = find_results_json(r.out);
  if (!j) {
    ADD_FAILURE() << "no RESULTS_JSON in:\n" << r.out;
    return nlohmann::json::object();
  }
  return *j;
}

class SingleGemm : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    const char* was = getenv("DPSCALE_GEMM_CACHE");
    saved_ = was ? was : "";
    setenv("DPSCALE_GEMM_CACHE", path("gemm.json").c_str(), 1);  // the child inherits it
  }
  void TearDown() override {
    unsetenv("DPSCALE_TEST_GEMM_BROKEN");
    if (saved_.empty()) {
      unsetenv("DPSCALE_GEMM_CACHE");
    } else {
      setenv("DPSCALE_GEMM_CACHE", saved_.c_str(), 1);
    }
    TempDirTest::TearDown();
  }
  std::string saved_;
};

TEST_F(SingleGemm, EachLibraryAsRequestedInTheRecordAndBanner) {
  for (const std::string& lib : gemm_library_names()) {
    if (!gemm_library_missing(lib).empty()) {
      std::cout << "[ SKIPPED  ] " << lib << ": " << gemm_library_missing(lib) << "\n";
      continue;
    }
    const ProcessResult r = run_trainer(tiny_run({{"--gemm", lib}}));
    const nlohmann::json j = record_of(r);
    EXPECT_EQ(j.value("gemm_library", ""), lib);
    EXPECT_EQ(j.value("gemm_choice", ""), "requested");
    EXPECT_EQ(j.value("gemm_passed_over", "?"), "");
    EXPECT_EQ(j.value("threads", 0), 1);
    EXPECT_FALSE(j.value("gemm_kernel", "").empty());
    if (lib == "openblas") {
      // The environment's pin is reported as it is, never changed.
      const char* pin = getenv("OPENBLAS_CORETYPE");
      EXPECT_EQ(j.value("gemm_pinned", "?"), pin ? std::string("OPENBLAS_CORETYPE=") + pin : "");
    }
    for (double l : j.at("losses")) EXPECT_TRUE(std::isfinite(l));
    EXPECT_NE(r.err.find("#   gemm       " + lib + " ("), std::string::npos) << r.err;
  }
}

TEST_F(SingleGemm, AutoPassesOverAFastWrongLibraryAndSaysWhy) {
  int built = 0;
  for (const std::string& lib : gemm_library_names()) built += gemm_library_missing(lib).empty();
  if (built < 2) GTEST_SKIP() << "one GEMM library built in: nothing to choose between";
  setenv("DPSCALE_TEST_GEMM_BROKEN", "openblas", 1);
  const nlohmann::json j = record_of(run_trainer(tiny_run({{"--gemm", "auto"}})));
  EXPECT_NE(j.value("gemm_library", ""), "openblas");
  EXPECT_NE(j.value("gemm_library", ""), "");
  EXPECT_EQ(j.value("gemm_choice", ""), "auto: measured");
  const std::string why = j.value("gemm_passed_over", "");
  EXPECT_NE(why.find("openblas: wrong results"), std::string::npos) << why;
  EXPECT_NE(why.find("float64 reference"), std::string::npos) << why;
  for (double l : j.at("losses")) EXPECT_TRUE(std::isfinite(l) && l > 0 && l < 10) << l;
  // The same run again reads the choice from the cache.
  const nlohmann::json again = record_of(run_trainer(tiny_run({{"--gemm", "auto"}})));
  EXPECT_EQ(again.value("gemm_choice", ""), "auto: cached in " + path("gemm.json"));
  EXPECT_EQ(again.value("gemm_library", ""), j.value("gemm_library", ""));
}

TEST_F(SingleGemm, AnUnknownLibraryIsBadInput) {
  test::expect_bad_input(run_trainer(tiny_run({{"--gemm", "mkl"}})), {"--gemm", "mkl"});
}

}  // namespace
}  // namespace dpscale
