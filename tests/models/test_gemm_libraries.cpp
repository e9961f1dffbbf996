// test_gemm_libraries.cpp — every GEMM library of the CPU backend against a float64 reference,
// and the reference check itself (its bound, with controls on both sides of it).
//
// Each library's tests skip, with the reason, only where the library is not built in (CI
// installs all three: scripts/install-deps.sh; .ci/run fails on a skip of label gemm).
//   ctest -R '^ModelsGemm'
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/errors.h"
#include "models/data/rng.h"
#include "models/device.h"
#include "models/gemm/gemm_accuracy.h"
#include "models/gemm/gemm_library.h"
#include "models/gemm/step_gemms.h"

namespace dpscale {
namespace {

// Shapes that reach every path of a kernel: all four transposes, sizes that are no multiple of any
// register block (edge tiles), k = 1, row strides wider than the rows (sub-matrices), and the
// step's own GEMMs of a small model.
std::vector<GemmShape> shapes_to_check() {
  std::vector<GemmShape> s;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (auto [m, n, k] : {std::tuple{1, 1, 1}, {7, 5, 3}, {33, 17, 65}, {100, 1, 257}, {1, 70, 9}, {129, 67, 1}}) {
        GemmShape g{0, GemmKind::forward, ta, tb, m, n, k, 0, 0, 0};
        g.lda = (ta ? m : k) + 3;  // padded rows: the library must honour the stride
        g.ldb = (tb ? k : n) + 1;
        g.ldc = n + 2;
        s.push_back(g);
      }
    }
  }
  for (const GemmShape& g : training_step_gemms(parse_model("784,96,33,10"), 48)) s.push_back(g);
  return s;
}

class ModelsGemmLibrary : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string missing = gemm_library_missing(GetParam());
    if (!missing.empty()) GTEST_SKIP() << missing;
  }
};

TEST_P(ModelsGemmLibrary, MatchesFloat64ReferenceWithinTheFp32Bound) {
  auto lib = make_gemm_library(GetParam(), 1);
  for (const GemmShape& s : shapes_to_check()) {
    for (float beta : {0.0f, 1.0f}) {  // β = 0 sets C (forward, dX, dW); β = 1 accumulates (dW of a micro-batch)
      const GemmCheck c = check_gemm_library(*lib, s, beta);
      EXPECT_TRUE(c.ok) << GetParam() << " " << s.label() << " lda " << s.lda << " beta " << beta << ": " << c.where
                        << ", " << c.worst << "x the bound";
      EXPECT_GT(c.checked, 0);
    }
  }
}

TEST_P(ModelsGemmLibrary, LargeStepShapesMatchTheReference) {
  // The sampled check (4 rows and 4 columns) on a layer of the medium preset at batch 256.
  auto lib = make_gemm_library(GetParam(), 1);
  for (const GemmShape& s : training_step_gemms(parse_model("784,2048,10"), 256)) {
    const GemmCheck c = check_gemm_library(*lib, s);
    EXPECT_TRUE(c.ok) << GetParam() << " " << s.label() << ": " << c.where;
  }
}

TEST_P(ModelsGemmLibrary, ReportsItselfAndItsThreads) {
  const GemmLibraryInfo i = make_gemm_library(GetParam(), 3)->info();
  EXPECT_EQ(i.library, GetParam());
  EXPECT_EQ(i.threads, 3);
  EXPECT_GT(i.kernel.size(), 6u) << i.kernel;  // a version and a kernel name
}

TEST_P(ModelsGemmLibrary, TheCpuDeviceCallsIt) {
  DeviceOptions o;
  o.backend = "cpu";
  o.gemm = GetParam();
  const auto dev = make_device(o);
  const GemmReport r = dev->gemm_report();
  EXPECT_EQ(r.info.library, GetParam());
  EXPECT_EQ(r.choice, "requested");
  EXPECT_EQ(r.passed_over, "");
  // 2x2: [[1,2],[3,4]] · [[5,6],[7,8]] = [[19,22],[43,50]], exact in fp32.
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  float c[4] = {};
  dev->gemm(false, false, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
  EXPECT_EQ(c[0], 19.0f);
  EXPECT_EQ(c[1], 22.0f);
  EXPECT_EQ(c[2], 43.0f);
  EXPECT_EQ(c[3], 50.0f);
}

INSTANTIATE_TEST_SUITE_P(All, ModelsGemmLibrary, ::testing::ValuesIn(gemm_library_names()),
                         [](const auto& info) { return info.param; });

TEST(ModelsGemmLibraryNames, UnknownAndMissingAreRefusedByName) {
  EXPECT_THROW(gemm_library_missing("mkl"), InputError);
  EXPECT_THROW(make_gemm_library("mkl", 1), InputError);
  EXPECT_THROW(make_gemm_library("openblas", 0), InputError);
  DeviceOptions o;
  o.backend = "cpu";
  o.gemm = "mkl";
  EXPECT_THROW(make_device(o), InputError);
  EXPECT_EQ(gemm_library_missing("openblas"), "");
}

// BLIS's shared library exports cblas_sgemm and the BLAS names too; the first library on the link
// line that exports a name is the one every call reaches, so OpenBLAS must come first.
TEST(ModelsGemmLibraryNames, CblasNamesAreOpenBlas) {
  void* sym = dlsym(RTLD_DEFAULT, "cblas_sgemm");
  ASSERT_NE(sym, nullptr);
  Dl_info where{};
  ASSERT_NE(dladdr(sym, &where), 0);
  EXPECT_NE(std::string(where.dli_fname).find("openblas"), std::string::npos) << where.dli_fname;
}

// --- the reference check and its bound ---

TEST(ModelsGemmAccuracy, TheBoundIsGammaOfKPlusTwo) {
  const double u = std::ldexp(1.0, -24);
  EXPECT_DOUBLE_EQ(fp32_gemm_error_factor(1), 3 * u / (1 - 3 * u));
  EXPECT_DOUBLE_EQ(fp32_gemm_error_factor(4094), 4096 * u / (1 - 4096 * u));
}

// A correct result, then the same result with one element moved to just past the bound (must fail)
// and to half of it (must pass): the check is as tight as the bound, and no tighter.
TEST(ModelsGemmAccuracy, OneElementPastTheBoundFailsHalfOfItPasses) {
  const GemmShape s{0, GemmKind::forward, false, true, 40, 30, 200, 200, 200, 30};
  const CounterRng rng(5, 1);
  std::vector<float> a(static_cast<size_t>(s.a_count())), b(static_cast<size_t>(s.b_count()));
  for (size_t i = 0; i < a.size(); ++i) a[i] = rng.uniform_symmetric(i, 1.0f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = rng.uniform_symmetric(a.size() + i, 1.0f);
  // The result rounded once from float64: well inside the bound.
  std::vector<float> c(static_cast<size_t>(s.c_count()));
  std::vector<double> mag(c.size());
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      double ref = 0, m = 0;
      for (int p = 0; p < s.k; ++p) {
        const double prod = double{a[static_cast<size_t>(i * s.lda + p)]} * b[static_cast<size_t>(j * s.ldb + p)];
        ref += prod;
        m += std::fabs(prod);
      }
      c[static_cast<size_t>(i * s.ldc + j)] = static_cast<float>(ref);
      mag[static_cast<size_t>(i * s.ldc + j)] = m;
    }
  }
  const GemmCheck good = check_gemm_result(s, 1.0f, a.data(), b.data(), 0.0f, nullptr, c.data());
  EXPECT_TRUE(good.ok) << good.where;
  EXPECT_EQ(good.checked, s.m * s.n);
  EXPECT_LT(good.worst, 0.05);  // one rounding, far from k + 2 of them

  const size_t at = static_cast<size_t>(17 * s.ldc + 11);
  const double bound = fp32_gemm_error_factor(s.k) * mag[at];
  std::vector<float> off = c;
  off[at] = static_cast<float>(c[at] + 1.05 * bound);
  const GemmCheck bad = check_gemm_result(s, 1.0f, a.data(), b.data(), 0.0f, nullptr, off.data());
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.where.find("row 17, col 11"), std::string::npos) << bad.where;

  off[at] = static_cast<float>(c[at] + 0.5 * bound);
  EXPECT_TRUE(check_gemm_result(s, 1.0f, a.data(), b.data(), 0.0f, nullptr, off.data()).ok);

  off[at] = NAN;
  EXPECT_FALSE(check_gemm_result(s, 1.0f, a.data(), b.data(), 0.0f, nullptr, off.data()).ok);
}

// The negative control of the library check: DPSCALE_TEST_GEMM_BROKEN makes a real library skip
// its work, and the check must say so.
TEST(ModelsGemmAccuracy, ABrokenLibraryFailsTheCheck) {
  setenv("DPSCALE_TEST_GEMM_BROKEN", "openblas", 1);
  auto broken = make_gemm_library("openblas", 1);
  unsetenv("DPSCALE_TEST_GEMM_BROKEN");
  const GemmShape s{0, GemmKind::forward, false, true, 64, 32, 16, 16, 16, 32};
  const GemmCheck c = check_gemm_library(*broken, s);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(broken->info().kernel.find("broken"), std::string::npos);
  EXPECT_TRUE(check_gemm_library(*make_gemm_library("openblas", 1), s).ok);
}

TEST(ModelsGemmStepShapes, MediumStepAtBatch1024) {
  // bench_gemm, bench_step and --gemm auto use exactly the GEMMs mlp.cpp runs: per layer a
  // forward and a weight gradient, and an input gradient for every layer but the first.
  const MlpSpec spec = parse_model("medium");
  const auto shapes = training_step_gemms(spec, 1024);
  ASSERT_EQ(shapes.size(), 14u);  // 5 forward + 5 weight + 4 input
  double flops = 0.0;
  for (const auto& s : shapes) flops += s.flops();
  // 3 GEMMs × 2·B·in·out per layer, less the first layer's input gradient.
  double want = 0.0;
  for (int l = 0; l < spec.n_layers(); ++l) want += 6.0 * 1024 * spec.widths[l] * spec.widths[l + 1];
  want -= 2.0 * 1024 * 784 * 2048;
  EXPECT_DOUBLE_EQ(flops, want);
  EXPECT_EQ(shapes.front().label(), "L0/forward/NT/m:1024/n:2048/k:784");
  EXPECT_EQ(shapes[5].label(), "L4/weight_grad/TN/m:10/n:512/k:1024");
  EXPECT_EQ(shapes[6].label(), "L4/input_grad/NN/m:1024/n:512/k:10");
  EXPECT_EQ(shapes.back().label(), "L0/weight_grad/TN/m:2048/n:784/k:1024");
}

}  // namespace
}  // namespace dpscale
