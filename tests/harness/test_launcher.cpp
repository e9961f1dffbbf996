// test_launcher.cpp — the command line of each run (mpirun flags for root and oversubscription,
// no mpirun for single runs, user arguments taking precedence), the dry run of the CI config,
// the progress estimate, and the table formats.
#include <gtest/gtest.h>
#include <unistd.h>

#include "harness/sweep/launcher.h"
#include "harness/sweep/progress.h"
#include "harness/common/table.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using V = std::vector<std::string>;

TEST(HarnessLauncher, OpenMpiGetsRootAndOversubscribeFlags) {
  LaunchOptions l;
  l.as_root = true;
  EXPECT_EQ(launch_argv(l, "/b/train_dp_naive", Mode::naive, 4, {"--model", "small"}),
            (V{"mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", "4", "/b/train_dp_naive",
               "--model", "small"}));
  l.as_root = false;
  EXPECT_EQ(launch_argv(l, "/b/train_dp_naive", Mode::naive, 2, {}),
            (V{"mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", "/b/train_dp_naive"}));
}

TEST(HarnessLauncher, SingleRunsAndLauncherNoneStartTheTrainerDirectly) {
  LaunchOptions l;
  EXPECT_EQ(launch_argv(l, "/b/train_single_gpu", Mode::single, 1, {"--epochs", "1"}), (V{"/b/train_single_gpu", "--epochs", "1"}));
  l.launcher = "none";
  EXPECT_EQ(launch_argv(l, "/b/train_ddp_bucketed", Mode::bucketed, 2, {}), (V{"/b/train_ddp_bucketed"}));
}

TEST(HarnessLauncher, UserArgumentsWinAndOtherMpisGetOnlyNp) {
  LaunchOptions l;
  l.as_root = true;
  l.hostfile = "hosts";
  l.mpirun_args = {"--bind-to", "core", "--allow-run-as-root", "--map-by", "node"};
  EXPECT_EQ(launch_argv(l, "x", Mode::naive, 8, {}),
            (V{"mpirun", "--oversubscribe", "--hostfile", "hosts", "--bind-to", "core", "--allow-run-as-root", "--map-by",
               "node", "-np", "8", "x"}));
  LaunchOptions mpich;
  mpich.open_mpi = false;
  mpich.as_root = true;
  mpich.mpirun = "mpiexec";
  EXPECT_EQ(launch_argv(mpich, "x", Mode::interleaved, 2, {}), (V{"mpiexec", "-np", "2", "x"}));
}

TEST(HarnessLauncher, DryRunPrintsEveryCommandOfTheCiConfig) {
  const ProcessResult r = test::dpscale({"sweep", test::kSource + "/configs/ci.json", "--dry-run", "--bin-dir", "/opt/b", "--repeats", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = test::lines_of(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0].rfind("/opt/b/train_single_gpu --model small ", 0), 0u) << lines[0];
  const std::string root = ::geteuid() == 0 ? "--allow-run-as-root " : "";
  EXPECT_EQ(lines[1].rfind("mpirun " + root + "--oversubscribe --bind-to none -np 2 /opt/b/train_dp_naive --model small ", 0), 0u)
      << lines[1];
  EXPECT_NE(lines[3].find("/opt/b/train_ddp_bucketed "), std::string::npos);
  EXPECT_NE(lines[3].find(" --link 50:300 --link-dilation auto:19.5 --bucket-cap-mb 25"), std::string::npos) << lines[3];
  const ProcessResult none = test::dpscale({"sweep", test::kSource + "/configs/ci.json", "--dry-run", "--launcher", "none"});
  EXPECT_EQ(none.out.find("mpirun"), std::string::npos) << none.out;
  const ProcessResult capped =
      test::dpscale({"sweep", test::kSource + "/configs/workshop.json", "--dry-run", "--max-world-size", "2"});
  EXPECT_EQ(test::lines_of(capped.out).size(), 16u) << "4 models x (single + 3 modes at K=2)";
}

TEST(HarnessProgress, EstimateFitsStartupPlusSizeTerm) {
  Progress p({1, 1, 10, 10});
  EXPECT_LT(p.eta_s(0), 0) << "nothing finished, nothing known";
  p.finished(0, 2.0);
  p.finished(1, 2.0);
  EXPECT_DOUBLE_EQ(p.eta_s(2), 40.0) << "one size seen so far: proportional to weight";
  p.finished(2, 11.0);  // t = 1 + 1·w fits (1, 2), (1, 2), (10, 11)
  EXPECT_NEAR(p.eta_s(3), 11.0, 1e-9);
  EXPECT_EQ(p.starting(3, "large naive K=2", 75), "[4/4] large naive K=2  (elapsed 1m15s, about 11s left)");
  EXPECT_EQ(fmt_duration(3725), "1h02m");
  EXPECT_EQ(fmt_duration(9.4), "9s");
  EXPECT_EQ(model_weight("small"), 1462538.0);
  EXPECT_EQ(model_weight("784,10"), 7850.0);
}

// A session that adds rounds (dpscale ab) adds their runs: counted on from the runs before them,
// and estimated from those runs' times.
TEST(HarnessProgress, RunsAddedLaterAreCountedOnAndEstimated) {
  Progress p({1, 1});
  p.finished(0, 2.0);
  p.finished(1, 2.0);
  EXPECT_DOUBLE_EQ(p.eta_s(2), 0.0) << "everything planned has run";
  p.add({1, 1, 1});
  EXPECT_DOUBLE_EQ(p.eta_s(2), 6.0);
  EXPECT_EQ(p.starting(2, "small naive K=2", 4), "[3/5] small naive K=2  (elapsed 4s, about 6s left)");
}

TEST(HarnessTable, FormatsAndAlignment) {
  EXPECT_EQ(fmt_thousands(908941.4), "908,941");
  EXPECT_EQ(fmt_thousands(999), "999");
  EXPECT_EQ(fmt_params(1462538), "1.5M");
  EXPECT_EQ(fmt_params(35211786), "35.2M");
  EXPECT_EQ(fmt_signed_percent(-0.1234), "-12.3%");
  EXPECT_EQ(fmt_signed_percent(0.05), "+5.0%");
  Table t;
  t.header = {"a", "γ"};
  t.right = {false, true};
  t.rows = {{"xyz", "1.00×"}};
  EXPECT_EQ(t.markdown(), "| a   |     γ |\n| --- | ----: |\n| xyz | 1.00× |\n");
  t.rows = {{"has,comma", "q\"uote"}};
  EXPECT_EQ(t.csv(), "a,γ\n\"has,comma\",\"q\"\"uote\"\n");
}

}  // namespace
}  // namespace dpscale
