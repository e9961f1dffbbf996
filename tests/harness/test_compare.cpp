// test_compare.cpp — `dpscale compare`: an equal file passes, a fallen speedup or risen comm
// fraction beyond the tolerance fails (exit 1), failed/missing/extra points are reported, and a
// deliberately degraded copy of the committed CI baseline is caught.
#include <gtest/gtest.h>

#include "harness/report/compare.h"
#include "harness/results/results_file.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using test::make_record;
using test::pt;
using test::sweep_line;

// single 1.0 s; naive K=2 0.8 s (comm 0.32: 40%); bucketed K=2 cap 4 0.6 s (exposed 0.1).
std::string base_file(double naive_epoch = 0.8, double naive_comm = 0.32, double bucketed_epoch = 0.6,
                      double single_epoch = 1.0) {
  const SweepRun s = pt("small", "single", 1), n = pt("small", "naive", 2, {}, "pcie4"),
                   b = pt("small", "bucketed", 2, 4.0, "pcie4");
  return sweep_line(s, make_record(s, single_epoch)) + sweep_line(n, make_record(n, naive_epoch, naive_comm)) +
         sweep_line(b, make_record(b, bucketed_epoch, 0.1));
}

Comparison run(const std::string& now, const std::string& base, CompareOptions o, Analysis& an, Analysis& ab) {
  an = analyse(parse_results(now, "new.jsonl"));
  ab = analyse(parse_results(base, "base.jsonl"));
  return compare(an, ab, o);
}

TEST(HarnessCompare, AnEqualFilePasses) {
  Analysis an, ab;
  const Comparison c = run(base_file(), base_file(), {}, an, ab);
  EXPECT_FALSE(c.failed());
  EXPECT_EQ(c.compared, 3);
  for (const ComparedPoint& p : c.points) EXPECT_EQ(p.verdict, Verdict::pass) << p.point.describe();
}

TEST(HarnessCompare, AFallOfSpeedupBeyondTheToleranceIsARegression) {
  Analysis an, ab;
  // naive 0.8 s -> 0.95 s: speedup 1.25 -> 1.053, -15.8%: beyond 10%, within 20%.
  Comparison c = run(base_file(0.95), base_file(), {0.10, false}, an, ab);
  EXPECT_TRUE(c.failed());
  ASSERT_STREQ(c.points[1].point.mode.name(), "naive");
  EXPECT_EQ(c.points[1].verdict, Verdict::regression);
  ASSERT_GE(c.points[1].why.size(), 2u);
  EXPECT_EQ(c.points[1].why[0], "speedup -15.8%");
  EXPECT_EQ(c.points[1].why[1], "efficiency -15.8%");
  EXPECT_EQ(c.points[2].verdict, Verdict::pass);
  c = run(base_file(0.95), base_file(), {0.20, false}, an, ab);
  EXPECT_FALSE(c.failed()) << "-15.8% is inside a 20% tolerance";
  // Faster, at the same comm fraction, is no regression.
  c = run(base_file(0.5, 0.2), base_file(), {0.10, false}, an, ab);
  EXPECT_FALSE(c.failed());
}

TEST(HarnessCompare, ARiseOfCommFractionBeyondTheToleranceIsARegression) {
  Analysis an, ab;
  // Same epoch, comm 0.32 -> 0.44 of 0.8 s: 40% -> 55%, +15 points.
  Comparison c = run(base_file(0.8, 0.44), base_file(), {0.10, false}, an, ab);
  ASSERT_EQ(c.points[1].verdict, Verdict::regression);
  ASSERT_EQ(c.points[1].why.size(), 1u);
  EXPECT_EQ(c.points[1].why[0], "comm fraction 40% -> 55%");
  c = run(base_file(0.8, 0.36), base_file(), {0.10, false}, an, ab);  // +5 points
  EXPECT_FALSE(c.failed());
}

TEST(HarnessCompare, ThroughputCountsOnlyWithAbsolute) {
  Analysis an, ab;
  // Everything 30% slower, so every speedup is unchanged: another machine, not a regression...
  Comparison c = run(base_file(0.8 * 1.3, 0.32 * 1.3, 0.6 * 1.3, 1.3), base_file(), {0.10, false}, an, ab);
  EXPECT_FALSE(c.failed());
  // ...unless throughput is to be compared too.
  c = run(base_file(0.8 * 1.3, 0.32 * 1.3, 0.6 * 1.3, 1.3), base_file(), {0.10, true}, an, ab);
  EXPECT_TRUE(c.failed());
  EXPECT_EQ(c.points[0].verdict, Verdict::regression);
  EXPECT_EQ(c.points[0].why[0], "throughput -23.1%");
}

TEST(HarnessCompare, FailedMissingAndExtraPointsAreReported) {
  Analysis an, ab;
  const SweepRun s = pt("small", "single", 1), n = pt("small", "naive", 2, {}, "pcie4"),
                   i = pt("small", "interleaved", 2, {}, "pcie4");
  const std::string now = sweep_line(s, make_record(s, 1.0)) + sweep_line(n, {}, "exit status 1: boom") +
                          sweep_line(i, make_record(i, 0.7, 0.1));
  const Comparison c = run(now, base_file(), {}, an, ab);
  ASSERT_EQ(c.points.size(), 4u);
  EXPECT_EQ(c.points[0].verdict, Verdict::pass);
  EXPECT_EQ(c.points[1].verdict, Verdict::failed);
  EXPECT_EQ(c.points[2].verdict, Verdict::missing);
  EXPECT_EQ(c.points[3].verdict, Verdict::extra);
  EXPECT_STREQ(c.points[3].point.mode.name(), "interleaved");
  EXPECT_TRUE(c.failed()) << "a point that ran in the baseline and fails now is a regression";
  const std::string table = render_comparison(c, {}, "new.jsonl", "base.jsonl");
  EXPECT_NE(table.find("# 1 compared, 0 regressed, 1 failed, 0 incomparable, 1 missing, 1 extra: FAIL"), std::string::npos)
      << table;

  // Only missing and extra: reported, not a failure.
  const Comparison d = run(sweep_line(s, make_record(s, 1.0)), sweep_line(s, make_record(s, 1.0)) +
                                                                   sweep_line(n, make_record(n, 0.8, 0.32)),
                           {}, an, ab);
  EXPECT_FALSE(d.failed());
  // Nothing in common: nothing was checked, so it cannot pass.
  const Comparison e = run(sweep_line(i, make_record(i, 1.0, 0.1)), base_file(), {}, an, ab);
  EXPECT_EQ(e.compared, 0);
  EXPECT_TRUE(e.failed());
}

TEST(HarnessCompare, LinkIsPartOfThePoint) {
  Analysis an, ab;
  std::string other = base_file();
  for (size_t at; (at = other.find("pcie4")) != std::string::npos;) other.replace(at, 5, "nvlink");
  const Comparison c = run(other, base_file(), {}, an, ab);
  EXPECT_EQ(c.compared, 1);  // only the single runs match
  EXPECT_EQ(c.points[1].verdict, Verdict::missing);
}

TEST(HarnessCompare, TheCommandExits1OnRegressionAnd0OnEqual) {
  test::ScratchDir dir;
  test::write_file(dir.file("base.jsonl"), base_file());
  test::write_file(dir.file("same.jsonl"), base_file());
  test::write_file(dir.file("worse.jsonl"), base_file(1.2));
  ProcessResult r = test::dpscale({"compare", dir.file("same.jsonl"), dir.file("base.jsonl")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("3 compared, 0 regressed"), std::string::npos) << r.out;
  r = test::dpscale({"compare", dir.file("worse.jsonl"), dir.file("base.jsonl"), "--tolerance", "0.25"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("| small | Naive DP     |   2 | —      | pcie4 | 1.25× → 0.83×"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("REGRESSION: speedup -33.3%; efficiency -33.3%"), std::string::npos) << r.out;
  r = test::dpscale({"compare", dir.file("worse.jsonl"), dir.file("base.jsonl"), "--tolerance", "1.5"});
  EXPECT_EQ(r.exit_code, 2) << "a tolerance outside [0, 1] is bad input";
}

// The committed CI baseline, degraded the way a broken overlap would degrade it: every
// data-parallel run's epoch 40% longer, the extra time all exposed comm. Compare must catch it
// at the tolerance the CI step uses, and pass the baseline against itself.
TEST(HarnessCompare, ADegradedBaselineRecordIsCaught) {
  const std::string path = test::kSource + "/.ci/baseline/ci-cpu.jsonl";
  const ResultsFile base = read_results(path);
  ASSERT_GE(base.entries.size(), 4u);
  std::string degraded;
  int touched = 0;
  for (const std::string& line : test::lines_of(test::read_file(path))) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
    if (j["status"] == "ok" && j["mode"] != "single") {
      const double extra = 0.4 * j["avg_epoch_s"].get<double>();
      j["avg_epoch_s"] = j["avg_epoch_s"].get<double>() + extra;
      for (auto& e : j["epoch_times_s"]) e = e.get<double>() + extra;
      j["throughput_samples_per_s"] = j["throughput_samples_per_s"].get<double>() / 1.4;
      const char* comm = j["mode"] == "naive" ? "comm_s" : "exposed_comm_s";
      j[comm] = j[comm].get<double>() + extra;
      ++touched;
    }
    degraded += j.dump() + "\n";
  }
  ASSERT_GE(touched, 3);
  test::ScratchDir dir;
  test::write_file(dir.file("degraded.jsonl"), degraded);
  const std::string tol = DPSCALE_CI_TOLERANCE;
  ProcessResult r = test::dpscale({"compare", dir.file("degraded.jsonl"), path, "--tolerance", tol});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("REGRESSION: speedup -28.6%"), std::string::npos) << r.out;
  r = test::dpscale({"compare", path, path, "--tolerance", tol});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace dpscale
