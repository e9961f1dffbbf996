// test_slurm.cpp — a real Slurm on the two emulated nodes (scripts/emulated-slurm.sh: munged,
// slurmctld in dpnode0, a slurmd per node; clients through scripts/ns-slurm):
//   - sinfo shows both nodes idle;
//   - a two-node srun (PMIx) of each data-parallel trainer at K = 2 (1+1) and K = 4 (2+2) trains
//     the weights one device trains (tests/trainers/weights_compare.h), with n_nodes 2 and the
//     placement in the record;
//   - a placement sweep submitted with sbatch (scripts/sbatch-sweep.sh) runs to completion and its
//     report has the placements; a job step cancelled mid-sweep is a failed run, recorded; the job
//     cancelled mid-sweep leaves no trainer process, and --resume completes the sweep;
//   - the sweep's job steps run with every PMIx fence on Slurm's ring collective
//     (SLURM_PMIX_FENCE=ring), and so do the srun steps here: with the plugin's default a rank can
//     segfault inside MPI_Init under load (docs/cluster.md, "Start-up under srun");
//   - bad input: a placement that does not divide K, more nodes than the allocation has,
//     --launcher srun outside an allocation: one line, exit 2, nothing started.
// Skipped, with the reason, where Slurm cannot run (not root, packages missing). The job's files
// live under $TMPDIR, which CMake points at the build tree: every node sees it, as a cluster's
// shared file system (each emulated node has its own /tmp).
//
// Run: ctest -L slurm --output-on-failure
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "dp_support.h"
#include "harness/common/subprocess.h"
#include <sstream>
#include "weights_compare.h"

namespace dpscale::test {
namespace {

namespace fs = std::filesystem;

std::string scripts() { return std::string(DPSCALE_SOURCE_DIR) + "/scripts"; }
std::string bin_dir() { return fs::path(bin("dpscale")).parent_path().string(); }

// ns-slurm COMMAND ARGS...: a Slurm client on dpnode0.
std::vector<std::string> slurm(std::vector<std::string> argv) {
  argv.insert(argv.begin(), scripts() + "/ns-slurm");
  return argv;
}

#define REQUIRE_SLURM()                                                                                       \
  do {                                                                                                        \
    const ProcessResult why = run({scripts() + "/emulated-slurm.sh", "check"}, 30);                           \
    if (why.exit_code == 77) GTEST_SKIP() << "Slurm cannot run here: " << why.out;                            \
    const ProcessResult up = run(slurm({"sinfo", "-h"}), 30);                                                 \
    ASSERT_EQ(up.exit_code, 0) << "Slurm can run here but is not up (the fixture slurm_up runs "              \
                                  "scripts/emulated-nodes.sh up --slurm):\n" << up.err;                       \
  } while (0)

std::vector<nlohmann::json> read_lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

// Processes running one of this build's trainers (other builds' trainers on the machine are
// someone else's).
std::vector<int> our_trainers() {
  std::vector<int> pids;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    const fs::path exe = fs::read_symlink(e.path() / "exe", ec);
    if (!ec && exe.parent_path() == fs::path(bin_dir()) && exe.filename().string().rfind("train_", 0) == 0) {
      pids.push_back(std::stoi(name));
    }
  }
  return pids;
}

std::string job_state(const std::string& job) {
  ProcessResult r = run(slurm({"squeue", "-h", "-j", job, "-t", "all", "-o", "%T"}), 30);
  std::string s = r.out;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// sbatch of scripts/sbatch-sweep.sh on both nodes; returns sbatch's result (--wait: the job's).
ProcessResult submit(const std::string& out, const std::string& log, const std::vector<std::string>& sweep_args,
                     bool wait) {
  std::vector<std::string> argv = {"sbatch", "-N", "2", "--exclusive", "--parsable", "-o", log,
                                   "--export=ALL,DPSCALE_OUT=" + out + ",DPSCALE_BIN=" + bin_dir(),
                                   "--chdir", fs::path(out).parent_path().string()};
  if (wait) argv.push_back("--wait");
  argv.push_back(scripts() + "/sbatch-sweep.sh");
  argv.push_back(std::string(DPSCALE_SOURCE_DIR) + "/configs/cluster-ci.json");
  argv.insert(argv.end(), sweep_args.begin(), sweep_args.end());
  return run(slurm(argv), 600);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Slurm, SinfoShowsBothNodesIdle) {
  REQUIRE_SLURM();
  const ProcessResult r = run(slurm({"sinfo", "-h", "-N", "-o", "%N %t"}), 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "dpnode0 idle\ndpnode1 idle\n");
}

// ---- trainers as one srun job step across both nodes ---------------------------------------

// Every fence of the step on Slurm's ring collective, as the sweep launches its steps
// (launcher.cpp): with the plugin's default a rank under load can segfault in MPI_Init
// (docs/cluster.md, "Start-up under srun").
const std::string kRingFence = "--export=ALL,SLURM_PMIX_FENCE=ring";

std::vector<std::string> common_args(const std::string& init, const std::string& save) {
  return {"--backend", "cpu", "--model", kTinyModel, "--samples", "512", "--batch-size", "256", "--max-steps", "3",
          "--lr", "0.05", "--init", init, "--save", save, "--quiet"};
}

struct Case {
  std::string exe;
  int k;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.exe << " K=" << c.k; }

class SrunTrainers : public ::testing::TestWithParam<Case> {};

TEST_P(SrunTrainers, SameWeightsAsOneDeviceOnTwoNodes) {
  REQUIRE_SLURM();
  const Case c = GetParam();
  ScratchDir dir("slurm");
  const std::string init = dir.file("init.safetensors");
  write_random_checkpoint(init, kTinyModel, 1234);
  record_of(std::vector<std::string>{bin("train_single_gpu")} + common_args(init, dir.file("single.safetensors")), 60);
  const std::vector<std::string> srun = {"srun", "--mpi=pmix", "--kill-on-bad-exit=1", kRingFence, "-N", "2",
                                         "--ntasks-per-node", std::to_string(c.k / 2), "-n", std::to_string(c.k),
                                         bin(c.exe)};
  std::vector<std::string> extra;
  if (c.exe == "train_ddp_bucketed") extra = {"--bucket-cap-mb", "0.05", "--first-bucket-mb", "0.001"};
  const auto dp = record_of(slurm(srun + common_args(init, dir.file("dp.safetensors")) + extra), 180);
  EXPECT_EQ(dp["world_size"], c.k);
  EXPECT_EQ(dp["n_nodes"], 2);
  EXPECT_EQ(dp["ranks_per_node"], c.k / 2);
  EXPECT_EQ(dp["nodes"], "dpnode0,dpnode1");
  EXPECT_EQ(dp["steps"], 3);
  const Comparison cmp = compare_weights(read_weights(init), read_weights(dir.file("single.safetensors")),
                                         read_weights(dir.file("dp.safetensors")), 3);
  EXPECT_TRUE(cmp.pass) << c.exe << " K=" << c.k << " under srun vs train_single_gpu:\n" << cmp.report;
  std::printf("%s K=%d under srun on 2 nodes: worst diff/tol %.3g\n", c.exe.c_str(), c.k, cmp.worst_ratio);
}

INSTANTIATE_TEST_SUITE_P(Modes, SrunTrainers,
                         ::testing::Values(Case{"train_dp_naive", 2}, Case{"train_dp_naive", 4},
                                           Case{"train_dp_interleaved", 4}, Case{"train_ddp_bucketed", 2},
                                           Case{"train_ddp_bucketed", 4}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return i.param.exe.substr(i.param.exe.find('_') + 1) + "_K" + std::to_string(i.param.k);
                         });

// ---- sweeps as batch jobs ------------------------------------------------------------------

// cluster-ci.json: small, single + naive/bucketed at K = 2 and 4, each on one node and on two.
const std::set<std::string> kPlacements = {"1x2", "2x1", "1x4", "2x2"};
constexpr int kRunsPerRound = 9;
// One data-parallel point, one rank on each node.
const std::string kOnePointK2 =
    R"({"models": ["small"], "modes": ["naive"], "world_sizes": [2], "nodes": [2],
        "options": {"samples": 256, "batch_size": 256, "epochs": 1}})";

TEST(SlurmSweep, SbatchRunsToCompletionAndReportsPlacements) {
  REQUIRE_SLURM();
  ScratchDir dir("slurm-sweep");
  const std::string out = dir.file("sweep.jsonl"), log = dir.file("job.out");
  const ProcessResult r = submit(out, log, {}, true);
  const std::string text = slurp(log);
  ASSERT_EQ(r.exit_code, 0) << describe({"sbatch"}, r) << "\njob output:\n" << text;
  // A run the machine disturbed is run again (sweep.h): count run ids, not lines.
  std::set<std::string> ids, seen;
  for (const auto& l : read_lines(out)) {
    EXPECT_EQ(l["status"], "ok") << l.dump();
    ids.insert(l["run"]["run_id"].get<std::string>());
    if (!l["point"].contains("nodes")) continue;
    const int n = l["point"]["nodes"], rpn = l["point"]["ranks_per_node"];
    seen.insert(std::to_string(n) + "x" + std::to_string(rpn));
    EXPECT_EQ(l["n_nodes"], n) << l["run"]["run_id"];
    EXPECT_EQ(l["ranks_per_node"], rpn) << l["run"]["run_id"];
    EXPECT_EQ(l["run"]["argv"][0], "srun") << "inside an allocation the sweep launches job steps";
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kRunsPerRound)) << text;
  EXPECT_EQ(seen, kPlacements);
  // The report the job printed at its end: a placement column with every placement.
  EXPECT_NE(text.find("Nodes×Ranks"), std::string::npos) << text;
  for (const std::string& p : kPlacements) EXPECT_NE(text.find(" " + p + " |"), std::string::npos) << p << "\n" << text;
}

// The sweep's own job steps carry SLURM_PMIX_FENCE=ring though the job's environment does not:
// a stand-in trainer writes what each rank's step environment holds.
TEST(SlurmSweep, JobStepsRunWithEveryFenceOnTheRing) {
  REQUIRE_SLURM();
  ScratchDir dir("slurm-fence");
  const fs::path fake = dir.file("bin"), seen = dir.file("seen");
  fs::create_directories(fake);
  fs::create_directories(seen);
  const fs::path trainer = fake / "train_dp_naive";
  std::ofstream(trainer) << "#!/bin/sh\necho \"${SLURM_PMIX_FENCE:-unset}\" > " << seen.string()
                         << "/rank$SLURM_PROCID\n";
  fs::permissions(trainer, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
  std::ofstream(dir.file("c.json")) << kOnePointK2;
  const std::string sweep = bin("dpscale") + " sweep " + dir.file("c.json") + " --launcher srun --bin-dir " +
                            fake.string() + " --out " + dir.file("out.jsonl") +
                            " --probe-seconds 0 --disturbed-reruns 0";
  const ProcessResult r = run(slurm({"env", "-u", "SLURM_PMIX_FENCE", "sbatch", "-N", "2", "--exclusive", "--wait",
                                     "-o", dir.file("job.out"), "--chdir", dir.file(""), "--wrap", sweep}),
                              180);
  const std::string log = slurp(dir.file("job.out"));
  for (const char* rank : {"rank0", "rank1"}) {
    const std::string got = slurp((seen / rank).string());
    EXPECT_EQ(got, "ring\n") << rank << " (sbatch exit " << r.exit_code << ")\njob output:\n" << log;
  }
}

TEST(SlurmSweep, CancelledStepIsFailedRunCancelledJobLeavesNothingAndResumeCompletes) {
  REQUIRE_SLURM();
  ScratchDir dir("slurm-cancel");
  const std::string out = dir.file("sweep.jsonl"), log = dir.file("job.out");
  const ProcessResult sub = submit(out, log, {"--repeats", "2"}, false);
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  std::string job = sub.out.substr(0, sub.out.find_first_of(";\n"));
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(240);
  auto wait_for = [&](auto done, const char* what) {
    while (!done()) {
      ASSERT_LT(Clock::now(), deadline) << "timed out waiting for " << what << "\njob output:\n" << slurp(log);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  };
  // A data-parallel step running: cancel that step alone (scancel JOB.STEP). A step may end on
  // its own between squeue and scancel: then the next line is ok, and we try the next step.
  std::string step, failed_id;
  size_t before = 0;
  for (int attempt = 0; attempt < 5 && failed_id.empty(); ++attempt) {
    step.clear();
    wait_for([&] {
      if (read_lines(out).size() < 2) return false;  // past the single run and one placed run
      before = read_lines(out).size();
      const ProcessResult s = run(slurm({"squeue", "-h", "-s", "-j", job, "-o", "%i %j"}), 30);
      std::istringstream in(s.out);
      std::string id, name;
      while (in >> id >> name) {
        if (name.rfind("train_dp", 0) == 0 || name.rfind("train_ddp", 0) == 0) step = id;
      }
      return !step.empty();
    }, "a data-parallel job step");
    run(slurm({"scancel", step}), 30);
    wait_for([&] { return read_lines(out).size() > before; }, "the cancelled step's line");
    const auto next = read_lines(out)[before];
    if (next["status"] == "failed") failed_id = next["run"]["run_id"];
  }
  ASSERT_FALSE(failed_id.empty()) << "no cancelled step became a failed line";
  EXPECT_NE(read_lines(out)[before]["reason"].get<std::string>(), "") << "a failed line names its reason";

  // Now the whole job, mid-sweep.
  wait_for([&] { return read_lines(out).size() > before + 1; }, "one more run");
  ASSERT_EQ(run(slurm({"scancel", job}), 30).exit_code, 0);
  wait_for([&] {
    const std::string s = job_state(job);
    return !s.empty() && s != "RUNNING" && s != "COMPLETING" && s != "PENDING";
  }, "the job to end");
  EXPECT_EQ(job_state(job), "CANCELLED");
  // Slurm ends the steps' tasks with the job (SIGTERM, then SIGKILL after KillWait = 5 s).
  wait_for([&] { return our_trainers().empty(); }, "no trainer process left");
  const size_t after_cancel = read_lines(out).size();
  EXPECT_LT(after_cancel, static_cast<size_t>(2 * kRunsPerRound + 1)) << "the job ended before the sweep did";

  // --resume in a new job: runs what the file does not hold as ok, the cancelled step included.
  const ProcessResult again = submit(out, dir.file("job2.out"), {"--repeats", "2", "--resume"}, true);
  ASSERT_EQ(again.exit_code, 0) << again.err << "\n" << slurp(dir.file("job2.out"));
  std::set<std::string> ok;
  bool failed_rerun_ok = false;
  for (const auto& l : read_lines(out)) {
    if (l["status"] != "ok") continue;
    ok.insert(l["run"]["run_id"].get<std::string>());
    if (l["run"]["run_id"] == failed_id) failed_rerun_ok = true;
  }
  EXPECT_EQ(ok.size(), static_cast<size_t>(2 * kRunsPerRound));
  EXPECT_TRUE(failed_rerun_ok) << failed_id << " was not rerun";
  std::printf("cancelled step %s (%s), job %s after %zu lines; resumed to %zu ok runs\n", step.c_str(),
              failed_id.c_str(), job.c_str(), after_cancel, ok.size());
}

// ---- bad input: one line, exit 2, nothing started ------------------------------------------

struct Refusal {
  ProcessResult r;
  bool out_exists;
};

Refusal sweep_refusal(const std::string& config_text, std::vector<std::string> args,
                      const std::vector<std::string>& env = {}) {
  ScratchDir dir("slurm-bad");
  const std::string config = dir.file("c.json"), out = dir.file("out.jsonl");
  std::ofstream(config) << config_text;
  std::vector<std::string> argv = {"env", "-u", "SLURM_JOB_ID"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.insert(argv.end(), {bin("dpscale"), "sweep", config, "--out", out});
  argv.insert(argv.end(), args.begin(), args.end());
  Refusal f{run(argv, 60), false};
  f.out_exists = fs::exists(out);
  return f;
}

const std::string kPlaced =
    R"({"models": ["small"], "modes": ["naive"], "world_sizes": [4], "nodes": [NODES],
        "options": {"samples": 256, "batch_size": 256, "epochs": 1}})";

std::string with_nodes(const std::string& nodes) {
  std::string s = kPlaced;
  return s.replace(s.find("NODES"), 5, nodes);
}

void expect_one_line_exit_2(const Refusal& f, const std::string& words) {
  EXPECT_EQ(f.r.exit_code, 2) << f.r.err;
  EXPECT_EQ(count_occurrences(f.r.err, "\n"), 1) << f.r.err;
  EXPECT_NE(f.r.err.find(words), std::string::npos) << f.r.err;
  EXPECT_FALSE(f.out_exists) << "a refused sweep wrote its results file";
  EXPECT_TRUE(f.r.out.empty()) << f.r.out;
}

TEST(SweepPlacementRefusals, PlacementThatDoesNotDivideK) {
  expect_one_line_exit_2(sweep_refusal(with_nodes("3"), {"--launcher", "mpirun"}),
                         "'nodes[0]' 3 nodes do not divide world size 4");
}

TEST(SweepPlacementRefusals, MoreNodesThanTheHostfileHas) {
  ScratchDir dir("slurm-hostfile");
  std::ofstream(dir.file("hosts")) << "dpnode0 slots=4\ndpnode1 slots=4\n";
  expect_one_line_exit_2(sweep_refusal(with_nodes("4"), {"--hostfile", dir.file("hosts")}),
                         "small naive K=4 4x1 needs 4 nodes; hostfile");
}

TEST(SweepPlacementRefusals, MoreNodesThanTheAllocationHas) {
  expect_one_line_exit_2(sweep_refusal(with_nodes("4"), {},
                                       {"SLURM_JOB_ID=7", "SLURM_JOB_NUM_NODES=2", "SLURM_JOB_NODELIST=dpnode[0-1]",
                                        "SLURM_JOB_CPUS_PER_NODE=4(x2)"}),
                         "needs 4 nodes; the Slurm allocation (job 7: dpnode[0-1]");
}

TEST(SweepPlacementRefusals, SrunOutsideAnAllocation) {
  expect_one_line_exit_2(sweep_refusal(with_nodes("2"), {"--launcher", "srun"}),
                         "--launcher srun: not inside a Slurm allocation");
}

}  // namespace
}  // namespace dpscale::test
