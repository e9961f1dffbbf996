// test_ci_regression.cpp — the CI regression step: run configs/ci.json for real (mpirun, the
// trainers, link emulation; 3 repeats per point) and compare it against the committed baseline
// results/baselines/ci-cpu.jsonl at DPSCALE_CI_TOLERANCE (configs/README.md, "CI tolerance",
// gives the measurements behind it). The table is printed, so a CI log shows which point moved.
//
// A shared machine has bursts that can slow one run by 2x. So a failing comparison is confirmed
// before it counts: the sweep runs once more, and the medians over both samples (6 repeats, the
// second's renumbered after the first's) must hold the curve. A real regression shows in both samples and still fails.
//
// And, without a sweep, that the gate catches what it is there for: the committed baseline with
// one mode's records rewritten to naive's numbers (that mode lost all its overlap) must fail it,
// naming that mode's point, and the baseline itself must pass it. The gate is one function
// (ci_gate) and the degradations one table, so another gate can be put in its place.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "harness/analysis.h"
#include "harness/report.h"
#include "harness/results_file.h"
#include "harness_util.h"

namespace dpscale {
namespace {

const std::string kBaseline = test::kSource + "/results/baselines/ci-cpu.jsonl";

ProcessResult sweep_into(const std::string& out) {
  return test::dpscale({"sweep", test::kSource + "/configs/ci.json", "--out", out}, 500);
}
// The CI gate on a results file against the baseline: exit 0 passes, 1 is a regression,
// anything else is an error of the gate.
ProcessResult ci_gate(const std::string& file) {
  return test::dpscale({"compare", file, kBaseline, "--tolerance", DPSCALE_CI_TOLERANCE});
}

// The gate's verdict row of a mode's point: its line of the comparison table.
std::string gate_row(const std::string& out, const std::string& mode) {
  for (const std::string& l : test::lines_of(out)) {
    if (l.rfind("| ", 0) == 0 && l.find("| " + mode_label(mode) + " ") != std::string::npos) return l;
  }
  return "";
}

// A second sample of the same config as further repeats of the first: every line's repeat (and
// the "-rN" its run id ends with) moved up by `offset`. As they come from the sweep, the second
// sample's lines carry the first's run ids, and a results reader keeps only the first line of a
// run id, so the two samples would not pool: compare would see the first sample alone again.
std::string as_more_repeats(const std::string& text, int offset) {
  std::string out;
  for (const std::string& line : test::lines_of(text)) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
    const int repeat = j["point"]["repeat"].get<int>();
    j["point"]["repeat"] = repeat + offset;
    std::string id = j["run"]["run_id"].get<std::string>();
    const std::string tail = "-r" + std::to_string(repeat);
    if (id.size() >= tail.size() && id.compare(id.size() - tail.size(), tail.size(), tail) == 0) {
      id.replace(id.size() - tail.size(), tail.size(), "-r" + std::to_string(repeat + offset));
    }
    j["run"]["run_id"] = id;
    out += j.dump() + "\n";
  }
  return out;
}

// ci.json's repeats: the offset that makes a second sample's repeats follow the first's.
constexpr int kCiRepeats = 3;

TEST(HarnessCiRegression, CiSweepHoldsTheBaselineCurve) {
  test::ScratchDir dir;
  const std::string first = dir.file("ci-1.jsonl");
  ProcessResult s = sweep_into(first);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  ProcessResult c = ci_gate(first);
  std::cout << c.out;
  if (c.exit_code == 0) return;
  ASSERT_EQ(c.exit_code, 1) << c.err;

  std::cout << "# the first sample regressed; confirming with a second one\n";
  const std::string second = dir.file("ci-2.jsonl"), both = dir.file("ci-both.jsonl");
  s = sweep_into(second);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  test::write_file(both, test::read_file(first) + as_more_repeats(test::read_file(second), kCiRepeats));
  c = ci_gate(both);
  std::cout << c.out;
  EXPECT_EQ(c.err.find("duplicate skipped"), std::string::npos) << "the samples did not pool\n" << c.err;
  EXPECT_EQ(c.exit_code, 0) << "the regression held over two samples\n" << c.out << c.err;
}

// The baseline's lines, with every ok record of `mode` given the timing of naive's record of the
// same repeat: epoch, throughput, compute, and naive's comm_s as the mode's exposed wait. That is
// the mode with no overlap left: every all-reduce waited for after backward, as naive does.
std::string lose_all_overlap(const std::string& baseline_text, const std::string& mode, int* rewritten) {
  std::map<int, nlohmann::ordered_json> naive;
  std::vector<nlohmann::ordered_json> lines;
  for (const std::string& line : test::lines_of(baseline_text)) {
    lines.push_back(nlohmann::ordered_json::parse(line));
    const auto& j = lines.back();
    if (j["status"] == "ok" && j["mode"] == "naive") naive[j["point"]["repeat"].get<int>()] = j;
  }
  std::string out;
  *rewritten = 0;
  for (auto& j : lines) {
    if (j["status"] == "ok" && j["mode"] == mode) {
      const auto n = naive.find(j["point"]["repeat"].get<int>());
      if (n != naive.end()) {
        for (const char* f : {"epoch_times_s", "avg_epoch_s", "throughput_samples_per_s", "compute_s", "comm_busy_s",
                              "per_rank_epoch_s"}) {
          j[f] = n->second[f];
        }
        j["exposed_comm_s"] = n->second["comm_s"];
        ++*rewritten;
      }
    }
    out += j.dump() + "\n";
  }
  return out;
}

struct Degradation {
  std::string name;
  std::function<std::string(const std::string& baseline_text, int* rewritten)> apply;
  int rewrites;                     // records the change must touch: ci.json's repeats of the mode
  int expected_exit;
  std::set<std::string> regressed;  // the modes whose points the gate must name
};

std::vector<Degradation> degradations() {
  auto lose = [](const std::string& mode) {
    return [mode](const std::string& text, int* n) { return lose_all_overlap(text, mode, n); };
  };
  return {
      {"the baseline itself", [](const std::string& text, int* n) { *n = 0; return text; }, 0, 0, {}},
      {"interleaved loses all overlap", lose("interleaved"), 3, 1, {"interleaved"}},
      {"bucketed loses all overlap", lose("bucketed"), 3, 1, {"bucketed"}},
  };
}

// How far beyond the tolerance a rewritten point sits, per criterion of `dpscale compare`: the
// speedup's relative fall and the comm fraction's rise in points, each against the tolerance
// (printed, so a CI log shows how close the gate is to missing it).
void print_margin(const std::string& name, const std::string& mode, const std::string& now_text) {
  const Analysis base = analyse(read_results(kBaseline));
  const Analysis now = analyse(parse_results(now_text, "degraded.jsonl"));
  const PointStats* b = nullptr;
  for (const PointStats& p : base.points) {
    if (p.key.mode == mode) b = &p;
  }
  if (!b) return;
  const PointStats* n = now.find(b->key);
  if (!n || !b->speedup || !n->speedup || !b->comm_fraction || !n->comm_fraction) return;
  const double tol = std::stod(DPSCALE_CI_TOLERANCE);
  const double fall = 1.0 - *n->speedup / *b->speedup, rise = *n->comm_fraction - *b->comm_fraction;
  std::printf("# %s: speedup %.3fx -> %.3fx, -%.2f%% against the -%.0f%% limit (margin %.2f points); comm fraction "
              "%.2f%% -> %.2f%%, +%.2f points against the +%.0f limit (margin %.2f points)\n",
              name.c_str(), *b->speedup, *n->speedup, 100 * fall, 100 * tol, 100 * (fall - tol), 100 * *b->comm_fraction,
              100 * *n->comm_fraction, 100 * rise, 100 * tol, 100 * (rise - tol));
}

// The confirmation step's pooling: the baseline and a copy of it as further repeats read as 6
// repeats of each point, with no line dropped as a duplicate, and pass the gate.
TEST(HarnessCiRegression, TwoSamplesPoolIntoSixRepeats) {
  const std::string text = test::read_file(kBaseline);
  const std::string pooled = text + as_more_repeats(text, kCiRepeats);
  const ResultsFile f = parse_results(pooled, "pooled.jsonl");
  EXPECT_TRUE(f.warnings.empty()) << f.warnings.front();
  const Analysis a = analyse(f);
  ASSERT_EQ(a.points.size(), 4u);
  for (const PointStats& p : a.points) EXPECT_EQ(p.runs, 2 * kCiRepeats) << p.key.describe();
  test::ScratchDir dir;
  test::write_file(dir.file("pooled.jsonl"), pooled);
  const ProcessResult r = ci_gate(dir.file("pooled.jsonl"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("duplicate skipped"), std::string::npos) << r.err;
}

TEST(HarnessCiRegression, TheGateCatchesAModeThatLosesItsOverlap) {
  const std::string text = test::read_file(kBaseline);
  ASSERT_FALSE(text.empty()) << kBaseline;
  test::ScratchDir dir;
  for (const Degradation& d : degradations()) {
    SCOPED_TRACE(d.name);
    int rewritten = 0;
    const std::string now = d.apply(text, &rewritten);
    ASSERT_EQ(rewritten, d.rewrites);
    test::write_file(dir.file("now.jsonl"), now);
    const ProcessResult r = ci_gate(dir.file("now.jsonl"));
    for (const std::string& mode : d.regressed) print_margin(d.name, mode, now);
    EXPECT_EQ(r.exit_code, d.expected_exit) << r.out << r.err;
    for (const char* mode : {"naive", "interleaved", "bucketed"}) {
      const std::string row = gate_row(r.out, mode);
      ASSERT_FALSE(row.empty()) << "no row of " << mode << "\n" << r.out;
      if (d.regressed.count(mode)) {
        EXPECT_NE(row.find("REGRESSION"), std::string::npos) << row;
      } else {
        EXPECT_NE(row.find("| ok"), std::string::npos) << row;
      }
    }
  }
}

}  // namespace
}  // namespace dpscale
