// test_ab_round_plan.cpp — the rounds of a `dpscale ab` session as undecided points add to them:
// each judgment that leaves a point undecided adds one block of two rounds, one led by each build,
// so that after every judgment each build has led as many rounds as it followed (the A B B A
// balance that lets a load rising or falling over the session touch both builds alike), and the
// session stops at --max-rounds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/ab/ab.h"

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
