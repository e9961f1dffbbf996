// test_ci_regression.cpp — the CI regression step: run configs/ci.json for real (mpirun, the
// trainers, link emulation) and compare it against the committed baseline
// results/baselines/ci-cpu.jsonl at DPSCALE_CI_TOLERANCE (tests/harness/CMakeLists.txt says how
// that number was chosen). The table is printed, so a CI log shows which point moved.
#include <gtest/gtest.h>

#include <iostream>

#include "harness_util.h"

namespace dpscale {
namespace {

TEST(HarnessCiRegression, CiSweepHoldsTheBaselineCurve) {
  test::ScratchDir dir;
  const std::string out = dir.file("ci.jsonl");
  const ProcessResult sweep = test::dpscale({"sweep", test::kSource + "/configs/ci.json", "--out", out}, 400);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const ProcessResult cmp = test::dpscale(
      {"compare", out, test::kSource + "/results/baselines/ci-cpu.jsonl", "--tolerance", DPSCALE_CI_TOLERANCE});
  std::cout << cmp.out;
  EXPECT_EQ(cmp.exit_code, 0) << cmp.out << cmp.err;
}

}  // namespace
}  // namespace dpscale
