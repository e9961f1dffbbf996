// bisect.h — `dpscale bisect GOOD BAD CONFIG`: the first revision whose scaling curve moved.
//
// Lists the first-parent commits GOOD..BAD, builds GOOD's and BAD's trainers (bisect_build.h:
// a worktree and a CPU-only build directory per commit under --work, kept and reused) and runs
// `dpscale ab CONFIG` with A = GOOD and B = BAD (harness/ab/ab.h, called in this process). The
// curves BAD moved on, and which way (a regression, else an improvement), are what the search
// follows (bisect_verdict.h); then it builds midpoints and runs ab with A = GOOD and B = the
// midpoint, a binary search (bisect_search.h) down to the first revision that moved as BAD did.
// A session that stays undecided is run once more with twice the rounds; a revision that does
// not build is skipped, its neighbour tried instead. Each step is printed as it ends: the
// revision, its verdict and the effect on the curves followed; the last line names the revision.
//
// Exit status: 0 the revision is named; 2 bad input (one line, before any build: no repository,
// GOOD or BAD no commit, GOOD not an ancestor of BAD or the same commit, a config ab refuses,
// a --work that is a file, --max-rounds below --rounds), and after the builds when GOOD or BAD
// does not build; 3 no revision named: BAD is the same as GOOD, a step stayed undecided after
// its retry, or every revision left in the range does not build (the range is said);
// 130 interrupted.
#pragma once

#include <string>
#include <vector>

#include "harness/ab/ab.h"
#include "harness/bisect/bisect_repo.h"

namespace dpscale::bisect {

struct BisectOptions {
  std::string good, bad, config_path;
  std::string repo;                 // "" = the repository of the current directory
  std::string work = "bisect-work";  // worktrees, build directories and the sessions' results
  std::string format = "md";        // md | json (the report on stdout; in json the steps go to stderr)
  int jobs = 0;                     // cmake --build -j; 0 = the machine's CPUs
  bool dry_run = false;             // check, list the revisions and stop before any build
  AbOptions ab;                     // rounds, max_rounds, gate (alpha, min_effect, python, script), sweep
};

// What the checks found: the repository, the revisions (GOOD first, BAD last), the trainers' targets.
struct BisectPlan {
  std::string repo, work, config_path;
  std::vector<Commit> commits;
  std::vector<std::string> targets;
};

// Every check, before anything is built or made; throws InputError naming the problem.
BisectPlan check_bisect_inputs(BisectOptions& o);

// Runs the bisection and prints its steps and result. Returns the exit status.
int run_bisect(BisectOptions o);

// The A/B options of a step's session: ab's own at its first attempt (0); at the retry of an
// undecided step (attempt 1), twice the rounds, --rounds and --max-rounds both (at most kMaxRepeats).
AbOptions attempt_options(const AbOptions& ab, int attempt);

}  // namespace dpscale::bisect
