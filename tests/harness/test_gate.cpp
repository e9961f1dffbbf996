// test_gate.cpp — `dpscale compare` as a regression gate, through the real binary and its
// Python statistics, on hand-made results files whose paired speedups carry a known shift:
// a 5% loss is `regression` (exit 1), no shift is `same` (exit 0), a new file the machine
// disturbed is `undecided` (exit 3) however large its loss — judged by what its ranks lost (their
// run delay) where the records carry it, so a busy neighbour they did not wait for is judged —, a
// baseline from another machine is
// refused (exit 2), a directory of baselines is pooled (other machines left out, said so), files
// with no samples fall back to the crude mode with a line saying so, and empty or torn files are
// one line and exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/report/gate.h"
#include "harness/results/machine_state.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using test::make_record;
using test::pt;

// Run-to-run noise of a quiet machine, about ±1.5%: fixed, so every run of the test sees the
// same files. Index by round; each run of a round gets its own factor.
const double kNoise[] = {1.000, 1.012, 0.989, 1.007, 0.995, 1.015, 0.986, 1.004, 0.998, 1.010, 0.992, 1.003};
double noise(int i) { return kNoise[i % 12]; }

struct Machine {
  std::string cpu = "AMD EPYC 7B13";
  int cpus = 2;
  double others_cpus = 0.02;  // a busy neighbour makes this ~1
  double probe = 40.0;
  std::optional<double> run_delay_share;  // the records' (nullopt: records older than the field)
};

std::string line(const SweepRun& p, const RunRecord& rec, const Machine& m) {
  RunRecord r = rec;
  r.run_delay_share = m.run_delay_share;
  RunInfo info;
  info.config = "gate";
  info.run_id = p.run_id("gate");
  info.argv = test::argv_of(p);
  info.host = "testhost";
  MachineState s;
  s.others_cpus = m.others_cpus;
  s.probe_before_gflops = s.probe_after_gflops = m.probe;
  s.load1_before = s.load1_after = 1.0 + m.others_cpus;
  nlohmann::ordered_json system = {{"host", "testhost"}, {"cpu_model", m.cpu}, {"cpu_count", m.cpus},
                                   {"gpu_model", nullptr}, {"state", to_json(s)}};
  return make_sweep_line(p.point, p.repeat, info, system, r, "").dump() + "\n";
}

// `rounds` rounds of single (1.0 s/epoch), naive K=2 (0.8 s) and bucketed K=2 cap 4 (0.6 s),
// each run with its own noise; `shift` slows every data-parallel run by that fraction (speedup
// falls by shift/(1+shift)). `seed` picks where in the noise table the file starts.
std::string results(int rounds, double shift, int seed, const Machine& m = {}) {
  std::string out;
  for (int r = 0; r < rounds; ++r) {
    const SweepRun s = pt("small", "single", 1, {}, "none", r), n = pt("small", "naive", 2, {}, "pcie4", r),
                     b = pt("small", "bucketed", 2, 4.0, "pcie4", r);
    const int i = 3 * (seed + r);
    out += line(s, make_record(s, 1.0 * noise(i)), m);
    out += line(n, make_record(n, 0.8 * noise(i + 1) * (1 + shift), 0.3), m);
    out += line(b, make_record(b, 0.6 * noise(i + 2) * (1 + shift), 0.1), m);
  }
  return out;
}

struct Files {
  test::ScratchDir dir;
  std::string now, base;
  Files(const std::string& now_text, const std::string& base_text) : now(dir.file("new.jsonl")), base(dir.file("base.jsonl")) {
    test::write_file(now, now_text);
    test::write_file(base, base_text);
  }
};

ProcessResult gate(const std::vector<std::string>& args) { return test::dpscale(args, 120); }

std::string verdict_of(const nlohmann::json& out, const std::string& mode) {
  for (const auto& p : out["points"]) {
    if (p["key"]["mode"] == mode) return p["verdict"];
  }
  return "(no point)";
}

TEST(HarnessGate, AFivePercentLossIsARegression) {
  // 8.1% slower DP runs: speedup -7.5%; and 5.3% slower: speedup -5.0%, the loss the gate exists for.
  for (const double shift : {0.081, 0.0526}) {
    Files f(results(6, shift, 20), results(10, 0.0, 0));
    const ProcessResult r = gate({"compare", f.now, f.base, "--format", "json"});
    ASSERT_EQ(r.exit_code, 1) << shift << "\n" << r.out << r.err;
    const auto out = nlohmann::json::parse(r.out);
    EXPECT_EQ(verdict_of(out, "naive"), "regression") << r.out;
    EXPECT_EQ(verdict_of(out, "bucketed"), "regression") << r.out;
    for (const auto& p : out["points"]) {
      const double want = -100.0 * shift / (1 + shift);
      EXPECT_NEAR(p["effect_pct"].get<double>(), want, 1.5) << p.dump();
      EXPECT_LT(p["ci_pct"][0].get<double>(), p["effect_pct"].get<double>());
      EXPECT_GT(p["ci_pct"][1].get<double>(), p["effect_pct"].get<double>());
      EXPECT_LT(p["p_holm"].get<double>(), 0.05);
    }
    EXPECT_EQ(out["exit"], 1);
  }
}

// The constants are gate.h's, and gate.py judges with the ones the document carries: the
// document names them, and the verdicts' JSON repeats what gate.py read.
TEST(HarnessGate, TheDocumentCarriesTheConstantsOfGateH) {
  Files f(results(6, 0.0, 20), results(10, 0.0, 0));
  const nlohmann::json doc = gate_document(load_gate_files(f.now, f.base, ""), GateOptions{});
  EXPECT_EQ(doc["min_samples"], kGateMinSamples);
  EXPECT_EQ(doc["alpha"], kGateAlpha);
  EXPECT_EQ(doc["min_effect"], kGateMinEffect);
  const ProcessResult r = gate({"compare", f.now, f.base, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["alpha"], kGateAlpha);
  EXPECT_EQ(out["min_effect"], kGateMinEffect);
  const ProcessResult other = gate({"compare", f.now, f.base, "--format", "json", "--min-effect", "7", "--alpha", "0.1"});
  ASSERT_EQ(other.exit_code, 0) << other.out << other.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(other.out)["min_effect"].get<double>(), 0.07);
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(other.out)["alpha"].get<double>(), 0.1);
}

TEST(HarnessGate, NoShiftIsSame) {
  Files f(results(6, 0.0, 20), results(10, 0.0, 0));
  const ProcessResult r = gate({"compare", f.now, f.base});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("| small naive K=2 pcie4 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 same, 0 improvement, 0 regression, 0 undecided"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": PASS"), std::string::npos);
  EXPECT_NE(r.out.find("# curve small naive pcie4: same over 1 point(s); worst small naive K=2 pcie4:"), std::string::npos)
      << r.out;
}

// A machine slowing steadily, 3% per round (a round: single, then naive): each naive run sits
// half a round after its single, so pairing with that single alone reads every speedup 1.5%
// low. The geometric mean of the singles before and after it cancels the drift.
TEST(HarnessGate, ASteadyDriftOfTheMachineCancels) {
  std::string drifting, steady;
  for (int r = 0; r < 8; ++r) {
    const SweepRun s = pt("small", "single", 1, {}, "none", r), n = pt("small", "naive", 2, {}, "pcie4", r);
    const double now = 1.0 + 0.03 * r, mid = 1.0 + 0.03 * (r + 0.5);
    drifting += line(s, make_record(s, 1.0 * now), {}) + line(n, make_record(n, 0.8 * mid, 0.3), {});
    steady += line(s, make_record(s, 1.0), {}) + line(n, make_record(n, 0.8, 0.3), {});
  }
  Files f(drifting, steady);
  const ProcessResult r = gate({"compare", f.now, f.base, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto out = nlohmann::json::parse(r.out);
  ASSERT_EQ(out["points"].size(), 1u);
  EXPECT_EQ(out["points"][0]["verdict"], "same");
  // Paired with the round's single alone: speedup x 1/(1 + 0.015/(1 + 0.03r)), about -1.2%.
  EXPECT_NEAR(out["points"][0]["effect_pct"].get<double>(), 0.0, 0.2) << r.out;
}

TEST(HarnessGate, AFasterCurveIsAnImprovementNotAFailure) {
  Files f(results(6, -0.10, 20), results(10, 0.0, 0));
  const ProcessResult r = gate({"compare", f.now, f.base, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(verdict_of(out, "naive"), "improvement");
}

TEST(HarnessGate, ADisturbedFileIsUndecidedNotARegression) {
  Machine busy;
  busy.others_cpus = 0.98;  // a busy loop beside every run
  busy.probe = 26.0;        // and the probe 35% below the baseline's 40
  Files f(results(6, 0.25, 20, busy), results(10, 0.0, 0));
  const ProcessResult r = gate({"compare", f.now, f.base});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(r.out.find("| regression"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("undecided: 0 undisturbed sample(s) in new, 3 needed; machine busy: round 1: probe -35%, others 0.98 CPU, load 2.0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(": UNDECIDED"), std::string::npos);
}

// Beside the same busy neighbour, records whose ranks lost 2% of the epochs to run delay are fit
// to judge: the 25% loss is a regression. Where they lost 40%, the runs are disturbed, named by
// their run delay.
TEST(HarnessGate, ABusyNeighbourIsJudgedByWhatTheRanksLost) {
  Machine busy;
  busy.others_cpus = 0.98;
  busy.probe = 26.0;
  busy.run_delay_share = 0.02;
  Machine idle;
  idle.run_delay_share = 0.01;
  {
    Files f(results(6, 0.25, 20, busy), results(10, 0.0, 0, idle));
    const ProcessResult r = gate({"compare", f.now, f.base, "--format", "json"});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    const auto out = nlohmann::json::parse(r.out);
    EXPECT_EQ(verdict_of(out, "naive"), "regression") << r.out;
  }
  busy.run_delay_share = 0.40;
  {
    Files f(results(6, 0.25, 20, busy), results(10, 0.0, 0, idle));
    const ProcessResult r = gate({"compare", f.now, f.base});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.out.find("machine busy: round 1: run delay 40% of the epochs (others 0.98 CPU, load 2.0)"),
              std::string::npos)
        << r.out;
  }
}

TEST(HarnessGate, ABaselineFromAnotherMachineIsRefused) {
  Machine other;
  other.cpu = "Intel Xeon Platinum 8480C";
  other.cpus = 16;
  Files f(results(6, 0.0, 20), results(10, 0.0, 0, other));
  const ProcessResult r = gate({"compare", f.now, f.base});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("was measured on another machine (Intel Xeon Platinum 8480C x16 CPUs, no GPU;"), std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(HarnessGate, ABaselineDirectoryIsPooledAndOtherMachinesAreLeftOut) {
  test::ScratchDir dir;
  const std::string base_dir = dir.file("baselines");
  std::filesystem::create_directories(base_dir);
  Machine other;
  other.cpu = "Intel Xeon Platinum 8480C";
  test::write_file(base_dir + "/a.jsonl", results(4, 0.0, 0));
  test::write_file(base_dir + "/b.jsonl", results(4, 0.0, 7));
  test::write_file(base_dir + "/c.jsonl", results(4, 0.20, 3, other));  // would fail it, were it used
  test::write_file(dir.file("new.jsonl"), results(6, 0.0, 20));
  ProcessResult r = gate({"compare", dir.file("new.jsonl"), "--baseline", base_dir, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["base"].size(), 2u);
  for (const auto& p : out["points"]) EXPECT_EQ(p["n_base"], 8) << "4 rounds from each of two files";
  ASSERT_FALSE(out["notes"].empty());
  EXPECT_NE(out["notes"][0].get<std::string>().find("left out: " + base_dir + "/c.jsonl was measured on another machine"),
            std::string::npos)
      << out["notes"];
  // Only other machines' files there: refused, naming the first.
  std::filesystem::remove(base_dir + "/a.jsonl");
  std::filesystem::remove(base_dir + "/b.jsonl");
  r = gate({"compare", dir.file("new.jsonl"), "--baseline", base_dir});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no baseline from this machine"), std::string::npos) << r.err;
}

TEST(HarnessGate, FilesWithNoSamplesAreComparedInTheCrudeModeSayingSo) {
  // One round each (older or single-repeat sweeps): medians against the crude tolerance.
  Files same(results(1, 0.0, 0), results(1, 0.0, 0));
  ProcessResult r = gate({"compare", same.now, same.base});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("# no point has 3 paired rounds on both sides (an older or single-repeat file): compared in "
                        "the crude mode (--tolerance 0.1)\n", 0),
            0u)
      << r.out;
  Files worse(results(1, 0.30, 0), results(1, 0.0, 0));
  r = gate({"compare", worse.now, worse.base});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("REGRESSION: speedup -23.1%"), std::string::npos) << r.out;
}

TEST(HarnessGate, AnEmptyOrTornFileIsOneLineAndExit2) {
  test::ScratchDir dir;
  const std::string base = dir.file("base.jsonl");
  test::write_file(base, results(6, 0.0, 0));
  test::write_file(dir.file("empty.jsonl"), "");
  const std::string whole = results(1, 0.0, 0);
  test::write_file(dir.file("torn.jsonl"), whole.substr(0, whole.find('\n') / 2));
  for (const std::string name : {"empty.jsonl", "torn.jsonl"}) {
    const ProcessResult r = gate({"compare", dir.file(name), base});
    EXPECT_EQ(r.exit_code, 2) << name << "\n" << r.out << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    const auto err = test::lines_of(r.err);
    ASSERT_FALSE(err.empty());
    EXPECT_NE(err.back().find(name + ": no runs in the file"), std::string::npos) << r.err;
    // A torn line also warns that it was skipped: a warning, then the one error line.
    EXPECT_LE(err.size(), 2u) << r.err;
  }
}

TEST(HarnessGate, RefusesBadOptions) {
  Files f(results(3, 0.0, 0), results(3, 0.0, 0));
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--alpha", "0"}, {"--alpha", "nan"}, {"--min-effect", "-1"}, {"--format", "xml"},
        {"--baseline", f.dir.file("nowhere")}}) {
    std::vector<std::string> args = {"compare", f.now, f.base};
    args.insert(args.end(), bad.begin(), bad.end());
    const ProcessResult r = gate(args);
    EXPECT_EQ(r.exit_code, 2) << bad[0] << " " << bad[1] << ": " << r.err;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  }
}

}  // namespace
}  // namespace dpscale
