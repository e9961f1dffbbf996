// test_reliability.cpp — the reliability of single `dpscale` commands: a failed run under
// mpirun is recorded with the trainer's own line, not mpirun's banner (crafted stderr, and a
// real mpirun job); `compare --tolerance` refuses NaN, infinities and values out of [0, 1];
// `plot --out` an existing file is one line and exit 2. Each with its control.
#include <gtest/gtest.h>

#include "harness/sweep/run_outcome.h"
#include "harness_util.h"

namespace dpscale {
namespace {

using test::ScratchDir;

// What Open MPI 4.1's mpirun writes after a rank's own line when the ranks exit 2.
const std::string kBanner =
    "-------------------------------------------------------\n"
    "Primary job  terminated normally, but 1 process returned\n"
    "a non-zero exit code. Per user-direction, the job has been aborted.\n"
    "-------------------------------------------------------\n"
    "--------------------------------------------------------------------------\n"
    "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
    "the job to be terminated. The first process to do so was:\n\n"
    "  Process name: [[6402,1],0]\n  Exit code:    2\n"
    "--------------------------------------------------------------------------\n";

TEST(HarnessReliability, FailedMpirunRunIsRecordedWithTheTrainersLine) {
  const SweepRun p = test::pt("small", "naive", 2);
  ProcessResult r;
  r.exit_code = 2;
  r.err = "train_dp_naive: --batch-size 1000 is not divisible by the 3 ranks (each takes an equal contiguous shard)\n" +
          kBanner;
  EXPECT_EQ(judge_run(r, p.point, 10).reason,
            "exit status 2: train_dp_naive: --batch-size 1000 is not divisible by the 3 ranks (each takes an equal "
            "contiguous shard)");
  // A rank's line, with the banner of a job that MPI_Abort ended.
  r.exit_code = 1;
  r.err = "# banner\ntrain_ddp_bucketed (rank 1): collective timeout: barrier did not finish\n" + kBanner;
  EXPECT_EQ(judge_run(r, p.point, 10).reason, "exit status 1: train_ddp_bucketed (rank 1): collective timeout: barrier did not finish");
  // No trainer line at all (mpirun could not start them): the last line, as before.
  r.err = "mpirun was unable to launch the specified application\nno such file\n";
  EXPECT_EQ(judge_run(r, p.point, 10).reason, "exit status 1: no such file");
}

TEST(HarnessReliability, RealMpirunFailureNamesTheTrainersLine) {
  const std::vector<std::string> argv = {DPSCALE_MPIEXEC,  "--allow-run-as-root", "--oversubscribe",
                                         "-np",            "2",
                                         std::string(DPSCALE_BIN_DIR) + "/train_dp_naive",
                                         "--backend",      "cpu",
                                         "--epochs",       "0"};
  ProcessOptions o;
  o.timeout_s = 60;
  const ProcessResult r = run_process(argv, o);
  ASSERT_FALSE(r.timed_out);
  ASSERT_NE(r.exit_code, 0) << r.err;
  EXPECT_EQ(judge_run(r, test::pt("small", "naive", 2).point, 60).reason,
            "exit status " + std::to_string(r.exit_code) + ": train_dp_naive: --epochs must be at least 1 (got 0)")
      << r.err;
}

TEST(HarnessReliability, CompareToleranceMustBeFiniteAndInRange) {
  ScratchDir dir;
  // Files need not exist: the option is refused before anything is read.
  for (const std::string bad : {"nan", "NaN", "inf", "-inf", "-0.1", "1.5", "ten"}) {
    SCOPED_TRACE(bad);
    const ProcessResult r = test::dpscale({"compare", dir.file("a.jsonl"), dir.file("b.jsonl"), "--tolerance", bad});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    const auto lines = test::lines_of(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_NE(lines[0].find("--tolerance"), std::string::npos) << lines[0];
    EXPECT_EQ(r.out, "");
  }
  // Control: a valid tolerance gets as far as reading the (missing) files.
  const ProcessResult r = test::dpscale({"compare", dir.file("a.jsonl"), dir.file("b.jsonl"), "--tolerance", "0.1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("--tolerance"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a.jsonl"), std::string::npos) << r.err;
}

TEST(HarnessReliability, PlotOutAnExistingFileIsOneLine) {
  ScratchDir dir;
  const std::string results = test::kSource + "/results/baselines/ci-cpu.jsonl";
  test::write_file(dir.file("taken"), "not a directory");
  test::write_file(dir.file("fake.py"), "import sys\nsys.exit(0)\n");
  const ProcessResult r = test::dpscale({"plot", results, "--out", dir.file("taken"), "--script", dir.file("fake.py")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto lines = test::lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0], "dpscale: plot --out '" + dir.file("taken") + "' is a file, not a directory");
  EXPECT_EQ(test::read_file(dir.file("taken")), "not a directory") << "the file is left alone";
  // A directory that cannot be made (its parent is that file): one line too.
  const ProcessResult r2 =
      test::dpscale({"plot", results, "--out", dir.file("taken") + "/sub", "--script", dir.file("fake.py")});
  EXPECT_EQ(r2.exit_code, 2) << r2.err;
  ASSERT_EQ(test::lines_of(r2.err).size(), 1u) << r2.err;
  EXPECT_NE(r2.err.find("plot --out: cannot create directory"), std::string::npos) << r2.err;
  // Control: a fresh directory works with the same fake plotter.
  const ProcessResult ok = test::dpscale({"plot", results, "--out", dir.file("charts"), "--script", dir.file("fake.py")});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

}  // namespace
}  // namespace dpscale
