// test_speedup_pairing.cpp — each data-parallel run's speedup is taken over the single runs of its
// own round, in `dpscale ab` (B's data-parallel pair over B's single pair of the same round) and in
// `dpscale compare` (pair_runs: the run over the geometric mean of its round's single run and the
// next round's). The single runs here differ round by round and some rounds are missing, so a
// run paired with another round's single run, or with the single run at its own position in a
// list, gets other numbers and, in ab, another verdict.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "ab_files.h"
#include "core/median.h"
#include "harness/report/gate.h"

namespace dpscale {
namespace {

// The hand-made runs and lines of ab_files.h.
using namespace test;

// Eight rounds. A's single run slows 2% a round (its speedup moves with it); B's single and naive
// runs are A's, both 4% more throughput each round (round r: 1 + 0.04 r times A's), so B's
// speedup equals A's in every round and every true speedup ratio is 1. A's single run of round 1 failed and B's
// naive run of round 8 failed: the data-parallel pairs are rounds 1-7, the single pairs rounds
// 2-8, and the two lists are one place apart.
//
// Catches: a speedup ratio divided by the single pair at the same position in the list of single
// pairs rather than by its own round's (ab_judge.cpp, speedup_points). Paired so, round r's
// data-parallel ratio meets round r+1's single ratio, (1 + 0.04 r) / (1 + 0.04 (r + 1)), 3.1% to
// 3.7% low in all six: a regression called on two builds whose speedups are the same.
TEST(AbSpeedupPairing, EachRoundsDataParallelPairIsOverItsOwnRoundsSinglePair) {
  const int rounds = 8;
  std::string a, b;
  std::vector<double> a_speedups;  // A's speedup in the rounds both pairs judge (2-7)
  for (int r = 0; r < rounds; ++r) {
    const double a_single = 1.0 * (1 + 0.02 * r), faster = 1 + 0.04 * r;
    a += r == 0 ? failed_line(single_run(r)) : timed_line(single_run(r), a_single);
    a += timed_line(naive_run(r), 0.7);
    b += timed_line(single_run(r), a_single / faster);
    b += r == rounds - 1 ? failed_line(naive_run(r)) : timed_line(naive_run(r), 0.7 / faster);
    if (r >= 1 && r <= rounds - 2) a_speedups.push_back(a_single / 0.7);
  }
  const test::AbVerdicts v = test::ab_verdicts(a, b, 0.03, rounds);
  const nlohmann::json& sp = v.points.at("small naive K=2 speedup");
  EXPECT_EQ(sp["n_now"], 6) << sp.dump();  // rounds 2-7: round 1 has no single pair, round 8 no DP pair
  EXPECT_NEAR(sp["effect_pct"].get<double>(), 0.0, 1e-9) << sp.dump();
  EXPECT_EQ(sp["verdict"], "same") << v.text;
  // Each build's median speedup over the same rounds: A's, and B's equal to it.
  EXPECT_NEAR(sp["value_base"].get<double>(), median(a_speedups), 1e-9) << sp.dump();
  EXPECT_NEAR(sp["value_now"].get<double>(), median(a_speedups), 1e-9) << sp.dump();
  // Two rounds left out: round 1 (no single pair) and round 8 (no data-parallel pair).
  ASSERT_FALSE(sp["why"].empty()) << sp.dump();
  EXPECT_EQ(sp["why"][0].get<std::string>().rfind("2 round(s) left out", 0), 0u) << sp.dump();
  // What makes the rounds matter: B's single runs are faster, more so each round, so its single
  // throughput is an improvement while its speedup is the same.
  EXPECT_EQ(v.points.at("small single K=1 throughput")["verdict"], "improvement") << v.text;
}

// pair_runs, the pairing `dpscale compare` (and the history) take speedups from: five rounds whose
// single runs take 1.0, 1.1, 0.9, 1.2 and 0.95 s an epoch, each naive run 0.7 s. A run's speedup is
// its throughput over the geometric mean of its round's single throughput and the next round's
// (the single ran before it, the next round's after), over its own round's alone where the next
// is missing or disturbed; a run whose round has no single run is unpaired, one whose single run
// was disturbed is disturbed.
//
// Catches: a run paired with another round's single run (the next round's alone, the previous
// one's, the first round's), or with its own round's alone where the next is there and fit, or
// with a disturbed next round's single run: each gives other speedups than these.
TEST(CompareSpeedupPairing, EachRunIsOverItsOwnRoundsSingleRunAndTheNext) {
  const double single_s[] = {1.0, 1.1, 0.9, 1.2, 0.95};
  auto speedups = [&](const std::string& text) {
    const ResultsFile f = parse_results(text, "new.jsonl");
    std::vector<PairedRun> runs = pair_runs(f, test::kUsualProbe, DisturbanceLimits{});
    return runs;
  };
  std::string all;
  for (int r = 0; r < 5; ++r) all += timed_line(single_run(r), single_s[r]) + timed_line(naive_run(r), 0.7);
  const std::vector<PairedRun> runs = speedups(all);
  ASSERT_EQ(runs.size(), 5u);
  for (int r = 0; r < 5; ++r) {
    SCOPED_TRACE("round " + std::to_string(r + 1));
    EXPECT_EQ(runs[r].entry->repeat, r);
    ASSERT_TRUE(runs[r].speedup);
    EXPECT_TRUE(runs[r].disturbed.empty()) << runs[r].disturbed;
    EXPECT_TRUE(runs[r].unpaired.empty()) << runs[r].unpaired;
    // throughput ratio = single epoch / naive epoch
    const double want = r < 4 ? std::sqrt(single_s[r] * single_s[r + 1]) / 0.7 : single_s[r] / 0.7;
    EXPECT_NEAR(*runs[r].speedup, want, 1e-12);
  }

  // Round 3's single run failed and round 5's waited half its epochs for a CPU (disturbed).
  std::string holes;
  for (int r = 0; r < 5; ++r) {
    holes += r == 2 ? failed_line(single_run(r)) : timed_line(single_run(r), single_s[r], r == 4 ? 0.5 : 0.01);
    holes += timed_line(naive_run(r), 0.7);
  }
  const std::vector<PairedRun> h = speedups(holes);
  ASSERT_EQ(h.size(), 5u);
  EXPECT_NEAR(*h[0].speedup, std::sqrt(1.0 * 1.1) / 0.7, 1e-12);
  EXPECT_NEAR(*h[1].speedup, 1.1 / 0.7, 1e-12);  // the next round's single is missing: its own alone
  EXPECT_FALSE(h[2].speedup);                    // no single run in its round
  EXPECT_EQ(h[2].unpaired, "round 3: no single run of small in that round");
  EXPECT_NEAR(*h[3].speedup, 1.2 / 0.7, 1e-12);  // the next round's single is disturbed: its own alone
  EXPECT_TRUE(h[3].disturbed.empty()) << h[3].disturbed;
  EXPECT_EQ(h[4].disturbed.rfind("round 5 (its single run): ", 0), 0u) << h[4].disturbed;
}

}  // namespace
}  // namespace dpscale
