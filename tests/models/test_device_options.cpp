// test_device_options.cpp — the device's math mode as the record names it (cublas_math): what
// each DeviceOptions asks for, the refusal of an unknown word, and "none" on the CPU backend,
// where no cuBLAS runs.
//   ctest -R ModelsDeviceMath
#include <gtest/gtest.h>

#include <string>

#include "models/device.h"
#include "core/errors.h"

namespace dpscale {
namespace {

DeviceOptions with(bool tf32, const std::string& math) {
  DeviceOptions o;
  o.tf32 = tf32;
  o.cublas_math = math;
  return o;
}

TEST(ModelsDeviceMath, OptionsNameTheMode) {
  EXPECT_EQ(cublas_math_of(with(false, "")), "pedantic");  // the trainers' exact fp32
  EXPECT_EQ(cublas_math_of(with(true, "")), "tf32");       // --tf32
  EXPECT_EQ(cublas_math_of(with(false, "default")), "default");
  EXPECT_EQ(cublas_math_of(with(false, "pedantic")), "pedantic");
  int n = 0;
  for (const char* const* m = cublas_math_names(); *m; ++m) ++n;
  EXPECT_EQ(n, 3);
}

TEST(ModelsDeviceMath, UnknownModeIsRefusedNamingTheChoices) {
  try {
    cublas_math_of(with(false, "fast"));
    FAIL() << "an unknown math mode was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'fast'"), std::string::npos) << what;
    EXPECT_NE(what.find("pedantic, default, tf32"), std::string::npos) << what;
  }
}

TEST(ModelsDeviceMath, CpuBackendRunsNoCublas) {
  DeviceOptions o;
  o.backend = "cpu";
  EXPECT_EQ(make_device(o)->gemm_math(), "none");
  o.cublas_math = "nonsense";  // refused on every backend: a typo must not pass unnoticed
  EXPECT_THROW(make_device(o), InputError);
}

}  // namespace
}  // namespace dpscale
