// test_sweep.cpp — the sweep loop against fake trainers (shell scripts standing in for train_*):
// failing and timed-out runs are recorded as failed and the sweep goes on, --resume runs only
// what is missing, an interrupted sweep keeps what it finished, a cut-off last line is not glued
// to the next record, repeats are distinct runs. The real trainers are the CI test's business.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "harness/analysis.h"
#include "harness/results_file.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using test::lines_of;
using test::make_record;
using test::pt;
using test::read_file;
using test::write_file;

// A directory of fake trainers, a config for them, and a log of every call.
struct FakeSweep {
  test::ScratchDir dir;
  std::string bin = dir.file("bin");
  std::string config = dir.file("fake.json");
  std::string out = dir.file("out.jsonl");
  std::string calls = dir.file("calls.log");

  FakeSweep() {
    std::filesystem::create_directories(bin);
    write_file(config, R"({"name": "fake", "models": ["small"], "modes": ["single", "naive", "interleaved", "bucketed"],
                           "world_sizes": [2], "bucket_caps_mb": [1], "link": "pcie4", "timeout_s": 30})");
    for (const char* m : {"single", "naive", "interleaved", "bucketed"}) behave(m, "ok");
  }
  // ok: print the record of that mode | fail: exit 3 with a message | hang: sleep in a grandchild
  // | silent: exit 0 without a record | wrong: print a single-device record
  void behave(const std::string& mode, const std::string& how) {
    const SweepPoint p = mode == "single" ? pt("small", mode, 1) : pt("small", mode, 2, mode == "bucketed" ? 1.0 : std::optional<double>(), "pcie4");
    write_file(dir.file(mode + ".json"), to_json(make_record(how == "wrong" ? pt("small", "single", 1) : p, 0.5, 0.1)).dump());
    std::string body = "#!/bin/sh\necho \"" + mode + " $*\" >> " + calls + "\n";
    if (how == "ok" || how == "wrong") body += "echo '# fake banner' >&2\nprintf 'RESULTS_JSON: '\ncat " + dir.file(mode + ".json") + "\necho\n";
    if (how == "fail") body += "echo 'fake: boom' >&2\nexit 3\n";
    if (how == "hang") body += "sleep 60 &\necho $! > " + dir.file("hang.pid") + "\nwait\n";
    if (how == "silent") body += "exit 0\n";
    write_file(bin + "/" + mode_named(mode).executable, body, true);
  }
  ProcessResult sweep(std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"sweep", config, "--out", out, "--bin-dir", bin, "--launcher", "none"};
    a.insert(a.end(), extra.begin(), extra.end());
    return test::dpscale(a, 120);
  }
  std::vector<std::string> called() { return lines_of(read_file(calls)); }
};

bool process_gone(int pid) {
  if (::kill(pid, 0) != 0) return true;
  // A zombie waiting for a reaper that never comes (PID 1 in some containers) is gone too.
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] == 'Z';
}

TEST(HarnessSweep, FailingAndTimedOutRunsAreRecordedAndTheSweepGoesOn) {
  FakeSweep f;
  f.behave("naive", "fail");
  f.behave("interleaved", "hang");
  const auto t0 = std::chrono::steady_clock::now();
  const ProcessResult r = f.sweep({"--timeout", "1.5"});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 1) << "failed runs make the sweep's status 1\n" << r.err;
  EXPECT_LT(took, 15.0) << "the hung run must be killed at its timeout";

  const ResultsFile rf = read_results(f.out);
  ASSERT_EQ(rf.entries.size(), 4u) << r.err;
  EXPECT_TRUE(rf.entries[0].ok);
  EXPECT_FALSE(rf.entries[1].ok);
  EXPECT_EQ(rf.entries[1].reason, "exit status 3: fake: boom");
  EXPECT_FALSE(rf.entries[2].ok);
  EXPECT_EQ(rf.entries[2].reason, "timed out after 1.5 s (process group killed)");
  EXPECT_GE(rf.entries[2].run.duration_s, 1.5);
  EXPECT_TRUE(rf.entries[3].ok) << "the sweep goes on after a failure and a timeout";
  EXPECT_EQ(rf.entries[3].point.mode, "bucketed");

  // The hung trainer's own child died with its process group.
  const int pid = std::stoi(read_file(f.dir.file("hang.pid")));
  EXPECT_TRUE(process_gone(pid)) << "pid " << pid << " survived the timeout";

  // Every line carries run metadata and the system description.
  const auto first = nlohmann::json::parse(lines_of(read_file(f.out))[0]);
  EXPECT_EQ(first["run"]["run_id"], "fake/small-single-k1-r0");
  EXPECT_EQ(first["run"]["config"], "fake");
  EXPECT_EQ(first["run"]["argv"][0], f.bin + "/train_single_gpu");
  EXPECT_FALSE(first["run"]["host"].get<std::string>().empty());
  EXPECT_EQ(first["system"]["link"], "pcie4");
  EXPECT_EQ(first["system"]["host"], first["run"]["host"]);
  EXPECT_TRUE(first["system"].contains("cpu_model"));
  EXPECT_TRUE(first["system"].contains("device_count"));

  // The progress line: run i of n, what, elapsed, time left.
  EXPECT_NE(r.err.find("[1/4] small single K=1  (elapsed 0s, time left unknown)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[3/4] small interleaved K=2 pcie4  (elapsed "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("FAILED in "), std::string::npos) << r.err;
}

TEST(HarnessSweep, ResumeRunsOnlyWhatIsNotDone) {
  FakeSweep f;
  f.behave("naive", "fail");
  EXPECT_EQ(f.sweep().exit_code, 1);
  EXPECT_EQ(f.called().size(), 4u);

  f.behave("naive", "ok");
  std::filesystem::remove(f.calls);
  const ProcessResult again = f.sweep({"--resume"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  ASSERT_EQ(f.called().size(), 1u) << "only the failed run is run again";
  EXPECT_EQ(f.called()[0].substr(0, 6), "naive ");
  EXPECT_NE(again.err.find("(3 already done there)"), std::string::npos) << again.err;

  const Analysis a = analyse(read_results(f.out));
  EXPECT_EQ(a.points.size(), 4u);
  ASSERT_EQ(a.failed.size(), 1u);
  EXPECT_TRUE(a.failed[0].retried_ok);

  std::filesystem::remove(f.calls);
  const std::string before = read_file(f.out);
  EXPECT_EQ(f.sweep({"--resume"}).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(f.calls)) << "a finished sweep resumes to nothing";
  EXPECT_EQ(read_file(f.out), before);
}

TEST(HarnessSweep, AnExistingOutNeedsResume) {
  FakeSweep f;
  write_file(f.out, "keep me\n");
  const ProcessResult r = f.sweep();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exists: pass --resume"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(f.out), "keep me\n");
  EXPECT_FALSE(std::filesystem::exists(f.calls));
}

TEST(HarnessSweep, ResumeAfterACutOffLineStartsANewLine) {
  FakeSweep f;
  const SweepPoint s = pt("small", "single", 1);
  RunInfo info;
  info.config = "fake";
  info.run_id = s.run_id("fake");
  const std::string good = make_sweep_line(s, info, {}, make_record(s, 0.5), "").dump() + "\n";
  write_file(f.out, good + good.substr(0, 50));  // the next run was being written when killed
  EXPECT_EQ(f.sweep({"--resume"}).exit_code, 0);
  EXPECT_EQ(f.called().size(), 3u) << "single was done";
  const ResultsFile rf = read_results(f.out);
  EXPECT_EQ(rf.entries.size(), 4u);
  ASSERT_EQ(rf.warnings.size(), 1u);
  EXPECT_NE(rf.warnings[0].find(":2: truncated line skipped"), std::string::npos);
}

TEST(HarnessSweep, RunsWithoutAProperRecordFail) {
  FakeSweep f;
  f.behave("naive", "silent");
  f.behave("interleaved", "wrong");
  EXPECT_EQ(f.sweep().exit_code, 1);
  const ResultsFile rf = read_results(f.out);
  ASSERT_EQ(rf.entries.size(), 4u);
  EXPECT_EQ(rf.entries[1].reason, "no RESULTS_JSON line in the output");
  EXPECT_EQ(rf.entries[2].reason, "the record is of single K=1, not the interleaved K=2 run that was launched");
}

TEST(HarnessSweep, RepeatsAreSeparateRuns) {
  FakeSweep f;
  EXPECT_EQ(f.sweep({"--repeats", "2"}).exit_code, 0);
  const ResultsFile rf = read_results(f.out);
  ASSERT_EQ(rf.entries.size(), 8u);
  EXPECT_EQ(rf.entries[0].run.run_id, "fake/small-single-k1-r0");
  EXPECT_EQ(rf.entries[4].run.run_id, "fake/small-single-k1-r1");
  EXPECT_EQ(analyse(rf).points[0].runs, 2);
}

TEST(HarnessSweep, InterruptKeepsWhatFinishedAndKillsTheRun) {
  FakeSweep f;
  f.behave("interleaved", "hang");
  std::atomic<int> pid{0};
  ProcessResult r;
  std::thread t([&] {
    ProcessOptions o;
    o.timeout_s = 60;
    o.on_spawn = [&](int p) { pid = p; };
    r = run_process({test::kDpscale, "sweep", f.config, "--out", f.out, "--bin-dir", f.bin, "--launcher", "none"}, o);
  });
  for (int i = 0; i < 200 && !std::filesystem::exists(f.dir.file("hang.pid")); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_GT(pid.load(), 0);
  ::kill(pid.load(), SIGINT);
  t.join();
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted; nothing recorded for fake/small-interleaved-k2-pcie4-r0"), std::string::npos) << r.err;
  EXPECT_EQ(read_results(f.out).entries.size(), 2u) << "single and naive finished before the interrupt";
  const int hung = std::stoi(read_file(f.dir.file("hang.pid")));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(process_gone(hung)) << "the interrupted run's group must not outlive the sweep";
}

TEST(HarnessSweep, MissingTrainersAreBadInput) {
  FakeSweep f;
  std::filesystem::remove(f.bin + "/train_dp_naive");
  const ProcessResult r = f.sweep();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("train_dp_naive not found"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(f.out));
}

}  // namespace
}  // namespace dpscale
