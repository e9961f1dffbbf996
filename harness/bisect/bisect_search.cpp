// bisect_search.cpp — binary search for the first moved revision, with skips and retries (bisect_search.h).
#include "harness/bisect/bisect_search.h"

#include <set>
#include <stdexcept>

namespace dpscale::bisect {

std::string verdict_name(StepVerdict v) {
  switch (v) {
    case StepVerdict::moved: return "moved";
    case StepVerdict::same: return "same";
    case StepVerdict::undecided: return "undecided";
    case StepVerdict::unbuildable: return "does not build";
  }
  return "?";
}

namespace {

// The revision to try inside (good, moved): the midpoint, else the nearest one not skipped
// (below first at equal distance); -1 when every one is skipped.
int pick(int good, int moved, const std::set<int>& skipped) {
  const int mid = good + (moved - good) / 2;
  for (int d = 0; d < moved - good; ++d) {
    for (const int i : {mid - d, mid + d}) {
      if (i > good && i < moved && !skipped.count(i)) return i;
    }
  }
  return -1;
}

}  // namespace

SearchResult bisect_search(int n, const Judge& judge, const std::function<void(const SearchStep&)>& on_step) {
  if (n < 2) throw std::invalid_argument("bisect_search: needs GOOD and BAD (n >= 2)");
  SearchResult r;
  r.good = 0;
  r.moved = n - 1;
  std::set<int> skipped;
  auto record = [&](const SearchStep& s) {
    r.steps.push_back(s);
    if (on_step) on_step(s);
  };
  while (r.moved - r.good > 1) {
    const int i = pick(r.good, r.moved, skipped);
    if (i < 0) {
      r.outcome = SearchOutcome::all_skipped;
      return r;
    }
    const StepVerdict v = judge_with_retry<StepVerdict>(
        [&](int attempt) {
          const SearchStep s{i, attempt, judge(i, attempt)};
          record(s);
          return s.verdict;
        },
        [](const StepVerdict& x) { return x == StepVerdict::undecided; });
    switch (v) {
      case StepVerdict::moved: r.moved = i; break;
      case StepVerdict::same: r.good = i; break;
      case StepVerdict::unbuildable:
        skipped.insert(i);
        r.skipped.push_back(i);
        break;
      case StepVerdict::undecided:
        r.outcome = SearchOutcome::undecided;
        r.stuck_at = i;
        return r;
    }
  }
  r.outcome = SearchOutcome::found;
  r.first_moved = r.moved;
  return r;
}

int max_steps(int n) {
  int steps = 0;
  for (int span = 1; span < n - 1; span *= 2) ++steps;
  return steps;
}

}  // namespace dpscale::bisect
