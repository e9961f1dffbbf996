// test_straggler_rule.cpp — the straggler rule (trainers/diagnosis/straggler.h) on synthetic per-rank
// medians: a rank whose compute is 10% of the step slower is named with cause `compute`, a
// clean record names none, a slow loader or link is named with its cause, and the lateness a
// slow compute or loader causes in a rank's link hold does not make it a link straggler; a rank
// whose compute excess is its own wait for a CPU (run delay) is contended, not a straggler, while
// extra compute without run delay stays a straggler, run delay without extra compute names
// nothing, and a rank that waits more because it computes more stays a straggler.
//
// Run: ctest -R StragglerRule --output-on-failure
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "trainers/diagnosis/straggler.h"
#include "trainers/diagnosis/trace.h"

namespace dpscale {
namespace {

// K ranks of a 100 ms step: 80 ms compute, no loader wait, 2 ms link hold, with a few tenths
// of a millisecond of rank-to-rank noise.
std::vector<RankMedians> clean(int k) {
  std::vector<RankMedians> r;
  for (int i = 0; i < k; ++i) r.push_back({0.080 + 0.0003 * (i % 3), 0.0, 0.002 + 0.0002 * (i % 2)});
  return r;
}

TEST(StragglerRule, TenPercentSlowerComputeIsComputeOnThatRank) {
  for (int k : {2, 4, 8}) {
    for (int slow = 0; slow < k; ++slow) {
      std::vector<RankMedians> r = clean(k);
      r[slow].compute += 0.010;  // 10% of the 100 ms step
      r[slow].link += 0.004;     // it arrives last, so it holds its link longest: a consequence
      const StragglerScan s = find_straggler(r, 0.110);
      ASSERT_TRUE(s.found) << "K=" << k << " rank " << slow << ": " << describe(s);
      EXPECT_EQ(s.found->rank, slow);
      EXPECT_EQ(s.found->cause, "compute");
      EXPECT_NEAR(s.found->share, 0.010 / 0.110, 0.01);
      // Compute read as CPU time holds no run delay: the line says none.
      EXPECT_EQ(describe(s).find("run delay"), std::string::npos) << describe(s);
    }
  }
}

TEST(StragglerRule, ACleanRecordNamesNone) {
  for (int k : {2, 4, 8}) {
    const StragglerScan s = find_straggler(clean(k), 0.100);
    EXPECT_FALSE(s.found) << "K=" << k << ": " << describe(s);
    EXPECT_LT(s.compute_share, kStragglerShare);
  }
  // Under the threshold is under it: 3% of the step is the machine's noise here, not a straggler.
  std::vector<RankMedians> r = clean(2);
  r[1].compute += 0.003;
  EXPECT_FALSE(find_straggler(r, 0.100).found);
}

TEST(StragglerRule, ASlowLoaderIsLoaderAndASlowLinkIsLink) {
  std::vector<RankMedians> r = clean(4);
  r[3].loader += 0.010;
  r[3].compute += 0.002;  // cold caches after its wait
  r[3].link += 0.009;     // late at every all-reduce
  StragglerScan s = find_straggler(r, 0.110);
  ASSERT_TRUE(s.found) << describe(s);
  EXPECT_EQ(s.found->rank, 3);
  EXPECT_EQ(s.found->cause, "loader");

  r = clean(4);
  r[2].link += 0.010;
  s = find_straggler(r, 0.110);
  ASSERT_TRUE(s.found) << describe(s);
  EXPECT_EQ(s.found->rank, 2);
  EXPECT_EQ(s.found->cause, "link");
}

// The largest share names the cause, whatever the order: a slow link (10% of the step) on one
// rank beside compute noise (7%) on another is the link's rank, and compute noise larger than a
// link excess is compute's.
TEST(StragglerRule, TheLargestShareNamesTheCause) {
  std::vector<RankMedians> r = clean(4);
  r[1].link += 0.011;
  r[0].compute += 0.0077;
  StragglerScan s = find_straggler(r, 0.110);
  ASSERT_TRUE(s.found) << describe(s);
  EXPECT_EQ(s.found->rank, 1);
  EXPECT_EQ(s.found->cause, "link");

  r = clean(4);
  r[1].link += 0.0066;
  r[0].compute += 0.011;
  s = find_straggler(r, 0.110);
  ASSERT_TRUE(s.found) << describe(s);
  EXPECT_EQ(s.found->rank, 0);
  EXPECT_EQ(s.found->cause, "compute");
}

// Beside a busy neighbour a rank that shares its core with it waits for the CPU inside its
// compute, which a clock's interval (a GPU's events, several BLAS threads) counts as compute:
// take that extra wait off and nothing of a straggler is left.
TEST(StragglerRule, ExtraComputeThatIsRunDelayIsContendedNotAStraggler) {
  for (int k : {2, 4}) {
    for (int slow = 0; slow < k; ++slow) {
      std::vector<RankMedians> r = clean(k);
      for (RankMedians& m : r) m.compute_run_delay = 0.004;  // every rank waits a little
      r[slow].compute += 0.008;                             // 8% of the step longer ...
      r[slow].compute_run_delay += 0.006;                   // ... 6 ms of it waiting for a CPU
      const StragglerScan s = find_straggler(r, 0.100);
      EXPECT_FALSE(s.found) << "K=" << k << " rank " << slow << ": " << describe(s);
      ASSERT_TRUE(s.contended) << describe(s);
      EXPECT_EQ(s.contended->rank, slow);
      EXPECT_EQ(s.contended->cause, "compute");
      EXPECT_NEAR(s.contended->delay_excess_s, 0.006, 1e-12);
      const std::string line = describe(s);
      EXPECT_EQ(line.rfind("no straggler: rank " + std::to_string(slow) + " contended (compute +", 0), 0u) << line;
      EXPECT_NE(line.find(" ms per step, run delay +6.0 ms) (largest excess: compute "), std::string::npos) << line;
    }
  }
  // The bound, in binary fractions (no rounding): 12.5% of the step longer, 9.375% of it waiting
  // leaves 3.125%: contended; 6.25% of it waiting leaves 6.25%: a straggler.
  EXPECT_TRUE(find_straggler({{0.5, 0, 0, 0.25}, {0.625, 0, 0, 0.34375}}, 1.0).contended);
  const StragglerScan s = find_straggler({{0.5, 0, 0, 0.25}, {0.625, 0, 0, 0.3125}}, 1.0);
  EXPECT_TRUE(s.found) << describe(s);
  EXPECT_FALSE(s.contended);
}

// Negative control: a rank that computes 10% longer and waited barely more than the others (it had
// its CPU; its own work was slower) is a straggler, even when every rank waits for a CPU a lot.
TEST(StragglerRule, ExtraComputeWithoutRunDelayIsStillAStraggler) {
  for (int k : {2, 4}) {
    std::vector<RankMedians> r = clean(k);
    for (RankMedians& m : r) m.compute_run_delay = 0.040;  // a busy machine: everybody waits
    r[1].compute += 0.010;
    r[1].compute_run_delay += 0.002;
    const StragglerScan s = find_straggler(r, 0.110);
    EXPECT_FALSE(s.contended) << describe(s);
    ASSERT_TRUE(s.found) << describe(s);
    EXPECT_EQ(s.found->rank, 1);
    EXPECT_EQ(s.found->cause, "compute");
    EXPECT_NEAR(s.found->delay_excess_s, 0.002, 1e-12);
    const std::string line = describe(s);
    EXPECT_EQ(line.rfind("straggler rank 1 (compute): +10.3 ms per step, run delay +2.0 ms (largest excess: ", 0), 0u)
        << line;
  }
}

// On a loaded machine a rank that needs more CPU also waits more, in proportion (here 7 ms of
// waiting per ms of work, as at a load of 15 on 2 cores): its extra wait is the consequence, and
// its own 11 ms (5.5% of the step) remain — a straggler. Where compute is CPU time the wait is not
// in it at all (compute_run_delay 0), and the same rank is a straggler too.
TEST(StragglerRule, ARankThatWaitsBecauseItComputesMoreIsAStraggler) {
  std::vector<RankMedians> r = clean(2);
  for (RankMedians& m : r) m.compute_run_delay = 0.100;
  r[1].compute += 0.011 + 0.077;
  r[1].compute_run_delay += 0.077;
  StragglerScan s = find_straggler(r, 0.200);
  ASSERT_TRUE(s.found) << describe(s);
  EXPECT_EQ(s.found->rank, 1);
  EXPECT_FALSE(s.contended);

  r = clean(2);
  r[1].compute += 0.011;
  s = find_straggler(r, 0.200);
  ASSERT_TRUE(s.found) << describe(s);
  EXPECT_EQ(s.found->rank, 1);
}

// Negative control: run delay alone, with no excess in compute, loader or link, names nobody —
// neither a straggler nor a contended rank; and a loader or link excess is not checked against run
// delay (those are waits of sleeping threads, which run delay does not see).
// The threshold where the measurements put it (experiments/straggler/README.md, beside one busy loop): the
// weakest 10% compute straggler showed an excess of 7.7% of the step and was named; the four
// 10% stragglers the loaded run missed showed 3.6-4.8%, under the 5% threshold, and the table's
// counts were made so. Both sides, at K = 2 and 4, every rank.
//
// Catches: kStragglerShare moved off the measured 5% (to 8%, which misses the 7.7% straggler, or
// to 4%, which names the 4.8% excess the published counts call missed).
TEST(StragglerRule, TheThresholdSitsWhereTheMeasuredExcessesPutIt) {
  for (int k : {2, 4}) {
    for (int slow = 0; slow < k; ++slow) {
      std::vector<RankMedians> named = clean(k), missed = clean(k);
      for (auto* r : {&named, &missed}) {
        for (RankMedians& rank : *r) rank.compute = 0.080;  // no rank-to-rank noise: the excess is the one put in
      }
      named[slow].compute += 0.0077;  // 7.7% of the 100 ms step
      missed[slow].compute += 0.0048;  // 4.8%
      const StragglerScan n = find_straggler(named, 0.100), m = find_straggler(missed, 0.100);
      ASSERT_TRUE(n.found) << "K=" << k << " rank " << slow << ": " << describe(n);
      EXPECT_EQ(n.found->rank, slow);
      EXPECT_EQ(n.found->cause, "compute");
      EXPECT_NEAR(n.found->share, 0.077, 1e-9);
      EXPECT_FALSE(m.found) << "K=" << k << " rank " << slow << ": " << describe(m);
      EXPECT_FALSE(m.contended) << describe(m);
      EXPECT_NEAR(m.compute_share, 0.048, 1e-9);  // the excess was seen, and is under the threshold
    }
  }
}

TEST(StragglerRule, RunDelayWithoutExtraComputeNamesNone) {
  for (int k : {2, 4}) {
    std::vector<RankMedians> r = clean(k);
    r[k - 1].compute_run_delay = 0.050;  // half the step waiting for a CPU, the same compute
    const StragglerScan s = find_straggler(r, 0.100);
    EXPECT_FALSE(s.found) << describe(s);
    EXPECT_FALSE(s.contended) << describe(s);
    EXPECT_EQ(describe(s).rfind("no straggler (", 0), 0u) << describe(s);
  }
  std::vector<RankMedians> r = clean(2);
  r[1].loader += 0.010;
  r[1].compute_run_delay = 0.050;
  const StragglerScan s = find_straggler(r, 0.110);
  ASSERT_TRUE(s.found) << describe(s);
  EXPECT_EQ(s.found->cause, "loader");
  EXPECT_FALSE(s.contended);
}

TEST(StragglerRule, OneRankOrNoStepNamesNone) {
  EXPECT_FALSE(find_straggler({{0.1, 0.0, 0.0}}, 0.1).found);
  std::vector<RankMedians> r = clean(2);
  r[0].compute += 1.0;
  EXPECT_FALSE(find_straggler(r, 0.0).found);
}

TEST(StragglerRule, TheTraceMarksTheStragglersSpansOfItsCause) {
  const std::string events = R"([{"name": "forward + loss", "ph": "X", "tid": 1, "ts": 0, "dur": 4},
                                  {"name": "backward layers.1.weight", "ph": "X", "tid": 1, "ts": 4, "dur": 5},
                                  {"name": "all-reduce", "ph": "X", "tid": 2, "ts": 9, "dur": 2}])";
  const nlohmann::json file = nlohmann::json::parse(Tracer::merge({events, events}, {{"mode", "bucketed"}}, {1, "compute"}));
  int marked = 0;
  for (const auto& e : file["traceEvents"]) {
    if (e.value("ph", "") == "M" && e["name"] == "process_name" && e["pid"] == 1) {
      EXPECT_NE(e["args"]["name"].get<std::string>().find("straggler (compute)"), std::string::npos);
    }
    if (!e.contains("cname")) continue;
    ++marked;
    EXPECT_EQ(e["pid"], 1);
    EXPECT_EQ(e["name"], "backward layers.1.weight");
    EXPECT_EQ(e["args"]["straggler"], "compute");
  }
  EXPECT_EQ(marked, 1);
  EXPECT_EQ(file["otherData"]["straggler"]["rank"], 1);
  // No straggler: nothing marked.
  const std::string plain = Tracer::merge({events, events}, {{"mode", "bucketed"}});
  EXPECT_EQ(plain.find("cname"), std::string::npos);
  EXPECT_EQ(plain.find("straggler"), std::string::npos);
}

// A contended rank is named so, its spans of the cause carry args.contended (not straggler), and
// otherData names it under "contended"; nothing says straggler.
TEST(StragglerRule, TheTraceLabelsAContendedRankAsContended) {
  const std::string events = R"j([{"name": "forward + loss", "ph": "X", "tid": 1, "ts": 0, "dur": 4},
                                  {"name": "backward layers.1.weight", "ph": "X", "tid": 1, "ts": 4, "dur": 5},
                                  {"name": "run delay (ms per step)", "ph": "C", "ts": 0, "args": {"ms": 3.5}}])j";
  const nlohmann::json file =
      nlohmann::json::parse(Tracer::merge({events, events}, {{"mode", "bucketed"}}, {0, "compute", true}));
  int marked = 0, counters = 0;
  for (const auto& e : file["traceEvents"]) {
    if (e.value("ph", "") == "M" && e["name"] == "process_name" && e["pid"] == 0) {
      EXPECT_EQ(e["args"]["name"], "rank 0 — contended (compute), not a straggler");
    }
    if (e.value("ph", "") == "C") {
      ++counters;
      EXPECT_FALSE(e.contains("cname"));
    }
    if (!e.contains("cname")) continue;
    ++marked;
    EXPECT_EQ(e["pid"], 0);
    EXPECT_EQ(e["args"]["contended"], "compute");
    EXPECT_FALSE(e["args"].contains("straggler"));
  }
  EXPECT_EQ(marked, 1);
  EXPECT_EQ(counters, 2);  // one per rank, kept with its process
  EXPECT_EQ(file["otherData"]["contended"]["rank"], 0);
  EXPECT_FALSE(file["otherData"].contains("straggler"));
}

}  // namespace
}  // namespace dpscale
