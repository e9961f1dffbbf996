// test_straggler_rule.cpp — the straggler rule (trainers/diagnosis/straggler.h) on synthetic per-rank
// medians: a rank whose compute is 10% of the step slower is named with cause `compute`, a
// clean record names none, a slow loader or link is named with its cause, and the lateness a
// slow compute or loader causes in a rank's link hold does not make it a link straggler.
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

}  // namespace
}  // namespace dpscale
