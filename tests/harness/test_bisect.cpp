// test_bisect.cpp — `dpscale bisect` without building anything: the search on synthetic judges
// (every position of the change among 9 to 12 revisions; unbuildable revisions skipped as git
// bisect skips them; an undecided step retried once, then the stop; controls whose judge lies,
// so a search that did not follow its judge would fail), the reading of ab's verdicts (which
// way BAD moved, whether a midpoint moved the same way), and bad input through the real binary
// (one line, exit 2, nothing made) beside a dry run that lists the revisions, and a GOOD that
// does not build (a repository with no CMakeLists.txt: cmake fails at once).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/bisect/bisect.h"
#include "harness/bisect/bisect_search.h"
#include "harness/bisect/bisect_verdict.h"
#include "harness_util.h"

namespace dpscale {
namespace {

namespace fs = std::filesystem;
using bisect::SearchOutcome;
using bisect::SearchResult;
using bisect::StepVerdict;
using nlohmann::json;

// A judge for a change first present at revision `first`; `skipped` do not build; every call
// is checked to ask for a revision strictly inside the range, each (index, attempt) once.
struct Oracle {
  int n, first;
  std::set<int> skipped;
  std::map<std::pair<int, int>, int> calls;
  StepVerdict operator()(int i, int attempt) {
    EXPECT_GT(i, 0);
    EXPECT_LT(i, n - 1);
    EXPECT_EQ(++calls[std::make_pair(i, attempt)], 1) << "revision " << i << " attempt " << attempt << " judged twice";
    if (skipped.count(i)) return StepVerdict::unbuildable;
    return i >= first ? StepVerdict::moved : StepVerdict::same;
  }
};

SearchResult search(Oracle& o) {
  return bisect::bisect_search(o.n, [&](int i, int a) { return o(i, a); });
}

TEST(BisectSearch, FindsTheFirstMovedRevisionAtEveryPosition) {
  for (int n = 9; n <= 12; ++n) {
    for (int first = 1; first < n; ++first) {
      Oracle o{n, first, {}, {}};
      const SearchResult r = search(o);
      EXPECT_EQ(r.outcome, SearchOutcome::found) << "n " << n << " first " << first;
      EXPECT_EQ(r.first_moved, first) << "n " << n;
      EXPECT_EQ(r.good, first - 1);
      EXPECT_LE(static_cast<int>(r.steps.size()), bisect::max_steps(n)) << "n " << n << " first " << first;
      EXPECT_TRUE(r.skipped.empty());
    }
  }
  EXPECT_EQ(bisect::max_steps(2), 0);
  EXPECT_EQ(bisect::max_steps(9), 3);   // 7 revisions between: 4, 2, 1
  EXPECT_EQ(bisect::max_steps(10), 4);  // 8 between
  EXPECT_EQ(bisect::max_steps(12), 4);
}

TEST(BisectSearch, TwoRevisionsNeedNoStep) {
  Oracle o{2, 1, {}, {}};
  const SearchResult r = search(o);
  EXPECT_EQ(r.outcome, SearchOutcome::found);
  EXPECT_EQ(r.first_moved, 1);
  EXPECT_TRUE(r.steps.empty());
}

TEST(BisectSearch, SkipsUnbuildableRevisionsAndSaysTheRangeWhenItMust) {
  int found = 0, ranges = 0;
  for (int n = 9; n <= 12; ++n) {
    for (int first = 1; first < n; ++first) {
      // Skip sets: the first midpoint; the change's revision itself; its neighbours; all but one.
      const int mid = (n - 1) / 2;
      std::vector<std::set<int>> sets = {{mid}, {first}, {first - 1, first + 1}, {mid, mid + 1, mid - 1}};
      std::set<int> all_but_first;
      for (int i = 1; i < n - 1; ++i) {
        if (i != first) all_but_first.insert(i);
      }
      sets.push_back(all_but_first);
      for (std::set<int> skip : sets) {
        skip.erase(0);
        skip.erase(n - 1);
        Oracle o{n, first, skip, {}};
        const SearchResult r = search(o);
        const std::string what = "n " + std::to_string(n) + " first " + std::to_string(first);
        if (r.outcome == SearchOutcome::found) {
          ++found;
          EXPECT_EQ(r.first_moved, first) << what;
        } else {
          ++ranges;
          ASSERT_EQ(r.outcome, SearchOutcome::all_skipped) << what;
          // The range said holds the change, and every revision inside it was tried and skipped.
          EXPECT_LT(r.good, first) << what;
          EXPECT_LE(first, r.moved) << what;
          for (int i = r.good + 1; i < r.moved; ++i) {
          EXPECT_TRUE(skip.count(i)) << what << ": " << i << " not skipped";
        }
        }
        // A change whose revision and the one before it build is always found exactly.
        if (!skip.count(first) && !skip.count(first - 1)) {
          EXPECT_EQ(r.outcome, SearchOutcome::found) << what;
        }
        for (const int s : r.skipped) {
          EXPECT_TRUE(skip.count(s)) << what;
        }
      }
    }
  }
  EXPECT_GT(found, 30);
  EXPECT_GT(ranges, 30);
}

TEST(BisectSearch, AnUndecidedStepIsRetriedOnceWithMoreRounds) {
  // Undecided at the first attempt of every revision, decided at the retry: still found, each
  // step judged twice.
  for (int first = 1; first < 10; ++first) {
    int calls = 0;
    const SearchResult r = bisect::bisect_search(10, [&](int i, int attempt) {
      ++calls;
      if (attempt == 0) return StepVerdict::undecided;
      return i >= first ? StepVerdict::moved : StepVerdict::same;
    });
    EXPECT_EQ(r.outcome, SearchOutcome::found);
    EXPECT_EQ(r.first_moved, first);
    EXPECT_EQ(calls, static_cast<int>(r.steps.size()));
    EXPECT_EQ(calls % 2, 0);
    for (size_t s = 0; s < r.steps.size(); ++s) EXPECT_EQ(r.steps[s].attempt, static_cast<int>(s % 2));
  }
}

TEST(BisectSearch, StopsOnAStepThatStaysUndecided) {
  // The change at 7 of 12 (0..11); revision 8, the second midpoint, cannot be told apart even
  // with twice the rounds: 5 (same), 8, 8 again, and no further step.
  std::vector<std::pair<int, int>> judged;
  const SearchResult r = bisect::bisect_search(12, [&](int i, int attempt) {
    judged.emplace_back(i, attempt);
    if (i == 8) return StepVerdict::undecided;
    return i >= 7 ? StepVerdict::moved : StepVerdict::same;
  });
  EXPECT_EQ(r.outcome, SearchOutcome::undecided);
  EXPECT_EQ(r.stuck_at, 8);
  EXPECT_EQ(r.first_moved, -1);
  EXPECT_EQ(judged, (std::vector<std::pair<int, int>>{{5, 0}, {8, 0}, {8, 1}}));
  // The range said still holds the change.
  EXPECT_EQ(r.good, 5);
  EXPECT_EQ(r.moved, 11);
}

// Catches: the retry of an undecided step taken one attempt late — not retried at its first
// undecided verdict, retried a second time, or the retry run with the first attempt's rounds.
// One revision (4, the first midpoint of 10) is undecided at its first attempt only: it is judged
// exactly twice, attempts 0 then 1, every other revision once; BAD's own session goes through
// the same retry, and the retry's session has twice the rounds.
TEST(BisectRetry, AnUndecidedStepIsRetriedExactlyOnceWithTwiceTheRounds) {
  for (int first = 1; first < 10; ++first) {
    std::vector<std::pair<int, int>> judged;
    const SearchResult r = bisect::bisect_search(10, [&](int i, int attempt) {
      judged.emplace_back(i, attempt);
      if (i == 4 && attempt == 0) return StepVerdict::undecided;
      return i >= first ? StepVerdict::moved : StepVerdict::same;
    });
    EXPECT_EQ(r.outcome, SearchOutcome::found) << "first " << first;
    EXPECT_EQ(r.first_moved, first);
    ASSERT_GE(judged.size(), 2u);
    EXPECT_EQ(judged[0], std::make_pair(4, 0));
    EXPECT_EQ(judged[1], std::make_pair(4, 1));
    for (size_t j = 2; j < judged.size(); ++j) {
      EXPECT_NE(judged[j].first, 4) << "first " << first;
      EXPECT_EQ(judged[j].second, 0) << "revision " << judged[j].first << " retried though decided";
    }
    ASSERT_EQ(r.steps.size(), judged.size());
    EXPECT_EQ(r.steps[0].verdict, StepVerdict::undecided);
    EXPECT_EQ(r.steps[1].attempt, 1);
  }

  // The retry as BAD's session takes it: decided at once, one attempt; undecided, exactly one
  // more; undecided at both, no third, and the last verdict is the retry's.
  auto attempts = [](std::vector<StepVerdict> answers) {
    std::vector<int> asked;
    const StepVerdict v = bisect::judge_with_retry<StepVerdict>(
        [&](int attempt) {
          asked.push_back(attempt);
          return answers.at(asked.size() - 1);
        },
        [](const StepVerdict& x) { return x == StepVerdict::undecided; });
    return std::make_pair(asked, v);
  };
  EXPECT_EQ(attempts({StepVerdict::moved}), std::make_pair(std::vector<int>{0}, StepVerdict::moved));
  EXPECT_EQ(attempts({StepVerdict::undecided, StepVerdict::same}), std::make_pair(std::vector<int>{0, 1}, StepVerdict::same));
  EXPECT_EQ(attempts({StepVerdict::undecided, StepVerdict::undecided, StepVerdict::moved}),
            std::make_pair(std::vector<int>{0, 1}, StepVerdict::undecided));

  // The retry's session: twice ab's rounds and max rounds (capped at kMaxRepeats); the first
  // attempt's, ab's own; nothing else changed.
  AbOptions ab;
  ab.rounds = 6;
  ab.max_rounds = 8;
  ab.gate.min_effect = 0.05;
  const AbOptions first = bisect::attempt_options(ab, 0), retry = bisect::attempt_options(ab, 1);
  EXPECT_EQ(first.rounds, 6);
  EXPECT_EQ(first.max_rounds, 8);
  EXPECT_EQ(retry.rounds, 12);
  EXPECT_EQ(retry.max_rounds, 16);
  EXPECT_EQ(retry.gate.min_effect, 0.05);
  ab.rounds = 600;
  ab.max_rounds = 900;
  EXPECT_EQ(bisect::attempt_options(ab, 1).rounds, kMaxRepeats);
  EXPECT_EQ(bisect::attempt_options(ab, 1).max_rounds, kMaxRepeats);
}

TEST(BisectSearch, NegativeControlsAJudgeThatLiesMovesTheAnswer) {
  // A judge that calls every midpoint the same: the search names BAD, not the change at 4.
  Oracle o{10, 4, {}, {}};
  const SearchResult all_same = bisect::bisect_search(10, [](int, int) { return StepVerdict::same; });
  EXPECT_EQ(all_same.first_moved, 9);
  // One wrong step (revision 4 called the same) names a later revision: the test's `== first`
  // would catch a search that misread its judge.
  const SearchResult one_lie = bisect::bisect_search(10, [&](int i, int a) {
    if (i == 4) return StepVerdict::same;
    return o(i, a);
  });
  EXPECT_EQ(one_lie.outcome, SearchOutcome::found);
  EXPECT_NE(one_lie.first_moved, 4);
}

// ---- reading ab's verdicts ----

json curves(std::vector<std::tuple<std::string, std::string, double>> cs) {
  json v = {{"curves", json::array()}};
  for (const auto& [name, verdict, effect] : cs) {
    v["curves"].push_back({{"curve", name}, {"verdict", verdict}, {"points", 1}, {"worst", name + " K=2"},
                           {"effect_pct", effect}, {"ci_pct", {effect - 2, effect + 2}}, {"p_holm", 0.03}});
  }
  return v;
}

TEST(BisectVerdict, BadsDirectionAndCurves) {
  const json v = curves({{"throughput small single", "same", 0.3},
                         {"throughput small bucketed", "regression", -9.6},
                         {"speedup small bucketed", "regression", -9.1}});
  const bisect::BadReading b = bisect::read_bad(v);
  EXPECT_EQ(b.direction, bisect::Direction::regression);
  EXPECT_EQ(b.curves, (std::vector<std::string>{"throughput small bucketed", "speedup small bucketed"}));
  EXPECT_EQ(bisect::describe_curves(v, b.curves),
            "throughput small bucketed: regression -9.6% [-11.6%, -7.6%]; speedup small bucketed: regression -9.1% [-11.1%, -7.1%]");
  // A regression wins over an improvement elsewhere; an improvement alone is followed; all same is none.
  EXPECT_EQ(bisect::read_bad(curves({{"a", "improvement", 8}, {"b", "regression", -8}})).direction, bisect::Direction::regression);
  const bisect::BadReading up = bisect::read_bad(curves({{"a", "improvement", 8}, {"b", "same", 0}}));
  EXPECT_EQ(up.direction, bisect::Direction::improvement);
  EXPECT_EQ(up.curves, std::vector<std::string>{"a"});
  EXPECT_EQ(bisect::read_bad(curves({{"a", "same", 1}, {"b", "same", 0}})).direction, bisect::Direction::none);
  EXPECT_EQ(bisect::read_bad(curves({{"a", "same", 1}, {"b", "undecided", -4}})).direction, bisect::Direction::undecided);
}

TEST(BisectVerdict, AMidpointMovedOnlyAsBadDid) {
  const bisect::BadReading bad{bisect::Direction::regression, {"throughput small bucketed"}};
  EXPECT_EQ(bisect::read_step(curves({{"throughput small bucketed", "regression", -9}}), bad), StepVerdict::moved);
  EXPECT_EQ(bisect::read_step(curves({{"throughput small bucketed", "same", -0.5}}), bad), StepVerdict::same);
  EXPECT_EQ(bisect::read_step(curves({{"throughput small bucketed", "undecided", -4}}), bad), StepVerdict::undecided);
  // Controls: a move the other way, or on a curve BAD did not move on, is not BAD's change.
  EXPECT_EQ(bisect::read_step(curves({{"throughput small bucketed", "improvement", 9}}), bad), StepVerdict::same);
  EXPECT_EQ(bisect::read_step(curves({{"throughput small bucketed", "same", 0}, {"throughput small single", "regression", -9}}), bad),
            StepVerdict::same);
  // A followed curve the session did not judge cannot be called the same.
  EXPECT_EQ(bisect::read_step(curves({{"throughput small single", "same", 0}}), bad), StepVerdict::undecided);
}

// ---- the command: bad input before any build, and the dry run ----

struct Repo {
  test::ScratchDir dir;
  std::vector<std::string> ids;
  std::string repo, config, work;
  Repo() {
    repo = dir.file("repo");
    ids = test::make_git_repo(repo, 5);
    config = dir.file("c.json");
    test::write_file(config, R"({"name": "c", "models": ["16,8,4"], "modes": ["single", "bucketed"], "world_sizes": [2],
                                 "options": {"samples": 256, "batch_size": 64, "epochs": 1}})");
    work = dir.file("work");
  }
};

// Runs dpscale bisect from `r.dir`; checks exit 2, one line naming `names`, and nothing made.
void refused(Repo& r, std::vector<std::string> args, const std::string& names) {
  std::set<std::string> before;
  for (const auto& e : fs::recursive_directory_iterator(r.dir.path)) before.insert(e.path().string());
  args.insert(args.begin(), "bisect");
  const ProcessResult p = test::dpscale(args);
  const std::vector<std::string> lines = test::lines_of(p.err);
  EXPECT_EQ(p.exit_code, 2) << names << ": " << p.err;
  ASSERT_EQ(lines.size(), 1u) << names << ": " << p.err;
  EXPECT_NE(lines[0].find(names), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].rfind("dpscale: ", 0), 0u) << lines[0];
  std::set<std::string> after;
  for (const auto& e : fs::recursive_directory_iterator(r.dir.path)) after.insert(e.path().string());
  EXPECT_EQ(before, after) << names << ": files made";
}

TEST(BisectCommand, BadInputIsOneLineBeforeAnyBuild) {
  Repo r;
  const std::string& g = r.ids[0];
  const std::string& b = r.ids[4];
  const std::vector<std::string> rest = {r.config, "--repo", r.repo, "--work", r.work};
  auto with = [&](std::vector<std::string> head, std::vector<std::string> tail = {}) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  refused(r, {g, b, r.config, "--repo", r.dir.path.string(), "--work", r.work}, "is not in a git repository");
  refused(r, with({"nosuch", b}, rest), "GOOD 'nosuch' is not a commit");
  refused(r, with({g, "nosuch"}, rest), "BAD 'nosuch' is not a commit");
  refused(r, with({b, b.substr(0, 12)}, rest), "are the same commit");
  refused(r, with({b, g}, rest), "is not an ancestor of BAD");
  test::write_file(r.dir.file("broken.json"), "{\"name\": ");
  refused(r, {g, b, r.dir.file("broken.json"), "--repo", r.repo, "--work", r.work}, "broken.json");
  test::write_file(r.dir.file("nosingle.json"), R"({"name": "n", "models": ["16,8,4"], "modes": ["bucketed"], "world_sizes": [2],
                                                   "options": {"samples": 256, "batch_size": 64, "epochs": 1}})");
  refused(r, {g, b, r.dir.file("nosingle.json"), "--repo", r.repo, "--work", r.work}, "no single-device mode");
  test::write_file(r.dir.file("afile"), "x\n");
  refused(r, with({g, b}, {r.config, "--repo", r.repo, "--work", r.dir.file("afile")}), "--work");
  refused(r, with({g, b}, with(rest, {"--rounds", "8", "--max-rounds", "6"})), "--max-rounds");
  refused(r, with({g, "HEAD:notes.txt"}, rest), "BAD 'HEAD:notes.txt' is not a commit");  // a blob, no commit
}

TEST(BisectCommand, ADryRunListsTheFirstParentRevisions) {
  Repo r;
  const ProcessResult p = test::dpscale({"bisect", r.ids[1], r.ids[4], r.config, "--repo", r.repo, "--work", r.work, "--dry-run"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::vector<std::string> lines = test::lines_of(p.out);
  ASSERT_EQ(lines.size(), 5u) << p.out;
  EXPECT_NE(lines[0].find("4 revisions"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("train_single_gpu train_ddp_bucketed"), std::string::npos) << lines[0];
  for (int i = 0; i < 4; ++i) EXPECT_EQ(lines[static_cast<size_t>(i) + 1], r.ids[static_cast<size_t>(i) + 1] + " edit " + std::to_string(i + 1));
  EXPECT_FALSE(fs::exists(r.work)) << "a dry run builds nothing";
}

TEST(BisectCommand, AGoodThatDoesNotBuildIsSaid) {
  // The scratch repository holds no CMakeLists.txt: GOOD's worktree is made and its configure
  // fails at once. Said as a step with its log, then one line, exit 2; nothing of BAD is built.
  Repo r;
  const ProcessResult p = test::dpscale({"bisect", r.ids[0], r.ids[4], r.config, "--repo", r.repo, "--work", r.work});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  const std::string log = r.work + "/" + r.ids[0].substr(0, 12) + "/build.log";
  EXPECT_NE(p.out.find("step 1: " + r.ids[0].substr(0, 10) + " edit 0 (GOOD): does not build — cmake configure failed (" + log + ")"),
            std::string::npos)
      << p.out;
  EXPECT_NE(p.err.find("dpscale: GOOD " + r.ids[0].substr(0, 10) + " does not build"), std::string::npos) << p.err;
  EXPECT_TRUE(fs::exists(r.work + "/" + r.ids[0].substr(0, 12) + "/src/notes.txt")) << "GOOD's worktree";
  EXPECT_NE(test::read_file(log).find("CMakeLists.txt"), std::string::npos) << "cmake's words are kept in the log";
  EXPECT_FALSE(fs::exists(r.work + "/" + r.ids[4].substr(0, 12))) << "BAD is not built once GOOD failed";
}

}  // namespace
}  // namespace dpscale
