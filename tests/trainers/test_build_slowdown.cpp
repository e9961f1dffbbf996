// test_build_slowdown.cpp — the compiled-in experimental slowdown's setting
// (trainers/diagnosis/build_slowdown.h): its two scopes, its percent, and the values a
// misconfigured build is refused with. A normal build compiles none in.
//
// Run: ctest -R BuildSlowdown   (or ./tests/trainers/test_build_slowdown)
#include <gtest/gtest.h>

#include "core/errors.h"
#include "trainers/diagnosis/build_slowdown.h"

namespace dpscale {
namespace {

TEST(BuildSlowdown, NormalBuildHasNone) { EXPECT_EQ(build_slowdown().pct, 0.0); }

TEST(BuildSlowdown, ScopesAndPercent) {
  const BuildSlowdown dp = parse_build_slowdown("dp:5");
  EXPECT_TRUE(dp.data_parallel_only);
  EXPECT_DOUBLE_EQ(dp.pct, 5.0);
  const BuildSlowdown all = parse_build_slowdown("all:7.5");
  EXPECT_FALSE(all.data_parallel_only);
  EXPECT_DOUBLE_EQ(all.pct, 7.5);
  EXPECT_EQ(parse_build_slowdown("").pct, 0.0);
}

TEST(BuildSlowdown, MalformedIsRefused) {
  for (const char* bad : {"5", "dp", "dp:", "dp:x", "dp:0", "dp:-3", "dp:101", "gpu:5", ":5"}) {
    EXPECT_THROW(parse_build_slowdown(bad), InputError) << bad;
  }
}

}  // namespace
}  // namespace dpscale
