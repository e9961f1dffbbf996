// test_sweep.cpp — the sweep loop against fake trainers (shell scripts standing in for train_*):
// failing and timed-out runs are recorded as failed and the sweep goes on, an interrupted sweep
// keeps what it finished, repeats are distinct runs; one sweep per results file, also when a
// sweep opens the lock file just as its holder removes it (--resume: test_resume.cpp). The real
// trainers are the CI test's business.
// Every sweep here runs with no probe and no reruns of disturbed runs (test_sweep_state.cpp tests
// those): on a busy test machine a rerun would change the counts these tests assert.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <thread>

#include "harness/report/analysis.h"
#include "harness/sweep/out_lock.h"
#include "harness/results/results_file.h"
#include "fake_sweep.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using test::lines_of;
using test::make_record;
using test::pt;
using test::read_file;
using test::write_file;

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
  EXPECT_STREQ(rf.entries[3].point.mode.name(), "bucketed");

  // The hung trainer's own child died with its process group.
  const int pid = std::stoi(read_file(f.dir.file("hang.pid")));
  EXPECT_TRUE(process_gone(pid)) << "pid " << pid << " survived the timeout";

  // Every line carries run metadata and the system description.
  const auto first = nlohmann::json::parse(lines_of(read_file(f.out))[0]);
  EXPECT_EQ(first["run"]["run_id"], "fake/small-single-k1-r0");
  EXPECT_EQ(first["run"]["config"], "fake");
  // The program by its name: no path of the machine the sweep ran on goes into the file.
  EXPECT_EQ(first["run"]["argv"][0], "train_single_gpu");
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
    o.die_with_parent = false;  // the pid is dpscale's own, not a guard's (subprocess.h)
    o.on_spawn = [&](int p) { pid = p; };
    r = run_process({test::kDpscale, "sweep", f.config, "--out", f.out, "--bin-dir", f.bin, "--launcher", "none", "--disturbed-reruns", "0", "--probe-seconds", "0"}, o);
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

// --- One sweep per file, the config that made it, a dying sweep takes its runs ---------

// Starts `dpscale ARGS` directly (no guard: the pid is dpscale's) in a thread; returns its pid.
struct Background {
  std::atomic<int> pid{0};
  ProcessResult result;
  std::thread thread;
  std::atomic<bool> done{false};
  explicit Background(std::vector<std::string> args, std::vector<std::string> env = {}) {
    args.insert(args.begin(), test::kDpscale);
    thread = std::thread([this, args, env] {
      ProcessOptions o;
      o.timeout_s = 120;
      o.die_with_parent = false;
      o.env = env;
      o.on_spawn = [this](int p) { pid = p; };
      result = run_process(args, o);
      done = true;
    });
    for (int i = 0; i < 200 && pid == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ProcessResult join() {
    if (thread.joinable()) thread.join();
    return result;
  }
  ~Background() { join(); }
};

void wait_for_file(const std::string& path) {
  for (int i = 0; i < 400 && !std::filesystem::exists(path); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
}

TEST(HarnessSweep, ASecondSweepOnTheSameOutIsRefusedNamingTheHolder) {
  FakeSweep f;
  for (const char* m : {"single", "naive", "interleaved", "bucketed"}) f.behave(m, "slow");
  Background first({"sweep", f.config, "--out", f.out, "--bin-dir", f.bin, "--launcher", "none", "--disturbed-reruns", "0", "--probe-seconds", "0", "--resume"});
  wait_for_file(f.calls);  // the first sweep holds the lock and runs
  const ProcessResult second = f.sweep({"--resume"});
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_NE(second.err.find("out.jsonl is in use by another dpscale sweep (pid " + std::to_string(first.pid.load()) + ";"),
            std::string::npos)
      << second.err;
  EXPECT_EQ(lines_of(second.err).size(), 1u) << second.err;
  const ProcessResult r = first.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(f.called().size(), 4u) << "only the first sweep ran anything";
  EXPECT_EQ(lines_of(read_file(f.out)).size(), 4u);
  EXPECT_FALSE(std::filesystem::exists(f.out + ".lock")) << "the lock file goes with the sweep";
  // Control: once the first is done, the lock is free and a resume finds nothing left to run.
  const ProcessResult after = f.sweep({"--resume"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.err.find("(4 already done there)"), std::string::npos) << after.err;
}

TEST(HarnessSweep, TwoConcurrentResumesNeverRecordAPointTwice) {
  // Both started together, several times: whatever the interleaving, each run id is in the file
  // once, and every sweep either ran (0) or was refused (2).
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    FakeSweep f;
    for (const char* m : {"single", "naive", "interleaved", "bucketed"}) f.behave(m, "slow");
    std::vector<std::string> args = {"sweep", f.config, "--out", f.out, "--bin-dir", f.bin, "--launcher", "none", "--disturbed-reruns", "0", "--probe-seconds", "0", "--resume"};
    std::vector<ProcessResult> results;
    {
      Background a(args), b(args);
      results = {a.join(), b.join()};
    }
    int ran = 0;
    for (const ProcessResult& r : results) {
      EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.err;
      if (r.exit_code == 2) {
        EXPECT_NE(r.err.find("is in use by another dpscale sweep"), std::string::npos) << r.err;
      }
      ran += r.exit_code == 0;
    }
    EXPECT_GE(ran, 1);
    std::map<std::string, int> ids;
    for (const std::string& l : lines_of(read_file(f.out))) ++ids[nlohmann::json::parse(l)["run"]["run_id"].get<std::string>()];
    EXPECT_EQ(ids.size(), 4u);
    for (const auto& [id, n] : ids) EXPECT_EQ(n, 1) << id << " recorded " << n << " times";
    EXPECT_EQ(f.called().size(), 4u) << "no run was started twice";
  }
}

// The race out_lock.cpp's inode check handles, forced: sweep B opens the lock file while the
// previous holder still holds it, and waits (the DPSCALE_TEST_OUT_LOCK_GAP hook) before locking
// it; the holder then removes and releases it, and sweep C creates a new lock file and starts.
// When B locks, the file it opened is free but no longer the lock file. B must look again, find
// C holding the new one and be refused; C's sweep must be the only one in the results file.
TEST(HarnessSweep, ASweepThatOpenedARemovedLockFileDoesNotRunBesideTheNewHolder) {
  FakeSweep f;
  for (const char* m : {"single", "naive", "interleaved", "bucketed"}) f.behave(m, "gated");
  const std::string gap = f.dir.file("gap"), lock = f.out + ".lock";
  const std::vector<std::string> args = {"sweep", f.config, "--out", f.out, "--bin-dir", f.bin,
                                         "--launcher", "none", "--disturbed-reruns", "0", "--probe-seconds", "0", "--resume"};
  auto wait_until = [](const std::function<bool()>& ready) {
    for (int i = 0; i < 1500 && !ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return ready();
  };

  std::optional<OutLock> previous(std::in_place, f.out);  // the previous holder: this process
  struct stat old_lock {};
  ASSERT_EQ(::stat(lock.c_str(), &old_lock), 0);
  Background b(args, {"DPSCALE_TEST_OUT_LOCK_GAP=" + gap});
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(gap); })) << "sweep B never reached the gap";
  previous.reset();  // unlink, then release: B's open file is now one no path names
  ASSERT_FALSE(std::filesystem::exists(lock));

  Background c(args);
  ASSERT_TRUE(wait_until([&] { return f.called().size() >= 1; })) << "sweep C never started a run";
  struct stat new_lock {};
  ASSERT_EQ(::stat(lock.c_str(), &new_lock), 0) << "C holds a lock file of its own";
  ASSERT_NE(new_lock.st_ino, old_lock.st_ino);

  std::filesystem::remove(gap);  // B locks the file it opened: nobody holds that one any more
  const bool b_ended = wait_until([&] { return b.done.load() || f.called().size() >= 2; });
  write_file(f.dir.file("release"), "");
  const ProcessResult rb = b.join(), rc = c.join();

  EXPECT_TRUE(b_ended);
  EXPECT_EQ(rc.exit_code, 0) << rc.err;
  EXPECT_EQ(rb.exit_code, 2) << "B ran beside C\n" << rb.err;
  EXPECT_NE(rb.err.find("out.jsonl is in use by another dpscale sweep (pid " + std::to_string(c.pid.load()) + ";"),
            std::string::npos)
      << rb.err;
  // Only C ran anything (a sweep may rerun a run it judged disturbed: counted by who, not how often).
  std::set<std::string> by_c;
  for (const std::string& l : lines_of(read_file(f.dir.file("gated.log")))) {
    EXPECT_EQ(l.substr(0, 2), "C ") << "sweep B ran " << l.substr(2);
    by_c.insert(l.substr(2));
  }
  EXPECT_EQ(by_c.size(), 4u);
  // The results file holds C's four runs, whole, and nothing a reader would drop as a duplicate.
  const ResultsFile rf = read_results(f.out);
  EXPECT_TRUE(rf.warnings.empty()) << rf.warnings.front();
  std::set<std::string> ids;
  for (const SweepEntry& e : rf.entries) {
    EXPECT_TRUE(e.ok) << e.reason;
    ids.insert(e.run.run_id);
  }
  EXPECT_EQ(rf.entries.size(), 4u);
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_FALSE(std::filesystem::exists(lock)) << "the lock file goes with the sweep";
}

// Every process of a sweep's run, found through /proc by a marker in its command line.
std::vector<int> processes_with(const std::string& marker) {
  std::vector<int> found;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = read_file(e.path().string() + "/cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(marker) != std::string::npos && !process_gone(std::stoi(name))) found.push_back(std::stoi(name));
  }
  return found;
}

TEST(HarnessSweep, ASigkilledSweepTakesItsRunWithIt) {
  FakeSweep f;
  f.behave("naive", "hang");  // the script and its background sleep, in the run's process group
  Background sweep({"sweep", f.config, "--out", f.out, "--bin-dir", f.bin, "--launcher", "none", "--disturbed-reruns", "0", "--probe-seconds", "0"});
  wait_for_file(f.dir.file("hang.pid"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int script = std::stoi(read_file(f.dir.file("hang.sh.pid")));
  const int sleeper = std::stoi(read_file(f.dir.file("hang.pid")));
  ASSERT_FALSE(process_gone(script)) << "the control: the run is alive while the sweep is";
  ASSERT_FALSE(process_gone(sleeper));
  ::kill(sweep.pid.load(), SIGKILL);
  EXPECT_EQ(sweep.join().term_signal, SIGKILL);
  for (int i = 0; i < 60 && !(process_gone(script) && process_gone(sleeper)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(process_gone(script)) << "trainer " << script << " outlived its sweep";
  EXPECT_TRUE(process_gone(sleeper)) << "the trainer's child " << sleeper << " outlived the sweep";
  EXPECT_EQ(read_results(f.out).entries.size(), 1u) << "single had finished";
  EXPECT_FALSE(process_gone(::getpid()));
}

TEST(HarnessSweep, ASigkilledSweepTakesMpirunAndItsRanksWithIt) {
  // Real mpirun and real ranks (in process groups of their own): a seed no other job uses marks
  // this sweep's ranks in /proc.
  test::ScratchDir dir;
  const std::string seed = std::to_string(900000000 + ::getpid() % 100000000);
  const std::string config = dir.file("long.json");
  write_file(config, R"({"name": "long", "models": ["784,256,10"], "modes": ["naive"], "world_sizes": [2], "backend": "cpu",
                         "options": {"epochs": 1000, "seed": )" + seed + "}}");
  Background sweep({"sweep", config, "--out", dir.file("o.jsonl"), "--mpirun", DPSCALE_MPIEXEC});
  const std::string marker = "--seed " + seed;
  std::vector<int> ranks;
  for (int i = 0; i < 600 && ranks.size() < 2; ++i) {  // mpirun starts the ranks: up to 30 s on a busy machine
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ranks.clear();
    for (int pid : processes_with(marker)) {
      if (read_file("/proc/" + std::to_string(pid) + "/comm").rfind("train_dp_naive", 0) == 0) ranks.push_back(pid);
    }
  }
  ASSERT_EQ(ranks.size(), 2u) << "the control: both ranks run while the sweep does";
  ::kill(sweep.pid.load(), SIGKILL);
  sweep.join();
  std::vector<int> left;
  for (int i = 0; i < 200; ++i) {  // "within a few seconds": at most 10
    left = processes_with(marker);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(left.empty()) << left.size() << " processes of the killed sweep's run are still alive, e.g. pid " << left[0];
  for (int pid : left) ::kill(pid, SIGKILL);  // do not leave them to the next test
}

}  // namespace
}  // namespace dpscale
