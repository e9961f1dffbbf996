// test_ab_round_plan.cpp — the rounds of a `dpscale ab` session as undecided points add to them:
// each judgment that leaves a point undecided adds one block of two rounds, one led by each build,
// so that after every judgment each build has led as many rounds as it followed (the A B B A
// balance that lets a load rising or falling over the session touch both builds alike), and the
// session stops at --max-rounds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/ab/ab.h"
#include "harness/sweep/config.h"

namespace dpscale {
namespace {

// The rounds run at each judgment of a session that stays undecided to the end.
std::vector<int> judgments(int rounds, int max_rounds) {
  std::vector<int> at = {rounds};
  while (at.back() < max_rounds) {
    const int next = rounds_after_undecided(at.back(), max_rounds);
    if (next <= at.back()) break;  // no progress: the check below fails on the count
    at.push_back(next);
  }
  return at;
}

int a_led(int from, int to) {
  int n = 0;
  for (int r = from; r < to; ++r) n += a_leads(r) ? 1 : 0;
  return n;
}

// Catches: an undecided point given one more round instead of a block of two (ab.cpp's
// rounds_after_undecided at done + 1): the session would judge after 7 rounds, four led by B and
// three by A, and every odd judgment after it as lopsided.
TEST(AbRoundPlan, EveryBlockAddedForUndecidedPointsKeepsTheLeadsBalanced) {
  EXPECT_EQ(judgments(6, 12), (std::vector<int>{6, 8, 10, 12}));
  EXPECT_EQ(judgments(6, 8), (std::vector<int>{6, 8}));  // CI's --max-rounds 8: one block added
  EXPECT_EQ(judgments(6, 6), (std::vector<int>{6}));
  for (const int start : {2, 4, 6}) {
    for (int max_rounds = start; max_rounds <= 16; max_rounds += 2) {
      const std::vector<int> at = judgments(start, max_rounds);
      SCOPED_TRACE("--rounds " + std::to_string(start) + " --max-rounds " + std::to_string(max_rounds));
      EXPECT_EQ(at.back(), max_rounds);
      EXPECT_EQ(static_cast<int>(at.size()), 1 + (max_rounds - start) / 2);
      for (size_t j = 0; j < at.size(); ++j) {
        EXPECT_EQ(2 * a_led(0, at[j]), at[j]) << "after " << at[j] << " rounds A led " << a_led(0, at[j]);
        if (j == 0) continue;
        // The block added: two rounds, one led by each build.
        EXPECT_EQ(at[j] - at[j - 1], 2);
        EXPECT_EQ(a_led(at[j - 1], at[j]), 1) << "rounds " << at[j - 1] + 1 << "-" << at[j];
      }
    }
  }
}

// An odd --max-rounds stops the last block at its cap rather than running past it.
TEST(AbRoundPlan, TheLastBlockStopsAtMaxRounds) {
  EXPECT_EQ(rounds_after_undecided(6, 7), 7);
  EXPECT_EQ(rounds_after_undecided(8, 8), 8);
  EXPECT_EQ(judgments(6, 9), (std::vector<int>{6, 8, 9}));
}

}  // namespace
}  // namespace dpscale

namespace dpscale {
namespace {

// The rounds added for undecided points run their blocks: each point as the verdicts name it (its
// key, to_json, read back with from_json) and the single run it pairs with are points the config
// expands to, so a block never asks for a run no pass would make (it would add rounds of nothing
// and stay undecided). Every point of CI's config and of a config that sweeps an axis and a cap.
// Catches: a key that does not read back as its point (a setting dropped: the block's points miss
// the sweep's), a block without its single run (the new rounds' speedups unpaired).
TEST(AbRoundPlan, AnUndecidedPointsBlockIsMadeOfTheSweepsOwnPoints) {
  for (const char* name : {"ci", "bucket-sweep"}) {
    const SweepConfig c = load_config(std::string(DPSCALE_SOURCE_DIR) + "/configs/" + name + ".json");
    std::set<Point> swept;
    for (const SweepRun& r : expand(c, 1)) swept.insert(r.point);
    ASSERT_GT(swept.size(), 2u) << name;
    for (const Point& p : swept) {
      const Point read_back = Point::from_json(nlohmann::json::parse(p.to_json().dump()));
      ASSERT_TRUE(read_back == p) << name << ": " << p.describe();
      const std::set<Point> block = blocks_of({read_back});
      EXPECT_EQ(block.size(), p.mode->data_parallel ? 2u : 1u) << p.describe();
      for (const Point& b : block) EXPECT_TRUE(swept.count(b)) << name << ": " << b.describe() << " is no point of the sweep";
    }
    // Negative control: a point whose setting the sweep never ran has a block outside the sweep.
    const Point off = Point::of_args(swept.rbegin()->model, Mode::naive, 2, {"--grad-comm", "fp16", "--epochs", "7"});
    EXPECT_FALSE(swept.count(*blocks_of({off}).rbegin())) << name;
  }
}

}  // namespace
}  // namespace dpscale
