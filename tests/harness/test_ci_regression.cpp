// test_ci_regression.cpp — the CI regression step: run configs/ci.json for real (mpirun, the
// trainers, link emulation; 3 repeats per point) and compare it against the committed baseline
// results/baselines/ci-cpu.jsonl at DPSCALE_CI_TOLERANCE (configs/README.md, "CI tolerance",
// gives the measurements behind it). The table is printed, so a CI log shows which point moved.
//
// A shared machine has bursts that can slow one run by 2x. So a failing comparison is confirmed
// before it counts: the sweep runs once more, and the medians over both samples (6 repeats) must
// hold the curve. A real regression shows in both samples and still fails.
#include <gtest/gtest.h>

#include <iostream>

#include "harness_util.h"

namespace dpscale {
namespace {

const std::string kBaseline = test::kSource + "/results/baselines/ci-cpu.jsonl";

ProcessResult sweep_into(const std::string& out) {
  return test::dpscale({"sweep", test::kSource + "/configs/ci.json", "--out", out}, 500);
}
ProcessResult compare(const std::string& file) {
  return test::dpscale({"compare", file, kBaseline, "--tolerance", DPSCALE_CI_TOLERANCE});
}

TEST(HarnessCiRegression, CiSweepHoldsTheBaselineCurve) {
  test::ScratchDir dir;
  const std::string first = dir.file("ci-1.jsonl");
  ProcessResult s = sweep_into(first);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  ProcessResult c = compare(first);
  std::cout << c.out;
  if (c.exit_code == 0) return;
  ASSERT_EQ(c.exit_code, 1) << c.err;

  std::cout << "# the first sample regressed; confirming with a second one\n";
  const std::string second = dir.file("ci-2.jsonl"), both = dir.file("ci-both.jsonl");
  s = sweep_into(second);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  test::write_file(both, test::read_file(first) + test::read_file(second));
  c = compare(both);
  std::cout << c.out;
  EXPECT_EQ(c.exit_code, 0) << "the regression held over two samples\n" << c.out << c.err;
}

}  // namespace
}  // namespace dpscale
