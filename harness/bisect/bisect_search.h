// bisect_search.h — the search of `dpscale bisect`, apart from git, builds and sessions: revisions
// 0..n-1 in first-parent order, 0 known good (GOOD) and n-1 known moved (BAD); a judge says of
// one revision whether its curve moved (as BAD's did, against GOOD), stayed the same, is
// undecided, or does not build. Binary search for the first moved revision, as `git bisect`:
// an unbuildable revision is skipped and its nearest neighbour inside the range is tried
// instead; an undecided step is tried once more with twice the rounds (attempt 1), and when it
// stays undecided the search stops there.
//
// Tested with synthetic judges (tests/harness/test_bisect.cpp); bisect_run.cpp gives it the real one.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace dpscale::bisect {

enum class StepVerdict { moved, same, undecided, unbuildable };

std::string verdict_name(StepVerdict v);

struct SearchStep {
  int index = 0;    // the revision judged
  int attempt = 0;  // 0, or 1: the retry of an undecided step with twice the rounds
  StepVerdict verdict = StepVerdict::same;
};

enum class SearchOutcome {
  found,        // first_moved is the first moved revision
  undecided,    // a step stayed undecided after its retry: the first moved is in (good, moved]
  all_skipped,  // every revision inside (good, moved) is unbuildable: the first moved is among them or `moved`
};

struct SearchResult {
  SearchOutcome outcome = SearchOutcome::found;
  int first_moved = -1;       // found: its index
  int good = 0, moved = 0;    // the last known good and the first known moved revision
  int stuck_at = -1;          // undecided: the revision that stayed undecided
  std::vector<SearchStep> steps;
  std::vector<int> skipped;   // unbuildable revisions, in the order met
};

// A step judged (attempt 0) and, when that was undecided, judged once more (attempt 1, twice the
// rounds): the last attempt's verdict. The search's midpoints and BAD's own session against GOOD
// are judged so.
template <class Verdict>
Verdict judge_with_retry(const std::function<Verdict(int attempt)>& judge,
                         const std::function<bool(const Verdict&)>& undecided) {
  Verdict v = judge(0);
  if (undecided(v)) v = judge(1);
  return v;
}

// `judge(index, attempt)` is called only for 0 < index < n-1 (n >= 2), each (index, attempt) at
// most once. `on_step` (may be empty) hears each step as it is decided.
using Judge = std::function<StepVerdict(int index, int attempt)>;
SearchResult bisect_search(int n, const Judge& judge, const std::function<void(const SearchStep&)>& on_step = {});

// The most steps a search of n revisions takes with nothing skipped or undecided: ceil(log2(n-1)).
int max_steps(int n);

}  // namespace dpscale::bisect
