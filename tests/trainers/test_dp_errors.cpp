// test_dp_errors.cpp — the data-parallel trainers fail cleanly and never hang.
//
// Bad input (non-divisible batch, a bucket cap of 0 or below, an unknown link, an absurd link
// dilation, no mpirun, a --trace that cannot be written, replicas with different weights, ranks
// launched with different options —
// --seed included, as it draws the data —, a file only one rank cannot read): exit status 2
// and exactly one line from our program naming the problem (mpirun adds its own banner to
// stderr, which we ignore). Every run has a timeout that must not fire.
//
// A rank killed with SIGKILL mid-run: the whole job ends within 30 s, non-zero, no survivor.
//
// What Open MPI 4.1's mpirun does, found out here and asserted: when every rank exits with 2
// (without MPI_Abort), mpirun prints "Primary job terminated normally, but 1 process returned a
// non-zero exit code" and exits with 2 itself — the status of the first rank that failed.
// When a rank is killed by SIGKILL mid-run, mpirun kills the others and exits non-zero
// (137 = 128 + 9 on this machine).
//
// Run: ctest -R DpErrors --output-on-failure
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dp_support.h"
#include "proc_util.h"

namespace dpscale::test {
namespace {

// The CPU backend: these are MPI jobs (on a GPU node they would otherwise take NCCL).
const std::vector<std::string> kSmallRun = {"--backend", "cpu", "--model", kTinyModel, "--samples", "2048",
                                            "--batch-size", "256", "--max-steps", "3", "--quiet"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Exit 2, no hang, no record, and exactly one line of ours, which contains `what`. Under mpirun
// the exit status checked is mpirun's own: 2, passed on from the ranks (see the header).
void expect_one_line_exit_2(const std::vector<std::string>& argv, const std::string& exe, const std::string& what) {
  const ProcessResult r = run(argv, 60);
  ASSERT_FALSE(r.timed_out) << "hung:\n" << describe(argv, r);
  EXPECT_EQ(r.term_signal, 0) << describe(argv, r);
  EXPECT_EQ(r.exit_code, 2) << describe(argv, r);
  EXPECT_EQ(count_results_lines(r.out), 0) << describe(argv, r);
  const auto lines = our_lines(r.err, exe);
  ASSERT_EQ(lines.size(), 1u) << "want exactly one line from " << exe << ":\n" << describe(argv, r);
  EXPECT_NE(lines[0].find(what), std::string::npos) << "the line should say '" << what << "': " << lines[0];
  EXPECT_EQ(count_occurrences(r.err, what), 1) << describe(argv, r);
}

TEST(DpErrors, BatchNotDivisibleByRanks) {
  // 1000 = 3·333 + 1: no equal contiguous shards. Every rank finds it; rank 0 alone says so.
  expect_one_line_exit_2(mpirun_argv(3, "train_dp_naive", {"--backend", "cpu", "--model", kTinyModel, "--samples",
                                                           "2048", "--batch-size", "1000", "--max-steps", "3", "--quiet"}),
                         "train_dp_naive", "--batch-size 1000 is not divisible by the 3 ranks");
}

TEST(DpErrors, BucketCapZeroOrNegative) {
  for (const std::string cap : {"0", "-1"}) {
    SCOPED_TRACE("--bucket-cap-mb " + cap);
    expect_one_line_exit_2(mpirun_argv(2, "train_ddp_bucketed", with(kSmallRun, {"--bucket-cap-mb", cap})),
                           "train_ddp_bucketed", "--bucket-cap-mb must be a positive number");
  }
  expect_one_line_exit_2(mpirun_argv(2, "train_ddp_bucketed", with(kSmallRun, {"--first-bucket-mb", "0"})),
                         "train_ddp_bucketed", "--first-bucket-mb must be a positive number");
}

TEST(DpErrors, UnknownLink) {
  expect_one_line_exit_2(mpirun_argv(2, "train_dp_interleaved", with(kSmallRun, {"--link", "carrier-pigeon"})),
                         "train_dp_interleaved", "unknown link 'carrier-pigeon'");
}

TEST(DpErrors, AbsurdLinkDilation) {
  // F = 1e300 once overflowed the comm thread's deadline into the past: the record said
  // dilation 1e300 while no all-reduce was held at all. Now it is refused up front.
  expect_one_line_exit_2(mpirun_argv(2, "train_dp_naive", with(kSmallRun, {"--link", "eth10", "--link-dilation", "1e300"})),
                         "train_dp_naive", "--link-dilation: '1e300' is above 1e6");
}

// A --trace that cannot be written ends every rank before any training (the path is checked as
// the options are parsed, on every rank), with one line: no banner, no record.
TEST(DpErrors, AnUnwritableTraceEndsEveryRankBeforeTraining) {
  const std::vector<std::string> argv =
      mpirun_argv(2, "train_dp_interleaved", with(kSmallRun, {"--trace", "/proc/dpscale-trace.json"}));
  expect_one_line_exit_2(argv, "train_dp_interleaved", "--trace: cannot create '/proc/dpscale-trace.json'");
  const ProcessResult r = run(argv, 60);
  EXPECT_EQ(r.err.find("#   model"), std::string::npos) << "refused before the set-up's banner:\n" << describe(argv, r);
}

// --share-gpu where it makes no sense: the CPU backend (MPI ranks share no GPU) and hier (an MPI
// algorithm; NCCL sums a shared GPU's ranks). Refused before any collective, also on a machine
// without a GPU (the option rules run before the device is made). The same runs without
// --share-gpu train (the first) or are refused for hier's own reason (controls: the refusal is
// the option's).
TEST(DpErrors, ShareGpuWhereThereIsNoGpuToShare) {
  expect_one_line_exit_2(mpirun_argv(2, "train_dp_naive", with(kSmallRun, {"--share-gpu"})), "train_dp_naive",
                         "--share-gpu shares a GPU between NCCL ranks: it does not combine with --backend cpu");
  const std::vector<std::string> cuda_hier = {"--backend", "cuda", "--model", kTinyModel, "--samples", "2048",
                                              "--batch-size", "256", "--max-steps", "3", "--quiet", "--allreduce", "hier"};
  expect_one_line_exit_2(mpirun_argv(2, "train_dp_naive", with(cuda_hier, {"--share-gpu"})), "train_dp_naive",
                         "--share-gpu does not combine with --allreduce hier");
  EXPECT_EQ(record_of(mpirun_argv(2, "train_dp_naive", kSmallRun), 60)["gpu_shared"], false);
}

TEST(DpErrors, StartedWithoutMpirun) {
  for (const std::string exe : {"train_dp_naive", "train_dp_interleaved", "train_ddp_bucketed"}) {
    SCOPED_TRACE(exe);
    expect_one_line_exit_2(with({bin(exe)}, kSmallRun), exe, "must be launched by mpirun");
  }
}

// mpirun -np 1 X --init a : -np 1 X --init b — two replicas that start from different weights.
std::vector<std::string> mpmd(const std::string& exe, const std::vector<std::string>& args0,
                              const std::vector<std::string>& args1) {
  std::vector<std::string> argv = mpirun_argv(1, exe, args0);
  argv.insert(argv.end(), {":", "-np", "1", bin(exe)});
  argv.insert(argv.end(), args1.begin(), args1.end());
  return argv;
}

TEST(DpErrors, ReplicasWithDifferentWeights) {
  ScratchDir dir("mismatch");
  write_random_checkpoint(dir.file("a.safetensors"), kTinyModel, 1);
  write_random_checkpoint(dir.file("b.safetensors"), kTinyModel, 2);
  expect_one_line_exit_2(mpmd("train_dp_naive", with(kSmallRun, {"--init", dir.file("a.safetensors")}),
                              with(kSmallRun, {"--init", dir.file("b.safetensors")})),
                         "train_dp_naive", "replica weights differ at start-up: rank 1");
  // Different --seed without --init: the same check catches it.
  expect_one_line_exit_2(mpmd("train_dp_interleaved", with(kSmallRun, {"--seed", "1"}), with(kSmallRun, {"--seed", "2"})),
                         "train_dp_interleaved", "replica weights differ at start-up");
}

TEST(DpErrors, RanksWithDifferentOptions) {
  const std::string what = "rank 1 was launched with different options from rank 0";
  expect_one_line_exit_2(mpmd("train_dp_naive", kSmallRun, with(kSmallRun, {"--lr", "0.02"})), "train_dp_naive", what);
  // A difference in the 7th significant digit counts too (the fingerprint once printed 6).
  expect_one_line_exit_2(mpmd("train_dp_naive", with(kSmallRun, {"--lr", "0.01"}), with(kSmallRun, {"--lr", "0.0100001"})),
                         "train_dp_naive", what);
  // Same --init, so equal weights, but another --seed: the synthetic data would differ per rank.
  ScratchDir dir("seed");
  write_random_checkpoint(dir.file("a.safetensors"), kTinyModel, 1);
  const auto init = with(kSmallRun, {"--init", dir.file("a.safetensors")});
  expect_one_line_exit_2(mpmd("train_dp_interleaved", with(init, {"--seed", "1"}), with(init, {"--seed", "2"})),
                         "train_dp_interleaved", what);
}

TEST(DpErrors, OnlyOneRankCannotReadItsInit) {
  // Rank 1 alone fails; it prints (naming itself), rank 0 stays silent, all exit 2.
  ScratchDir dir("one-bad");
  write_random_checkpoint(dir.file("a.safetensors"), kTinyModel, 1);
  expect_one_line_exit_2(mpmd("train_dp_naive", with(kSmallRun, {"--init", dir.file("a.safetensors")}),
                              with(kSmallRun, {"--init", dir.file("missing.safetensors")})),
                         "train_dp_naive", "(rank 1): --init: cannot open");
}

// --- a rank killed mid-run -------------------------------------------------------------------

struct KillCase {
  std::string name;
  std::string exe;
  int victim;  // the rank to kill
  std::vector<std::string> extra;
};

void PrintTo(const KillCase& c, std::ostream* os) { *os << c.name; }

class DpRankDeath : public ::testing::TestWithParam<KillCase> {};

TEST_P(DpRankDeath, JobEndsWithinBoundedTime) {
  const KillCase c = GetParam();
  // Long enough never to finish on its own (10^5 epochs of 8 steps); the 120 s timeout is the
  // test's guard against a hang and must not be what ends it.
  std::vector<std::string> args = {"--backend", "cpu", "--model", kTinyModel, "--samples", "2048", "--batch-size",
                                   "256", "--epochs", "100000", "--quiet"};
  args.insert(args.end(), c.extra.begin(), c.extra.end());
  const auto argv = mpirun_argv(2, c.exe, args);
  // mpirun on a thread of its own (proc_util.h); on any early return the job's destructor ends
  // the ranks and mpirun, so nothing the test started outlives it.
  MpiJob job(argv, 120);
  ASSERT_TRUE(job.find_ranks(2, "train_d")) << "did not find the 2 ranks of mpirun";
  const pid_t victim = job.rank_pid(c.victim), survivor = job.rank_pid(1 - c.victim);
  ASSERT_TRUE(victim > 0 && survivor > 0) << "could not tell rank " << c.victim << " by OMPI_COMM_WORLD_RANK";
  // Let start-up finish: training is under way after well under a second on this model.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_TRUE(alive(victim) && alive(survivor)) << "the run ended before the kill";

  const auto killed_at = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  const ProcessResult result = job.join();
  const double after_kill = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();

  EXPECT_FALSE(result.timed_out) << "the job hung after rank " << c.victim << " died:\n" << describe(argv, result);
  EXPECT_LT(after_kill, 30.0) << describe(argv, result);
  EXPECT_TRUE(result.exit_code != 0 || result.term_signal != 0) << "a dead rank must fail the job\n"
                                                                 << describe(argv, result);
  EXPECT_EQ(count_results_lines(result.out), 0) << describe(argv, result);
  const char left = still_there_after(survivor, 5.0);
  EXPECT_EQ(left, 0) << "the surviving rank " << survivor << " outlived the job by 5 s (the value is its state)";
  if (left != 0) ::kill(survivor, SIGKILL);
  std::printf("%s: killed rank %d; mpirun exited %d (signal %d) %.2f s later\n", c.name.c_str(), c.victim,
              result.exit_code, result.term_signal, after_kill);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, DpRankDeath,
    ::testing::Values(KillCase{"interleaved_rank1", "train_dp_interleaved", 1, {}},
                      KillCase{"naive_rank0", "train_dp_naive", 0, {}},
                      // The survivor is inside an emulated all-reduce's hold most of the time.
                      KillCase{"bucketed_rank1_eth10", "train_ddp_bucketed", 1, {"--link", "eth10", "--link-dilation", "20"}}),
    [](const ::testing::TestParamInfo<KillCase>& i) { return i.param.name; });

}  // namespace
}  // namespace dpscale::test
