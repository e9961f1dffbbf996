// test_diagnosis_units.cpp — the diagnosis's pieces without MPI: the bottleneck rule (diagnosis.h) on
// numbers chosen to sit on each side of its threshold, which steps keep the call log on a GPU
// (call_log_sampling.h), and the loader (loader.h): the rows it
// hands out, in training order, with and without prefetching, and that prefetching hides the
// fetch time behind a step's.
//
// Run: ctest -R DiagnosisUnits --output-on-failure
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include "trainers/diagnosis/call_log_sampling.h"
#include "trainers/diagnosis/diagnosis.h"
#include "trainers/loader.h"

namespace dpscale {
namespace {

DiagnosisInput two_ranks(RankStep a, RankStep b, double step, double busy = 0.0) {
  DiagnosisInput in;
  in.ranks = {a, b};
  in.step_s = step;
  in.busy_s = busy;
  in.data_parallel = true;
  return in;
}

// The steps that keep the call log on a GPU: the first (a run of a few steps still has its
// per-bucket bandwidth), then one in eight; every step where asked (the CPU, --trace).
TEST(CallLogSampling, FirstStepThenOneInEightUnlessEveryStep) {
  std::vector<int64_t> sampled, every;
  for (int64_t i = 0; i < 20; ++i) {
    if (call_log_on(i, false)) sampled.push_back(i);
    if (call_log_on(i, true)) every.push_back(i);
  }
  EXPECT_EQ(sampled, (std::vector<int64_t>{0, 8, 16}));
  EXPECT_EQ(every.size(), 20u);
}

TEST(DiagnosisRule, ComputeWhenNothingExposedReachesTheShare) {
  // 20% comm, 10% loader, 5% imbalance: all under 25%.
  const Diagnosis d = diagnose(two_ranks({0.65, 0.20, 0.10}, {0.60, 0.25, 0.10}, 1.0, 0.5));
  EXPECT_EQ(d.bottleneck, "compute");
  EXPECT_FALSE(d.straggler_rank);
  EXPECT_NEAR(d.comm_share, 0.20, 1e-12);  // the slower rank's wait, not the other's 0.25
  EXPECT_NE(d.line.find("compute-bound"), std::string::npos);
}

TEST(DiagnosisRule, CommunicationFromTheLastArrivingRanksWait) {
  const Diagnosis d = diagnose(two_ranks({0.30, 0.60, 0.0}, {0.31, 0.59, 0.0}, 1.0, 0.9));
  EXPECT_EQ(d.bottleneck, "communication");
  EXPECT_NEAR(d.comm_share, 0.59, 1e-12);
  EXPECT_NE(d.line.find("59% of the"), std::string::npos) << d.line;
  EXPECT_NE(d.line.find("γ = 2.95"), std::string::npos) << d.line;  // 0.9 / 0.305
}

TEST(DiagnosisRule, StragglerIsNotMistakenForCommunication) {
  // Rank 0 waits 0.5 s for rank 1, which computes 0.5 s longer and then waits only 0.02 s.
  const Diagnosis d = diagnose(two_ranks({0.1, 0.52, 0.0}, {0.6, 0.02, 0.0}, 0.65));
  EXPECT_EQ(d.bottleneck, "straggler");
  ASSERT_TRUE(d.straggler_rank);
  EXPECT_EQ(*d.straggler_rank, 1);
  EXPECT_LT(d.comm_share, 0.05);
}

// The others' compute is skewed on purpose, so that their median and their mean differ: a rule
// that measured the imbalance against the mean (or any other centre) gives another share.
// The straggler rule found the slow rank contended (its extra compute matched by its run delay):
// the imbalance that bounds the step is the machine's, labelled `contended`, with no straggler
// rank. Negative control: another rank contended leaves the slow one a straggler.
TEST(DiagnosisRule, AContendedSlowRankIsLabelledContended) {
  DiagnosisInput in = two_ranks({0.1, 0.52, 0.0}, {0.6, 0.02, 0.0}, 0.65);
  in.contended_rank = 1;
  Diagnosis d = diagnose(in);
  EXPECT_EQ(d.bottleneck, "contended");
  EXPECT_FALSE(d.straggler_rank);
  EXPECT_EQ(d.line.rfind("contended: rank 1 computes 500.0 ms (77% of the step) longer", 0), 0u) << d.line;
  in.contended_rank = 0;
  d = diagnose(in);
  EXPECT_EQ(d.bottleneck, "straggler");
  ASSERT_TRUE(d.straggler_rank);
  EXPECT_EQ(*d.straggler_rank, 1);
}

TEST(DiagnosisRule, StragglerAmongFourIsTheArgmaxAgainstTheOthersMedian) {
  DiagnosisInput in;
  in.ranks = {{0.10, 0.4, 0}, {0.16, 0.34, 0}, {0.50, 0.01, 0}, {0.10, 0.4, 0}};
  in.step_s = 0.52;
  const Diagnosis d = diagnose(in);
  EXPECT_EQ(d.bottleneck, "straggler");
  ASSERT_TRUE(d.straggler_rank);
  EXPECT_EQ(*d.straggler_rank, 2);
  // Others {0.10, 0.16, 0.10}: median 0.10, so (0.50 − 0.10) / 0.52 = 0.40 / 0.52 = 0.76923;
  // their mean 0.12 would give 0.38 / 0.52 = 0.73077.
  EXPECT_NEAR(d.straggler_share, 0.40 / 0.52, 1e-12);
}

TEST(DiagnosisRule, StragglerAmongFiveAgainstTheMiddlePairOfTheOthers) {
  DiagnosisInput in;
  in.ranks = {{0.30, 0.3, 0}, {0.10, 0.5, 0}, {0.12, 0.5, 0}, {0.60, 0.01, 0}, {0.10, 0.5, 0}};
  in.step_s = 0.62;
  const Diagnosis d = diagnose(in);
  EXPECT_EQ(d.bottleneck, "straggler");
  ASSERT_TRUE(d.straggler_rank);
  EXPECT_EQ(*d.straggler_rank, 3);
  // Others sorted {0.10, 0.10, 0.12, 0.30}: median (0.10 + 0.12) / 2 = 0.11, so
  // (0.60 − 0.11) / 0.62 = 0.49 / 0.62 = 0.79032. Their mean 0.155 would give 0.445 / 0.62 =
  // 0.71774; the upper middle value 0.12, 0.48 / 0.62 = 0.77419; the lower 0.10, 0.50 / 0.62.
  EXPECT_NEAR(d.straggler_share, 0.49 / 0.62, 1e-12);
}

TEST(DiagnosisRule, LoaderAndTheThreshold) {
  EXPECT_EQ(diagnose(two_ranks({0.1, 0.0, 0.26}, {0.1, 0.0, 0.26}, 1.0)).bottleneck, "loader");
  EXPECT_EQ(diagnose(two_ranks({0.1, 0.0, 0.24}, {0.1, 0.0, 0.24}, 1.0)).bottleneck, "compute");
}

// The loader's share is the ranks' mean wait, not the longest: one rank waiting 36% of the step
// beside one waiting 10% is a loader wait of 23%, under the 25% share (compute-bound); 40% and
// 20% are 30%, loader-bound at that share.
//
// Catches: the loader's wait taken from one rank (the longest, or rank 0) instead of the mean.
TEST(DiagnosisRule, TheLoaderShareIsTheRanksMeanWait) {
  const Diagnosis under = diagnose(two_ranks({0.1, 0.0, 0.36}, {0.1, 0.0, 0.10}, 1.0));
  EXPECT_EQ(under.bottleneck, "compute") << under.line;
  EXPECT_NEAR(under.loader_share, 0.23, 1e-12);
  const Diagnosis over = diagnose(two_ranks({0.1, 0.0, 0.20}, {0.1, 0.0, 0.40}, 1.0));
  EXPECT_EQ(over.bottleneck, "loader") << over.line;
  EXPECT_NEAR(over.loader_share, 0.30, 1e-12);
  EXPECT_NE(over.line.find("loader-bound: 30% of the 1000.0 ms step"), std::string::npos) << over.line;
}

// Where the trainer has a steadier compute for the imbalance (imbalance_compute), the rank it
// finds slowest is the one whose wait is the exposed communication: here rank 0's clock reads
// longest (0.40 s against 0.30 s) but rank 1 is slowest by the steadier measure, so the exposed
// wait is rank 1's 0.35 s, not rank 0's 0.05 s.
//
// Catches: the exposed wait taken from the rank with the longest raw compute (or rank 0) while
// the imbalance is judged on the steadier measure: a communication-bound step called compute.
TEST(DiagnosisRule, TheExposedWaitIsTheSlowestRanksByTheImbalancesMeasure) {
  DiagnosisInput in = two_ranks({0.40, 0.05, 0.0}, {0.30, 0.35, 0.0}, 1.0, 0.5);
  in.imbalance_compute = {0.29, 0.30};
  const Diagnosis d = diagnose(in);
  EXPECT_NEAR(d.comm_share, 0.35, 1e-12);
  EXPECT_NEAR(d.straggler_share, 0.01, 1e-12);
  EXPECT_EQ(d.bottleneck, "communication") << d.line;
}

TEST(DiagnosisRule, OneRankHasNoStraggler) {
  DiagnosisInput in;
  in.ranks = {{0.9, 0.0, 0.0}};
  in.step_s = 0.9;
  const Diagnosis d = diagnose(in);
  EXPECT_EQ(d.bottleneck, "compute");
  EXPECT_EQ(d.straggler_share, 0.0);
}

// A dataset of 4 batches × 4 rows (global), 2 ranks: row i holds the value i.
struct Data {
  std::vector<float> x = std::vector<float>(16);
  std::vector<int32_t> y = std::vector<int32_t>(16);
  Data() {
    std::iota(x.begin(), x.end(), 0.0f);
    std::iota(y.begin(), y.end(), 0);
  }
  LoaderSource source(int rank) const {
    return LoaderSource{.x = x.data(), .y = y.data(), .in_width = 1, .y_width = 1, .global_batch = 4,
                        .local_batch = 2, .rank = rank, .steps_per_epoch = 4};
  }
};

TEST(BatchLoader, HandsOutThisRanksRowsInTrainingOrder) {
  const Data d;
  for (int prefetch : {0, 1, 3}) {
    BatchLoader loader(d.source(1), 0.0, prefetch);
    for (int seq = 0; seq < 10; ++seq) {  // two and a half epochs
      const StagedBatch b = loader.next();
      const int row0 = (seq % 4) * 4 + 2;  // batch b, rank 1: rows 4b+2, 4b+3
      EXPECT_EQ(b.x[0], static_cast<float>(row0)) << "prefetch " << prefetch << ", seq " << seq;
      EXPECT_EQ(b.x[1], static_cast<float>(row0 + 1));
      EXPECT_EQ(b.y[1], row0 + 1);
    }
  }
}

double wait_per_step(int prefetch) {
  const Data d;
  BatchLoader loader(d.source(0), 40.0, prefetch);
  const int steps = 8;
  for (int i = 0; i < steps; ++i) {
    loader.next();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the step
  }
  return loader.take_wait_seconds() / steps;
}

TEST(BatchLoader, PrefetchHidesTheFetchBehindTheStep) {
  const double starved = wait_per_step(0);
  const double hidden = wait_per_step(4);
  EXPECT_GT(starved, 0.9 * 0.040);  // every fetch waited for in full
  EXPECT_LT(hidden, 0.5 * starved) << "starved " << starved << " s, prefetch 4: " << hidden << " s";
}

}  // namespace
}  // namespace dpscale
