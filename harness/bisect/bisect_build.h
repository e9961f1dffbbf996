// bisect_build.h — one revision's trainers for `dpscale bisect`: a detached git worktree of the
// commit and a CPU-only build directory beside it under --work, building only the trainers the
// config's modes need (as scripts/ci-ab.sh builds its baseline), through ccache where it is on
// PATH. Both are kept: a second bisect over the same revisions reuses them, and a build of
// unchanged sources is then a no-op.
//
//   WORK/<id, 12 characters>/src        the worktree
//   WORK/<id>/src/build                 its build directory (bin/ holds the trainers): inside the
//                                       tree, as a checkout's own build/ is, so that the compiler's
//                                       relative paths match a checkout's and ccache (base_dir
//                                       above both) serves the files no commit changed
//   WORK/<id>/build.log                 what cmake said, appended per attempt
#pragma once

#include <string>
#include <vector>

#include "harness/bisect/bisect_repo.h"

namespace dpscale::bisect {

struct BuildPlan {
  std::string repo;                  // the repository's top
  std::string work;                  // --work (absolute)
  std::vector<std::string> targets;  // the trainers' CMake targets
  int jobs = 2;                      // cmake --build -j
  double timeout_s = 3600;           // per cmake call
};

struct BuildOutcome {
  bool ok = false;
  std::string bin_dir;  // ok: the build's bin/
  std::string log;      // build.log
  std::string why;      // not ok: what failed, in a few words
  double seconds = 0;
};

BuildOutcome build_revision(const BuildPlan& plan, const Commit& c);

// The directory of commit `c` under WORK (WORK/<id, 12 characters>), and its trainers' bin/.
std::string revision_dir(const BuildPlan& plan, const Commit& c);
std::string bin_dir(const BuildPlan& plan, const Commit& c);

}  // namespace dpscale::bisect
