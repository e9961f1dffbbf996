// test_sweep_state.cpp — the machine's state around each run of a sweep (system.state), with
// fake trainers: a quiet run is fit to judge and not rerun; a run beside a busy loop (one the
// run itself leaves behind, outside the processes the sweep reaps) is marked disturbed, naming
// the CPU the others used, and rerun at once, at most --disturbed-reruns times; the last attempt
// replaces it when the file is read; and --disturbed-reruns 0 keeps the disturbed run. Those
// records carry no run delay (as older ones): records that do are judged by it — a run whose
// ranks lost half its epochs is disturbed and rerun, one beside the same busy loop whose ranks
// lost 1% is not.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/results/results_file.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using test::make_record;
using test::pt;
using test::read_file;
using test::write_file;

struct StateSweep {
  test::ScratchDir dir;
  std::string bin = dir.file("bin"), config = dir.file("state.json"), out = dir.file("out.jsonl");
  std::string busy_flag = dir.file("busy-once");

  // single is quiet; naive prints its record after 1.2 s, and while the flag file exists (it
  // removes it, so only its first run) leaves a 1.25 s busy loop behind in a process of its own.
  // modes: the config's list, as JSON ("single", "naive" or both).
  explicit StateSweep(const std::string& modes = R"(["single", "naive"])",
                      std::optional<double> run_delay_share = std::nullopt) {
    std::filesystem::create_directories(bin);
    write_file(config, R"({"name": "state", "models": ["small"], "modes": )" + modes +
                           R"(, "world_sizes": [2], "link": "pcie4", "timeout_s": 30})");
    for (const std::string mode : {"single", "naive"}) {
      const SweepRun p = mode == "single" ? pt("small", mode, 1) : pt("small", mode, 2, {}, "pcie4");
      RunRecord rec = make_record(p, 0.5, 0.1);
      rec.run_delay_share = run_delay_share;
      write_file(dir.file(mode + ".json"), to_json(rec).dump());
      std::string body = "#!/bin/sh\n";
      if (mode == "naive") {
        body += "if [ -e " + busy_flag + " ]; then rm -f " + busy_flag +
                "; setsid timeout 1.25 sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 & fi\nsleep 1.2\n";
      }
      body += "printf 'RESULTS_JSON: '\ncat " + dir.file(mode + ".json") + "\necho\n";
      write_file(bin + "/" + mode_named(mode).executable, body, true);
    }
  }
  ProcessResult sweep(std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"sweep", config, "--out", out, "--bin-dir", bin, "--launcher", "none",
                                  "--probe-seconds", "0.2"};
    a.insert(a.end(), extra.begin(), extra.end());
    return test::dpscale(a, 120);
  }
  std::vector<nlohmann::json> lines() {
    std::vector<nlohmann::json> v;
    for (const std::string& l : test::lines_of(read_file(out))) v.push_back(nlohmann::json::parse(l));
    return v;
  }
};

TEST(HarnessSweepState, EveryLineRecordsTheMachineAroundItsRun) {
  StateSweep s;
  const ProcessResult r = s.sweep({"--disturbed-reruns", "0"});  // a busy test machine reruns nothing here
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = s.lines();
  ASSERT_EQ(lines.size(), 2u) << r.err;
  for (const auto& l : lines) {
    const auto& st = l["system"]["state"];
    ASSERT_TRUE(st.is_object()) << l.dump();
    EXPECT_GT(st["probe_before_gflops"].get<double>(), 0.0);
    EXPECT_GT(st["probe_after_gflops"].get<double>(), 0.0);
    EXPECT_GE(st["others_cpus"].get<double>(), 0.0);
    EXPECT_GE(st["load1_before"].get<double>(), 0.0);
    // The probe after one run is the probe before the next.
    EXPECT_FALSE(l["run"].contains("attempt")) << "a first run carries no attempt";
  }
  EXPECT_EQ(lines[0]["system"]["state"]["probe_after_gflops"], lines[1]["system"]["state"]["probe_before_gflops"]);
}

TEST(HarnessSweepState, ARunBesideABusyLoopIsDisturbedAndRunAgain) {
  // naive alone: with single first, a test machine busy with other tests can disturb single and
  // its rerun, and a rerun disturbed again rightly stops reruns until a run goes undisturbed.
  StateSweep s(R"(["naive"])");
  write_file(s.busy_flag, "");
  const ProcessResult r = s.sweep({"--disturbed-reruns", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> naive;
  for (const auto& l : s.lines()) {
    if (l["point"]["mode"] == "naive") naive.push_back(l);
  }
  ASSERT_GE(naive.size(), 2u) << "naive disturbed, then naive again\n" << r.err;
  ASSERT_LE(naive.size(), 3u) << "at most two reruns\n" << r.err;
  const auto& busy = naive[0]["system"]["state"];
  EXPECT_GT(busy["others_cpus"].get<double>(), 0.5) << busy.dump();
  ASSERT_TRUE(busy["disturbed"].is_string()) << busy.dump();
  EXPECT_NE(busy["disturbed"].get<std::string>().find(" CPU"), std::string::npos) << busy.dump();
  for (size_t i = 1; i < naive.size(); ++i) {
    EXPECT_EQ(naive[i]["run"]["attempt"], static_cast<int>(i));
    EXPECT_EQ(naive[i]["run"]["run_id"], naive[0]["run"]["run_id"]);
  }
  EXPECT_NE(r.err.find("small naive K=2 pcie4 (rerun 1)"), std::string::npos) << r.err;

  // Read back, the last attempt stands for its round: one naive run, no duplicate warning.
  const ResultsFile f = read_results(s.out);
  ASSERT_EQ(f.entries.size(), 1u);
  EXPECT_STREQ(f.entries[0].point.mode.name(), "naive");
  EXPECT_EQ(f.entries[0].run.attempt, static_cast<int>(naive.size()) - 1);
  EXPECT_TRUE(f.warnings.empty());
}

TEST(HarnessSweepState, ARunWhoseRanksLostHalfTheEpochsIsDisturbedAndRunAgain) {
  StateSweep s(R"(["naive"])", 0.5);
  const ProcessResult r = s.sweep({"--disturbed-reruns", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = s.lines();
  ASSERT_EQ(lines.size(), 2u) << "disturbed, then once more\n" << r.err;
  for (const auto& l : lines) {
    const auto& why = l["system"]["state"]["disturbed"];
    ASSERT_TRUE(why.is_string()) << l.dump();
    EXPECT_EQ(why.get<std::string>().rfind("run delay 50% of the epochs (others ", 0), 0u) << why;
  }
}

// Negative control of the old rule: the busy loop takes another CPU's worth beside the run, but
// the ranks lost 1% of their epochs: fit, not rerun.
TEST(HarnessSweepState, ABusyLoopTheRanksDidNotWaitForDoesNotDisturb) {
  StateSweep s(R"(["naive"])", 0.01);
  write_file(s.busy_flag, "");
  const ProcessResult r = s.sweep({"--disturbed-reruns", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = s.lines();
  ASSERT_EQ(lines.size(), 1u) << r.err;
  const auto& st = lines[0]["system"]["state"];
  EXPECT_GT(st["others_cpus"].get<double>(), 0.5) << st.dump();  // recorded all the same
  EXPECT_TRUE(st["disturbed"].is_null()) << st.dump();
}

TEST(HarnessSweepState, NoRerunsKeepsTheDisturbedRun) {
  StateSweep s;
  write_file(s.busy_flag, "");
  const ProcessResult r = s.sweep({"--disturbed-reruns", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = s.lines();
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_TRUE(lines[1]["system"]["state"]["disturbed"].is_string()) << lines[1].dump();
}

}  // namespace
}  // namespace dpscale
