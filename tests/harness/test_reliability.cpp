// test_reliability.cpp — the reliability of single `dpscale` commands: a failed run under
// mpirun is recorded with the trainer's own line, not mpirun's banner (crafted stderr, and a
// real mpirun job), and with no trainer line by mpirun's first message, not its closing hints;
// `compare --tolerance` refuses NaN, infinities and values out of [0, 1]; `compare --rerun`
// checks its config before the first verdict; `plot --out` an existing file, and `plot
// --format gif`, are one line and exit 2 with no directory made; a garbage `--hostfile` is
// refused before anything runs. Each with its control.
#include <gtest/gtest.h>

#include <filesystem>

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
  const std::string results = test::kSource + "/.ci/baseline/ci-cpu.jsonl";
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

// What Open MPI 4.1's mpirun printed for a hostfile it could not parse, two ranks asking: the
// parse error first, then an internal error, then the hint that closes aggregated help messages.
const std::string kHostfileParseError =
    "--------------------------------------------------------------------------\n"
    "Open RTE detected a parse error in the hostfile:\n"
    "    hf\n"
    "It occured on line number 1 on token 1.\n"
    "--------------------------------------------------------------------------\n"
    "--------------------------------------------------------------------------\n"
    "An internal error has occurred in ORTE:\n\n"
    "[[664,0],0] FORCE-TERMINATE AT (null):1 - error ../../../../../orte/mca/ras/base/ras_base_allocate.c(352)\n\n"
    "This is something that should be reported to the developers.\n"
    "--------------------------------------------------------------------------\n"
    "[vm:01234] 1 more process has sent help message help-hostfile.txt / parse_error\n"
    "[vm:01234] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / error messages\n";

TEST(HarnessReliability, AFailureOfMpirunItselfIsNamedByItsFirstMessage) {
  const SweepRun p = test::pt("small", "naive", 2);
  ProcessResult r;
  r.exit_code = 1;
  r.err = kHostfileParseError;
  EXPECT_EQ(judge_run(r, p.point, 10).reason,
            "exit status 1: Open RTE detected a parse error in the hostfile: hf It occured on line number 1 on token 1.");
  // The banner of a job whose rank died without a word only announces the block after it.
  r.err = kBanner.substr(0, kBanner.find("mpirun detected")) + "mpirun noticed that process rank 0 exited on signal 9.\n" +
          "--------------------------------------------------------------------------\n";
  EXPECT_EQ(judge_run(r, p.point, 10).reason, "exit status 1: mpirun noticed that process rank 0 exited on signal 9.");

  // The real thing: mpirun given a hostfile it cannot parse.
  ScratchDir dir;
  test::write_file(dir.file("hf"), "this is @@ garbage !!\n");
  ProcessOptions o;
  o.timeout_s = 60;
  const ProcessResult real = run_process({DPSCALE_MPIEXEC, "--allow-run-as-root", "--hostfile", dir.file("hf"), "-np", "1", "true"}, o);
  ASSERT_FALSE(real.timed_out);
  ASSERT_NE(real.exit_code, 0) << real.err;
  EXPECT_NE(judge_run(real, p.point, 60).reason.find("parse error in the hostfile"), std::string::npos) << real.err;
}

TEST(HarnessReliability, SweepRefusesAGarbageHostfileBeforeAnythingRuns) {
  ScratchDir dir;
  test::write_file(dir.file("c.json"), R"({"models": ["small"], "modes": ["single", "naive"], "world_sizes": [2]})");
  test::write_file(dir.file("hf"), "this is @@ garbage !!\n");
  const ProcessResult r =
      test::dpscale({"sweep", dir.file("c.json"), "--hostfile", dir.file("hf"), "--out", dir.file("out.jsonl")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("--hostfile: " + dir.file("hf") + ":1: 'is' is not KEY=VALUE"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.jsonl")));
  // Control: a hostfile Open MPI reads is taken (a dry run prints the runs).
  test::write_file(dir.file("hf"), "localhost slots=4\n");
  const ProcessResult ok = test::dpscale({"sweep", dir.file("c.json"), "--hostfile", dir.file("hf"), "--dry-run"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("--hostfile " + dir.file("hf")), std::string::npos) << ok.out;
}

// --rerun's config is read and checked before the first verdict, whether or not a rerun turns
// out to be needed: a missing one, or one that did not make NEW, is refused with no verdict.
TEST(HarnessReliability, CompareRerunChecksItsConfigBeforeAnyVerdict) {
  ScratchDir dir;
  std::string lines;
  for (const SweepRun& p : {test::pt("small", "single", 1), test::pt("small", "naive", 2)}) {
    lines += test::sweep_line(p, test::make_record(p, p.point.mode == Mode::single ? 1.0 : 0.6, p.point.mode == Mode::single ? std::nullopt : std::optional<double>(0.1)));
  }
  test::write_file(dir.file("new.jsonl"), lines);
  test::write_file(dir.file("base.jsonl"), lines);
  test::write_file(dir.file("other.json"), R"({"name": "other", "models": ["small"], "modes": ["single", "naive"], "world_sizes": [2]})");
  test::write_file(dir.file("test.json"), R"({"name": "test", "models": ["small"], "modes": ["single", "naive"], "world_sizes": [2]})");
  auto compare = [&](const std::string& config) {
    return test::dpscale({"compare", dir.file("new.jsonl"), dir.file("base.jsonl"), "--rerun", config});
  };
  const ProcessResult missing = compare(dir.file("nowhere.json"));
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_EQ(test::lines_of(missing.err).size(), 1u) << missing.err;
  EXPECT_NE(missing.err.find("--rerun"), std::string::npos) << missing.err;
  EXPECT_EQ(missing.out, "") << "no verdict";
  const ProcessResult other = compare(dir.file("other.json"));
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_EQ(test::lines_of(other.err).size(), 1u) << other.err;
  EXPECT_NE(other.err.find("new.jsonl:1 was made by config 'test', not 'other'"), std::string::npos) << other.err;
  EXPECT_EQ(other.out, "") << "no verdict";
  EXPECT_EQ(test::read_file(dir.file("new.jsonl")), lines);
  // Control: the config that made NEW passes the check, and the gate decides without a rerun.
  const ProcessResult ok = compare(dir.file("test.json"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("crude mode"), std::string::npos) << ok.out;
  EXPECT_EQ(test::read_file(dir.file("new.jsonl")), lines);
}

TEST(HarnessReliability, PlotRefusesAFormatBeforeMakingItsOutDirectory) {
  ScratchDir dir;
  const std::string results = test::kSource + "/.ci/baseline/ci-cpu.jsonl";
  test::write_file(dir.file("fake.py"), "import sys\nsys.exit(0)\n");
  for (const std::string format : {"gif", "png,gif", "png,png", ""}) {
    SCOPED_TRACE(format);
    const ProcessResult r =
        test::dpscale({"plot", results, "--out", dir.file("charts"), "--format", format, "--script", dir.file("fake.py")});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    ASSERT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("--format"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("charts"))) << "no output directory for a refused plot";
  }
  // Control: a format the plotter draws.
  const ProcessResult ok =
      test::dpscale({"plot", results, "--out", dir.file("charts"), "--format", "svg,pdf", "--script", dir.file("fake.py")});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("charts")));
}

}  // namespace
}  // namespace dpscale
