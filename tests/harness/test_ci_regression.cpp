// test_ci_regression.cpp — the CI regression step: run configs/ci.json for real (mpirun, the
// trainers, link emulation; 6 rounds at nice -20) and judge it with the regression gate against
// the committed baseline .ci/baseline/ci-cpu.jsonl at a 15% minimum effect
// (docs/regression-gate.md: the gate, and how often it errs on this machine). Undecided points
// get more rounds (--rerun, up to 10); a regression in this sweep and in a second one fails the
// test, an undecided verdict skips it with the gate's reason (CI's skip report prints it), and
// the table is printed, so a CI log shows which point moved. Each sweep it judged is copied into
// $DPSCALE_CI_SWEEP_DIR when that is set: .ci/run adds them to the history CI keeps.
//
// And, without a sweep, that the gate catches what it is there for: the committed baseline with
// one mode's records rewritten to naive's numbers (that mode lost all its overlap), or every
// data-parallel run 20% slower, must fail it, naming those points, and the baseline itself must
// not. The gate is one function (ci_gate) and the degradations one table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "harness_util.h"

namespace dpscale {
namespace {

const std::string kBaseline = test::kSource + "/.ci/baseline/ci-cpu.jsonl";
const std::string kConfig = test::kSource + "/configs/ci.json";

// ci.json runs at nice -20, which needs root; anyone else runs it at their own priority.
std::vector<std::string> nice_args() {
  if (::geteuid() == 0) return {};
  return {"--nice", "0"};
}

ProcessResult sweep_into(const std::string& out) {
  std::vector<std::string> a = {"sweep", kConfig, "--out", out};
  for (const std::string& x : nice_args()) a.push_back(x);
  return test::dpscale(a, 500);
}
// Where CI keeps each sweep this test judged, for its history (.ci/run adds them to it;
// docs/harness.md): the directory named by DPSCALE_CI_SWEEP_DIR, if set.
void keep_for_history(const std::string& sweep, int n) {
  const char* dir = std::getenv("DPSCALE_CI_SWEEP_DIR");
  if (!dir || !*dir) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::filesystem::copy_file(sweep, std::filesystem::path(dir) / ("ci-" + std::to_string(n) + ".jsonl"),
                             std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) ADD_FAILURE() << "cannot keep " << sweep << " in " << dir << ": " << ec.message();
}

// CI's minimum effect, in percent. On this project's 2-core VMs a paired speedup drifts by up to
// ~11% between the hour the baseline was measured and a later idle hour (the single runs speed up,
// the data-parallel ones do not follow), so at the gate's default 3% two of ten idle comparisons
// called a regression; at 15% none of them did, while nine of ten comparisons with naive's step 10%
// longer (a sleep in rank 0's backward) still failed, the tenth undecided
// (experiments/gate/data/rejudged.jsonl, experiments/gate/README.md).
const char* const kCiMinEffect = "15";

// The CI gate on a results file against the baseline: exit 0 passes, 1 is a regression, 3
// undecided, anything else is an error of the gate.
ProcessResult ci_gate(const std::string& file, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"compare", file, kBaseline, "--min-effect", kCiMinEffect};
  a.insert(a.end(), extra.begin(), extra.end());
  return test::dpscale(a, 500);
}

// A regression must show twice: a verdict of `regression` sends a second, independent sweep to
// the gate, and the test fails only when that one regresses too. A change in the code regresses
// both sweeps; a slow few minutes of a shared VM (one idle comparison in ten reached -11% to
// -15% on every mode: experiments/gate/data/comparisons.jsonl) rarely lasts through two.
TEST(HarnessCiRegression, CiSweepHoldsTheBaselineCurve) {
  test::ScratchDir dir;
  ProcessResult c;
  for (int sweep = 1; sweep <= 2; ++sweep) {
    const std::string now = dir.file("ci-" + std::to_string(sweep) + ".jsonl");
    const ProcessResult s = sweep_into(now);
    ASSERT_EQ(s.exit_code, 0) << s.err;
    // --rerun with ci.json: the sweep's own --nice is the config's, so the reruns match it when root.
    c = ci_gate(now, {"--rerun", kConfig, "--max-repeats", "10"});
    keep_for_history(now, sweep);
    std::cout << "# sweep " << sweep << ":\n" << c.out << c.err;
    if (c.exit_code == 2 && c.err.find("was measured on another machine") != std::string::npos) {
      GTEST_SKIP() << "the committed baseline is another machine's; measure one here: " << c.err;
    }
    ASSERT_TRUE(c.exit_code == 0 || c.exit_code == 1 || c.exit_code == 3) << c.err;
    if (c.exit_code != 1) break;
    if (sweep == 1) std::cout << "# the gate called a regression; confirming with a second sweep\n";
  }
  EXPECT_NE(c.exit_code, 1) << "the gate found a regression in two sweeps in a row\n" << c.out;
  if (c.exit_code == 3) {
    std::string why;
    for (const std::string& l : test::lines_of(c.out)) {
      if (l.find("undecided:") != std::string::npos) why += (why.empty() ? "" : " || ") + l;
    }
    GTEST_SKIP() << "the gate could not decide on this machine now: " << why;
  }
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

// The baseline's lines with every ok data-parallel record made `factor` times slower: epoch
// times and compute longer, throughput lower (single untouched).
std::string slow_every_dp_run(const std::string& baseline_text, double factor, int* rewritten) {
  std::string out;
  *rewritten = 0;
  for (const std::string& line : test::lines_of(baseline_text)) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
    if (j["status"] == "ok" && j["mode"] != "single") {
      for (auto& t : j["epoch_times_s"]) t = t.get<double>() * factor;
      j["avg_epoch_s"] = j["avg_epoch_s"].get<double>() * factor;
      j["compute_s"] = j["compute_s"].get<double>() * factor;
      j["throughput_samples_per_s"] = j["throughput_samples_per_s"].get<double>() / factor;
      ++*rewritten;
    }
    out += j.dump() + "\n";
  }
  return out;
}

// Ok records of `mode` in the baseline: how many a degradation of that mode must rewrite.
int ok_records(const std::string& text, const std::string& mode) {
  int n = 0;
  for (const std::string& line : test::lines_of(text)) {
    const auto j = nlohmann::json::parse(line);
    n += j["status"] == "ok" && (mode == "dp" ? j["mode"] != "single" : j["mode"] == mode);
  }
  return n;
}

struct Degradation {
  std::string name;
  std::function<std::string(const std::string& baseline_text, int* rewritten)> apply;
  std::string touches;              // the records it must rewrite: a mode, "dp" (all three) or ""
  std::set<int> expected_exit;      // the gate's exit: 1 when it must find the regression
  std::set<std::string> regressed;  // the modes whose points the gate must name; others are not regressions
};

std::vector<Degradation> degradations() {
  auto lose = [](const std::string& mode) {
    return [mode](const std::string& text, int* n) { return lose_all_overlap(text, mode, n); };
  };
  return {
      // Against itself the gate may say `undecided` as well as `same`: a copy has the baseline's
      // spread, and whether it rules out a 15% loss depends on that spread (docs/regression-gate.md).
      {"the baseline itself", [](const std::string& text, int* n) { *n = 0; return text; }, "", {0, 3}, {}},
      {"interleaved loses all overlap", lose("interleaved"), "interleaved", {1}, {"interleaved"}},
      {"bucketed loses all overlap", lose("bucketed"), "bucketed", {1}, {"bucketed"}},
      {"every data-parallel run 20% slower", [](const std::string& text, int* n) { return slow_every_dp_run(text, 1.2, n); },
       "dp", {1}, {"naive", "interleaved", "bucketed"}},
  };
}

TEST(HarnessCiRegression, TheGateCatchesAModeThatLosesItsOverlap) {
  const std::string text = test::read_file(kBaseline);
  ASSERT_FALSE(text.empty()) << kBaseline;
  test::ScratchDir dir;
  for (const Degradation& d : degradations()) {
    SCOPED_TRACE(d.name);
    int rewritten = 0;
    const std::string now = d.apply(text, &rewritten);
    ASSERT_EQ(rewritten, d.touches.empty() ? 0 : ok_records(text, d.touches));
    ASSERT_GT(d.touches.empty() ? 1 : rewritten, 0);
    test::write_file(dir.file("now.jsonl"), now);
    const ProcessResult r = ci_gate(dir.file("now.jsonl"), {"--format", "json"});
    ASSERT_TRUE(d.expected_exit.count(r.exit_code)) << "exit " << r.exit_code << "\n" << r.out << r.err;
    const auto out = nlohmann::json::parse(r.out);
    ASSERT_EQ(out["points"].size(), 3u) << r.out;
    for (const auto& p : out["points"]) {
      const std::string mode = p["key"]["mode"];
      std::printf("# %s: %s %s, effect %+.1f%% [%+.1f%%, %+.1f%%], p %.2g\n", d.name.c_str(), mode.c_str(),
                  p["verdict"].get<std::string>().c_str(), p["effect_pct"].get<double>(), p["ci_pct"][0].get<double>(),
                  p["ci_pct"][1].get<double>(), p["p_holm"].get<double>());
      if (d.regressed.count(mode)) {
        EXPECT_EQ(p["verdict"], "regression") << p.dump();
      } else {
        EXPECT_NE(p["verdict"], "regression") << p.dump();
        EXPECT_NEAR(p["effect_pct"].get<double>(), 0.0, 1e-9) << "an untouched point's samples are the baseline's";
      }
    }
  }
}

}  // namespace
}  // namespace dpscale
