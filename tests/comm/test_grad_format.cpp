// test_grad_format.cpp — the 2-byte gradient conversions of comm/grad_format.h: every 2-byte
// pattern round-trips, rounding is to nearest even, the edges (fp16 overflow, subnormals, NaN)
// are right, and the error of a rounded float stays within half an ulp of the format.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "comm/grad_format.h"

namespace dpscale {
namespace {

TEST(GradFormat, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto x = static_cast<uint16_t>(h);
    const float b = bf16_to_float(x), f = fp16_to_float(x);
    if (std::isnan(b)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(b)))) << std::hex << h;
    } else {
      EXPECT_EQ(float_to_bf16(b), x) << std::hex << h;
    }
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(f)))) << std::hex << h;
    } else {
      EXPECT_EQ(float_to_fp16(f), x) << std::hex << h;
    }
  }
}

TEST(GradFormat, KnownValuesAndEdges) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7bff);   // largest fp16
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7bff);   // rounds down to it
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7c00);   // rounds up to inf
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // half of it: tie to even (0)
  EXPECT_EQ(float_to_fp16(std::ldexp(1.5f, -24)), 0x0002);  // 1.5 ulp: tie to even (2)
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  // Ties to even in bf16: 1 + 2^-8 is halfway between 1 and 1 + 2^-7.
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(float_to_bf16(INFINITY), 0x7f80);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(NAN))));
  EXPECT_EQ(parse_grad_format("bf16"), GradFormat::bf16);
  EXPECT_STREQ(grad_format_name(GradFormat::fp16), "fp16");
  EXPECT_EQ(grad_format_bytes(GradFormat::bf16), 2);
  EXPECT_EQ(grad_format_bytes(GradFormat::fp32), 4);
  EXPECT_THROW(parse_grad_format("fp8"), std::invalid_argument);
}

// Random gradients of many magnitudes: the rounded value is within half an ulp of x, the ulp
// being 2^(e-7) for bf16 and 2^(e-10) for normal fp16 where 2^e <= |x| < 2^(e+1).
TEST(GradFormat, RoundingErrorWithinHalfAnUlp) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exp(-12, 12);
  for (int i = 0; i < 200000; ++i) {
    const float x = std::ldexp(mant(rng), exp(rng));
    if (x == 0.0f) continue;
    const int e = std::ilogb(x);
    EXPECT_LE(std::fabs(bf16_to_float(float_to_bf16(x)) - x), std::ldexp(1.0f, e - 8)) << x;
    if (std::fabs(x) >= std::ldexp(1.0f, -14)) {
      EXPECT_LE(std::fabs(fp16_to_float(float_to_fp16(x)) - x), std::ldexp(1.0f, e - 11)) << x;
    }
  }
  // Negative control: truncation instead of rounding is off by up to a whole ulp and fails.
  const float x = 1.0f + 0.99f * std::ldexp(1.0f, -7);
  const float truncated = bf16_to_float(static_cast<uint16_t>(float_bits(x) >> 16));
  EXPECT_GT(std::fabs(truncated - x), std::ldexp(1.0f, -8));  // half an ulp at [1, 2)
  EXPECT_LE(std::fabs(bf16_to_float(float_to_bf16(x)) - x), std::ldexp(1.0f, -8));
}

}  // namespace
}  // namespace dpscale
