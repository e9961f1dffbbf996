// test_dp_diagnosis.cpp — issue 9 through the real trainers under mpirun -np 2 (CPU, MPI): each
// injected bottleneck is named by the record's `bottleneck` label, and the diagnosis options
// change nothing but timing (bit-identical weights with them on and off).
//
//   slow link (interleaved, eth10 dilated ×300)        -> communication
//   --inject-delay 1:150 (bucketed; and 0:150)          -> straggler, straggler_rank 1 (0)
//   --loader-delay-ms 150 (naive)                       -> loader; --prefetch 4 hides most of it
//   small model, 8192 rows per rank, no link (bucketed) -> compute
// The runs are short (tiny model, 4 steps) and the assertions are relations with margins, not
// absolute times: the 2-core machine is shared and noisy.
//
// Run: ctest -R DpDiagnosis --output-on-failure
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dp_support.h"

namespace dpscale::test {
namespace {

// 2048 samples / 512 = 4 steps per epoch, one epoch, one warm-up step.
const std::vector<std::string> kTiny = {"--backend", "cpu", "--model", kTinyModel, "--samples", "2048",
                                        "--batch-size", "512", "--epochs", "1", "--warmup-steps", "1", "--quiet"};

nlohmann::json np2(const std::string& exe, const std::vector<std::string>& args) {
  return record_of(mpirun_argv(2, exe, args), 180);
}

TEST(DpDiagnosis, SlowLinkIsCommunication) {
  const auto j = np2("train_dp_interleaved", kTiny + std::vector<std::string>{"--link", "eth10", "--link-dilation", "300"});
  SCOPED_TRACE(j.dump());
  EXPECT_EQ(j["bottleneck"], "communication");
  EXPECT_TRUE(j["straggler_rank"].is_null());
  EXPECT_EQ(j["diagnosis"].get<std::string>().rfind("communication-bound: ", 0), 0u);
  // Each rank waited for the link: six calls × 2·α·F = 180 ms per step at least.
  for (double w : j["per_rank_wait_s"].get<std::vector<double>>()) EXPECT_GT(w, 4 * 0.150);
}

TEST(DpDiagnosis, InjectedDelayIsAStragglerOnThatRank) {
  for (int rank : {1, 0}) {
    const auto j = np2("train_ddp_bucketed", kTiny + std::vector<std::string>{"--inject-delay", std::to_string(rank) + ":150"});
    SCOPED_TRACE(j.dump());
    EXPECT_EQ(j["bottleneck"], "straggler");
    ASSERT_FALSE(j["straggler_rank"].is_null());
    EXPECT_EQ(j["straggler_rank"], rank);
    EXPECT_EQ(j["inject_delay"], std::to_string(rank) + ":150");
    const auto c = j["per_rank_compute_s"].get<std::vector<double>>();
    const auto w = j["per_rank_wait_s"].get<std::vector<double>>();
    const int other = 1 - rank;
    // 4 steps × 150 ms of sleep inside the slow rank's compute, and the other rank waits for it.
    EXPECT_GT(c[rank] - c[other], 0.8 * 4 * 0.150);
    EXPECT_GT(w[other] - w[rank], 0.8 * 4 * 0.150);
  }
}

TEST(DpDiagnosis, StarvedLoaderIsLoaderAndPrefetchHidesIt) {
  const auto starved = np2("train_dp_naive", kTiny + std::vector<std::string>{"--loader-delay-ms", "150"});
  SCOPED_TRACE(starved.dump());
  EXPECT_EQ(starved["bottleneck"], "loader");
  EXPECT_TRUE(starved["straggler_rank"].is_null());
  EXPECT_GT(starved["loader_s"].get<double>(), 0.9 * 4 * 0.150);  // every batch waits its fetch
  EXPECT_EQ(starved["loader_delay_ms"], 150.0);

  // Four fetches in flight while the step runs: a batch every 37.5 ms instead of 150.
  const auto hidden = np2("train_dp_naive", kTiny + std::vector<std::string>{"--loader-delay-ms", "150", "--prefetch", "4"});
  SCOPED_TRACE(hidden.dump());
  EXPECT_EQ(hidden["prefetch"], 4);
  EXPECT_LT(hidden["loader_s"].get<double>(), 0.6 * starved["loader_s"].get<double>());
  EXPECT_LT(hidden["avg_epoch_s"].get<double>(), starved["avg_epoch_s"].get<double>());
}

TEST(DpDiagnosis, BigComputeOnNoLinkIsCompute) {
  // The small preset with 8192 rows per rank: ~70 GFLOP of compute per step against a 5.8 MB
  // all-reduce that bucketing overlaps with backward.
  const auto j = np2("train_ddp_bucketed", {"--backend", "cpu", "--model", "small", "--samples", "32768",
                                            "--batch-size", "16384", "--epochs", "1", "--warmup-steps", "1", "--quiet"});
  SCOPED_TRACE(j.dump());
  EXPECT_EQ(j["bottleneck"], "compute");
  EXPECT_TRUE(j["straggler_rank"].is_null());
  EXPECT_EQ(j["diagnosis"].get<std::string>().rfind("compute-bound: ", 0), 0u);
  EXPECT_EQ(j["link"], "none");
}

// The per-rank lists have one entry per rank, and compute + wait stays within the epoch.
TEST(DpDiagnosis, PerRankTimesAreConsistent) {
  const auto j = np2("train_dp_interleaved", kTiny);
  SCOPED_TRACE(j.dump());
  const auto c = j["per_rank_compute_s"].get<std::vector<double>>();
  const auto w = j["per_rank_wait_s"].get<std::vector<double>>();
  const auto e = j["per_rank_epoch_s"].get<std::vector<double>>();
  ASSERT_EQ(c.size(), 2u);
  ASSERT_EQ(w.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_GT(c[r], 0.0);
    EXPECT_GE(w[r], 0.0);
    EXPECT_LE(c[r] + w[r], e[r] * 1.01);
  }
  // Per-tensor bandwidth (interleaved): one unit per tensor, the bytes of the step in all.
  const auto units = j["allreduce_unit_bytes"].get<std::vector<int64_t>>();
  const auto busbw = j["bucket_busbw_gbps"].get<std::vector<double>>();
  EXPECT_EQ(units.size(), 6u);
  ASSERT_EQ(busbw.size(), units.size());
  int64_t sum = 0;
  for (int64_t u : units) sum += u;
  EXPECT_EQ(sum, j["allreduce_bytes_per_step"].get<int64_t>());
  for (double g : busbw) EXPECT_GT(g, 0.0);
  EXPECT_EQ(j["loader_s"], 0.0);
  EXPECT_EQ(j["inject_delay"], "");
  EXPECT_EQ(j["triad_steps"], 0);
  EXPECT_TRUE(j["overlap_pct"].is_null());
}

// The triad on a link so slow that compute cannot hide it: naive, which overlaps nothing by
// construction, shows (almost) no overlap, and the record's numbers obey their formulas.
TEST(DpDiagnosis, TriadOfNaiveOnASlowLink) {
  const auto j = np2("train_dp_naive", kTiny + std::vector<std::string>{"--link", "eth10", "--link-dilation", "300",
                                                                        "--triad", "3"});
  SCOPED_TRACE(j.dump());
  EXPECT_EQ(j["triad_steps"], 3);
  const double step = j["triad_step_s"].get<double>(), compute = j["compute_only_step_s"].get<double>();
  const double comm = j["comm_only_step_s"].get<double>(), exposed = j["exposed_comm_step_s"].get<double>();
  EXPECT_NEAR(exposed, step - compute, 1e-9);
  EXPECT_NEAR(j["overlap_pct"].get<double>(), 100.0 * std::max(0.0, std::min(1.0, 1.0 - exposed / comm)), 1e-6);
  // Six all-reduces, each held at least 2·α·F = 2 · 50 µs · 300 = 30 ms: comm-only covers them.
  EXPECT_GT(comm, 6 * 0.030 * 0.95);
  EXPECT_LT(compute, comm);
  EXPECT_LT(j["overlap_pct"].get<double>(), 25.0);
  // The epochs' own numbers are untouched by the triad that followed them.
  EXPECT_EQ(j["steps"], 4);
}

TEST(DpDiagnosis, BadDiagnosisOptionsExit2WithOneLine) {
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--inject-delay", "2:150"},  // K = 2: ranks 0 and 1
           {"--inject-delay", "fast"},
           {"--inject-delay", "1:0"},
           {"--loader-delay-ms", "-1"},
           {"--prefetch", "65"},
           {"--trace", "/no/such/dir/t.json"},
           {"--trace", "t.json", "--trace-steps", "5:3"}}) {
    const auto argv = mpirun_argv(2, "train_dp_naive", kTiny + bad);
    const ProcessResult r = run(argv, 120);
    ASSERT_FALSE(r.timed_out) << describe(argv, r);
    EXPECT_EQ(r.exit_code, 2) << describe(argv, r);
    EXPECT_EQ(count_results_lines(r.out), 0) << describe(argv, r);
    EXPECT_NE(r.err.find(bad[0]), std::string::npos) << "the refusal names the option\n" << describe(argv, r);
  }
}

}  // namespace
}  // namespace dpscale::test
